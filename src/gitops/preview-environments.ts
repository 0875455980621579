/**
 * The `previews` layer of a cluster that enables it (scaffold.yaml `previews`,
 * cluster `enable_layers: [previews]`): `clusters/<name>/previews/` with the
 * Flux Operator's ResourceSetInputProvider (the open pull/merge requests
 * carrying the label, at most `limit`), the ResourceSet rendering per request
 * a Namespace `preview-pr-<id>`, a GitRepository pinned to the request's
 * commit and a Kustomization applying `path` of it into that namespace, and
 * the ServiceAccount the operator applies them as, whose ClusterRole grants
 * exactly namespaces, gitrepositories and kustomizations.
 *
 * Two templating layers meet in resource-set.yaml: Flux's postBuild
 * substitution of the previews Kustomization runs first, on the ResourceSet as
 * a whole (`${cluster_domain}` comes from cluster-config), then the operator
 * renders `<< inputs.* >>` per request. verify checks both, in that order.
 */
import { ValidationError } from '../errors.js';
import { FORGE_DESCRIPTORS } from '../model/forges.js';
import type { PlannedFluxInstance } from './flux-instance-plan.js';
import type { PlannedLayer } from './planned-layers.js';
import { FLUX_NAMESPACE, PLATFORM_DESCRIPTOR_PATH } from './platform-descriptor.js';
import { PREVIEW_PROVIDER_TYPES, PREVIEWS_LAYER, type PreviewForge, type PreviewsSpec } from './previews-schema.js';
import { CLUSTER_CONFIG_NAME } from './reference-environment.js';
import type { RepoReader } from './repo-reader.js';
import { toYaml } from './yaml.js';

/** The ServiceAccount (in flux-system) the operator applies each preview's objects as. */
export const PREVIEW_SERVICE_ACCOUNT = 'preview-deployer';
/** Its ClusterRole and ClusterRoleBinding. */
export const PREVIEW_CLUSTER_ROLE = 'gitops-scaffolder-preview-deployer';
/** What server-side apply, drift correction and garbage collection of the three kinds need. */
export const PREVIEW_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] as const;
/** The three kinds a preview consists of, as RBAC names them. */
export const PREVIEW_RESOURCES = [
  { apiGroup: '', resource: 'namespaces' },
  { apiGroup: 'source.toolkit.fluxcd.io', resource: 'gitrepositories' },
  { apiGroup: 'kustomize.toolkit.fluxcd.io', resource: 'kustomizations' },
] as const;

const FIELD = `${PLATFORM_DESCRIPTOR_PATH}.previews`;
const INPUT_PROVIDER = 'preview-requests';
const PREVIEW_NAME = 'preview-pr-<< inputs.id >>';

/** Inputs of {@link planPreviews}. */
export interface PreviewsInput {
  readonly spec: PreviewsSpec;
  readonly reader: RepoReader;
  readonly clusterName: string;
  readonly fluxInstance: PlannedFluxInstance | undefined;
  /** The layer everything else depends on, when the platform names one the cluster gets. */
  readonly bootstrapLayer: string | undefined;
}

/** The planned layer and its files (relative to the cluster directory). */
export interface PlannedPreviews {
  readonly layer: PlannedLayer;
  readonly files: readonly [string, string][];
}

/**
 * Plans the previews layer for a cluster that enabled it.
 * @throws ValidationError when the cluster has no Flux Operator (no FluxInstance),
 *   the forge or the repository's https address cannot be told, or `path` is not
 *   a Kustomize root of the repository
 */
export async function planPreviews(input: PreviewsInput): Promise<PlannedPreviews> {
  const { spec, clusterName, fluxInstance } = input;
  if (fluxInstance === undefined) {
    throw new ValidationError([
      {
        field: 'cluster.enable_layers',
        message: `previews are run by the Flux Operator (ResourceSet, ResourceSetInputProvider), which this cluster does not have: render it with a FluxInstance (--flux-instance, or fluxInstance.enabled in ${PLATFORM_DESCRIPTOR_PATH}) or leave previews out`,
      },
    ]);
  }
  const url = spec.url ?? (fluxInstance.sync.kind === 'GitRepository' && fluxInstance.sync.url.startsWith('https://') ? fluxInstance.sync.url : undefined);
  if (url === undefined) {
    throw new ValidationError([
      {
        field: `${FIELD}.url`,
        message: `the FluxInstance syncs ${fluxInstance.sync.url}, which is not a repository's https:// address: give the repository whose requests are previewed`,
      },
    ]);
  }
  const forge = spec.forge ?? forgeOfUrl(url);
  if (forge === undefined) {
    throw new ValidationError([
      {
        field: `${FIELD}.forge`,
        message: `cannot tell the forge of ${url} from its host: set github or gitlab (the Flux Operator lists GitHub pull requests and GitLab merge requests only)`,
      },
    ]);
  }
  const path = spec.path.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  if ((await input.reader.read(`${path}/kustomization.yaml`)) === undefined && (await input.reader.read(`${path}/kustomization.yml`)) === undefined) {
    throw new ValidationError([
      {
        field: `${FIELD}.path`,
        message: `${path}/ has no kustomization.yaml in the repository: a preview applies that Kustomize root of the request's commit`,
      },
    ]);
  }
  const dir = `clusters/${clusterName}/${PREVIEWS_LAYER}`;
  const dependsOn = input.bootstrapLayer !== undefined ? [input.bootstrapLayer] : [];
  const files: [string, string][] = [
    [
      `${PREVIEWS_LAYER}/kustomization.yaml`,
      toYaml(
        { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: ['rbac.yaml', 'input-provider.yaml', 'resource-set.yaml'] },
        `Previews per ${forge === 'github' ? 'pull' : 'merge'} request of cluster ${clusterName}. Generated by gitops-scaffolder.`,
      ),
    ],
    [`${PREVIEWS_LAYER}/rbac.yaml`, renderRbac()],
    [`${PREVIEWS_LAYER}/input-provider.yaml`, renderInputProvider(spec, forge, url)],
    [`${PREVIEWS_LAYER}/resource-set.yaml`, renderResourceSet(spec, url, path)],
  ];
  const layer: PlannedLayer = {
    name: PREVIEWS_LAYER,
    dependsOn,
    file: `${PREVIEWS_LAYER}.yaml`,
    path: dir,
    sealedSources: [],
    optional: true,
    render: () => renderPreviewsKustomization(clusterName, dir, dependsOn, fluxInstance.syncKind),
  };
  return { layer, files };
}

/** github or gitlab by the URL's host, as the forge table recognises them. */
function forgeOfUrl(url: string): PreviewForge | undefined {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
  return (Object.keys(PREVIEW_PROVIDER_TYPES) as PreviewForge[]).find((forge) => FORGE_DESCRIPTORS[forge].recognisesHost(host));
}

function renderPreviewsKustomization(clusterName: string, dir: string, dependsOn: readonly string[], syncKind: string): string {
  return toYaml(
    {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: PREVIEWS_LAYER, namespace: FLUX_NAMESPACE },
      spec: {
        ...(dependsOn.length > 0 ? { dependsOn: dependsOn.map((name) => ({ name })) } : {}),
        interval: '10m',
        retryInterval: '1m',
        timeout: '5m',
        prune: true,
        sourceRef: { kind: syncKind, name: FLUX_NAMESPACE, namespace: FLUX_NAMESPACE },
        path: `./${dir}`,
        wait: true,
        postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: CLUSTER_CONFIG_NAME }] },
      },
    },
    `Layer previews of cluster ${clusterName}: an environment per labelled request, run by the Flux Operator. Generated by gitops-scaffolder.`,
  );
}

function renderRbac(): string {
  const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: PREVIEW_SERVICE_ACCOUNT, namespace: FLUX_NAMESPACE } };
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: PREVIEW_CLUSTER_ROLE },
    rules: PREVIEW_RESOURCES.map(({ apiGroup, resource }) => ({ apiGroups: [apiGroup], resources: [resource], verbs: [...PREVIEW_VERBS] })),
  };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: PREVIEW_CLUSTER_ROLE },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: PREVIEW_CLUSTER_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: PREVIEW_SERVICE_ACCOUNT, namespace: FLUX_NAMESPACE }],
  };
  return [
    toYaml(account, 'The identity the Flux Operator applies each preview as (ResourceSet serviceAccountName).'),
    toYaml(role, 'Exactly what a preview is made of: its Namespace, GitRepository and Kustomization. Nothing else (verify checks it).'),
    toYaml(binding),
  ].join('---\n');
}

function renderInputProvider(spec: PreviewsSpec, forge: PreviewForge, url: string): string {
  return toYaml(
    {
      apiVersion: 'fluxcd.controlplane.io/v1',
      kind: 'ResourceSetInputProvider',
      metadata: { name: INPUT_PROVIDER, namespace: FLUX_NAMESPACE },
      spec: {
        type: PREVIEW_PROVIDER_TYPES[forge],
        url,
        secretRef: { name: spec.secretRef },
        filter: { labels: [spec.label], limit: spec.limit },
      },
    },
    `The open requests labelled ${JSON.stringify(spec.label)}, at most ${spec.limit}. Secret flux-system/${spec.secretRef} (username, password: a token that reads the requests and the repository) is created with the cluster, never in Git.`,
  );
}

function renderResourceSet(spec: PreviewsSpec, url: string, path: string): string {
  const namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: PREVIEW_NAME, labels: { 'gitops-scaffolder.io/preview': '<< inputs.id | quote >>' } },
  };
  const repository = {
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'GitRepository',
    metadata: { name: PREVIEW_NAME, namespace: FLUX_NAMESPACE },
    spec: { interval: spec.interval, url, ref: { commit: '<< inputs.sha >>' }, secretRef: { name: spec.secretRef } },
  };
  const kustomization = {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: PREVIEW_NAME, namespace: FLUX_NAMESPACE },
    spec: {
      interval: spec.interval,
      retryInterval: '1m',
      timeout: spec.timeout,
      prune: true,
      wait: true,
      sourceRef: { kind: 'GitRepository', name: PREVIEW_NAME },
      path: `./${path}`,
      targetNamespace: PREVIEW_NAME,
      postBuild: {
        // Flux substitutes ${cluster_domain} when it applies this ResourceSet; the operator then fills in the request.
        substitute: { preview_id: '<< inputs.id | quote >>', preview_namespace: PREVIEW_NAME, preview_domain: 'pr-<< inputs.id >>.${cluster_domain}' },
        substituteFrom: [{ kind: 'ConfigMap', name: CLUSTER_CONFIG_NAME }],
      },
    },
  };
  return toYaml(
    {
      apiVersion: 'fluxcd.controlplane.io/v1',
      kind: 'ResourceSet',
      metadata: { name: PREVIEWS_LAYER, namespace: FLUX_NAMESPACE },
      spec: {
        inputsFrom: [{ apiVersion: 'fluxcd.controlplane.io/v1', kind: 'ResourceSetInputProvider', name: INPUT_PROVIDER }],
        serviceAccountName: PREVIEW_SERVICE_ACCOUNT,
        resources: [namespace, repository, kustomization],
      },
    },
    'Per request: a Namespace preview-pr-<id>, a GitRepository pinned to its commit and a Kustomization into the namespace.\n' +
      'Flux substitutes ${var} in this file first; the Flux Operator renders << inputs.* >> per request afterwards.',
  );
}
