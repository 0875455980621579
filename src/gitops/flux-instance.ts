/**
 * Flux managed by Flux: a FluxInstance (fluxcd.controlplane.io/v1) for the
 * Flux Operator, instead of `flux bootstrap` (spec 004, "Flux managing Flux").
 * The operator installs the Flux distribution it names and keeps it at the
 * version range, and creates the cluster's sync: a source named flux-system
 * and a Kustomization applying `clusters/<name>`, the one path the cluster's
 * Flux is pointed at. The FluxInstance itself is listed in that path, so a
 * change to it in Git is applied like any other.
 */
import { ValidationError } from '../errors.js';
import { clusterNameSchema, fieldIssuesOf } from '../model/cluster-spec.js';
import { fluxNetworkPolicyPatches } from './flux-network-policy.js';
import { fluxTuningPatches } from './flux-tuning.js';
import { assertSourceWatcherAvailable, SOURCE_WATCHER } from './source-watcher.js';
import { FLUX_NAMESPACE, syncUrlSchema, type FluxInstanceSpec } from './platform-descriptor.js';
import { toYaml } from './yaml.js';

/** The file, relative to the cluster directory. */
export const FLUX_INSTANCE_FILE = 'flux/flux-instance.yaml';

/** The only name the operator reconciles (a CEL rule of the CRD). */
export const FLUX_INSTANCE_NAME = 'flux';

/** The kind of source the sync creates, named flux-system like `flux bootstrap`'s. */
export type SyncKind = 'GitRepository' | 'OCIRepository';

/** Inputs of {@link renderFluxInstance}. */
export interface FluxInstanceOptions {
  readonly clusterName: string;
  /** https://, http:// or ssh:// (a Git repository) or oci:// (an OCI artifact of the repository). */
  readonly syncUrl: string;
  /** Git: a full ref (`refs/heads/main`, the default). OCI: a tag (`latest`, the default). */
  readonly syncRef?: string;
  /**
   * The Secret in flux-system with the credentials to pull a private source
   * (`render --sync-secret`); without one Flux can only read a public one.
   * @default the descriptor's `fluxInstance.sync.pullSecret`
   */
  readonly pullSecret?: string;
  /**
   * The cluster's tree has a Kustomization sourcing from an ExternalArtifact:
   * source-watcher, which produces it, is added to the components.
   */
  readonly externalArtifacts?: boolean;
}

const GIT_REF = /^refs\/(heads|tags)\/(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9._][A-Za-z0-9._/-]*(?<![./])$/;
const OCI_TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/** How a cluster's Flux reaches its source, as its FluxInstance says: what a render reports. */
export interface FluxSyncAccess {
  readonly url: string;
  readonly kind: SyncKind;
  /** The Secret in flux-system with the credentials; absent: Flux pulls anonymously. */
  readonly pullSecret?: string;
  /** `github`: the Secret holds a GitHub App's credentials and Flux pulls with its installation tokens. */
  readonly provider?: 'github';
}

/**
 * The one sentence a render and a run say about the FluxInstance's sync. Named
 * either way: a Secret that does not exist yet, or a pull without one, both
 * leave a cluster whose Flux never becomes Ready, and nothing in the tree says why.
 */
export function fluxSyncNote(sync: FluxSyncAccess): string {
  const source = sync.kind === 'OCIRepository' ? 'OCI repository' : 'repository';
  if (sync.provider === 'github' && sync.pullSecret !== undefined) {
    return `Flux pulls ${sync.url} as a GitHub App, with short-lived installation tokens: Secret flux-system/${sync.pullSecret} must hold its githubAppID, githubAppInstallationID and githubAppPrivateKey (flux-operator create secret githubapp) before the FluxInstance is applied, or its sync never becomes Ready`;
  }
  return sync.pullSecret !== undefined
    ? `Flux pulls ${sync.url} with the credentials of Secret flux-system/${sync.pullSecret}: create it before applying the FluxInstance, or its sync never becomes Ready`
    : `the FluxInstance names no pull Secret: Flux pulls ${sync.url} anonymously, which works only for a public ${source} (name one with --sync-secret or fluxInstance.sync.pullSecret in scaffold.yaml)`;
}

/** The kind of source a sync URL gives. */
export function syncKindOf(url: string): SyncKind {
  return url.startsWith('oci://') ? 'OCIRepository' : 'GitRepository';
}

/**
 * The FluxInstance of one cluster.
 * @throws ValidationError naming `sync-url`, `sync-ref` or `sync-secret` for a bad URL, ref or Secret name
 */
export function renderFluxInstance(
  spec: FluxInstanceSpec,
  options: FluxInstanceOptions,
): { readonly yaml: string; readonly syncKind: SyncKind; readonly sync: FluxSyncAccess } {
  const url = syncUrlSchema.safeParse(options.syncUrl);
  if (!url.success) throw new ValidationError(fieldIssuesOf(url.error, 'sync-url'));
  const kind = syncKindOf(url.data);
  const ref = options.syncRef ?? spec.sync.ref ?? (kind === 'GitRepository' ? 'refs/heads/main' : 'latest');
  if (kind === 'GitRepository' && !GIT_REF.test(ref)) {
    throw new ValidationError([{ field: 'sync-ref', message: `${JSON.stringify(ref)} must be a full Git ref such as refs/heads/main` }]);
  }
  if (kind === 'OCIRepository' && !OCI_TAG.test(ref)) {
    throw new ValidationError([{ field: 'sync-ref', message: `${JSON.stringify(ref)} must be an OCI tag such as latest or a commit SHA` }]);
  }
  const pullSecret = options.pullSecret ?? spec.sync.pullSecret;
  if (pullSecret !== undefined) {
    const name = clusterNameSchema.safeParse(pullSecret);
    if (!name.success) throw new ValidationError(fieldIssuesOf(name.error, 'sync-secret'));
  } else if (url.data.startsWith('ssh://')) {
    // SSH has no anonymous access: source-controller needs the key (identity) and known_hosts from a Secret.
    throw new ValidationError([
      {
        field: 'sync-secret',
        message: `Flux pulls ${url.data} over SSH, which always needs a key: name the Secret in flux-system holding it (identity, identity.pub, known_hosts) with --sync-secret or fluxInstance.sync.pullSecret in scaffold.yaml`,
      },
    ]);
  }
  const provider = spec.sync.provider === 'github' ? 'github' : undefined;
  if (provider === 'github') {
    // The CRD allows provider github only for a GitRepository, and the App's tokens only work over https.
    if (kind !== 'GitRepository' || !/^https:\/\//.test(url.data)) {
      throw new ValidationError([
        {
          field: 'sync-url',
          message: `fluxInstance.sync.provider github (a GitHub App) pulls a Git repository over https; ${url.data} is not one. Give an https:// URL of the repository, or drop the provider`,
        },
      ]);
    }
    if (pullSecret === undefined) {
      throw new ValidationError([
        {
          field: 'sync-secret',
          message:
            'fluxInstance.sync.provider github needs the Secret in flux-system holding the GitHub App (githubAppID, githubAppInstallationID, githubAppPrivateKey): name it with --sync-secret or fluxInstance.sync.pullSecret in scaffold.yaml',
        },
      ]);
    }
  }
  const components: string[] = [...spec.components];
  if (options.externalArtifacts === true && !components.includes(SOURCE_WATCHER)) {
    assertSourceWatcherAvailable(spec.distribution.version, 'a Kustomization of the tree sources from an ExternalArtifact, which only source-watcher produces');
    components.push(SOURCE_WATCHER);
  } else if (spec.components.includes(SOURCE_WATCHER)) {
    assertSourceWatcherAvailable(spec.distribution.version, 'fluxInstance.components lists source-watcher');
  }
  const tuningPatches = fluxTuningPatches(spec.tuning, components, spec.distribution.version);
  const policyPatches = fluxNetworkPolicyPatches(spec.networkPolicy, components, spec.cluster?.networkPolicy);
  const patches = [...tuningPatches, ...policyPatches];
  const object = {
    apiVersion: 'fluxcd.controlplane.io/v1',
    kind: 'FluxInstance',
    metadata: { name: FLUX_INSTANCE_NAME, namespace: FLUX_NAMESPACE },
    spec: {
      distribution: {
        version: spec.distribution.version,
        registry: spec.distribution.registry,
        ...(spec.distribution.artifact !== undefined ? { artifact: spec.distribution.artifact } : {}),
      },
      components,
      ...(spec.cluster !== undefined ? { cluster: { ...spec.cluster } } : {}),
      ...(spec.sharding !== undefined ? { sharding: { key: spec.sharding.key, shards: [...spec.sharding.shards] } } : {}),
      ...(patches.length > 0 ? { kustomize: { patches } } : {}),
      sync: {
        kind,
        url: url.data,
        ref,
        path: `clusters/${options.clusterName}`,
        ...(spec.sync.interval !== undefined ? { interval: spec.sync.interval } : {}),
        ...(pullSecret !== undefined ? { pullSecret } : {}),
        ...(provider !== undefined ? { provider } : {}),
      },
    },
  };
  return {
    syncKind: kind,
    sync: { url: url.data, kind, ...(pullSecret !== undefined ? { pullSecret } : {}), ...(provider !== undefined ? { provider } : {}) },
    yaml: toYaml(
      object,
      [
        `Flux of cluster ${options.clusterName}, installed and kept at version ${spec.distribution.version} by the Flux Operator.`,
        `It syncs ${kind} flux-system (${url.data}, ${ref}) at clusters/${options.clusterName}, which lists this`,
        'file too: a change to it in Git is applied like any other.',
        ...(tuningPatches.length > 0 ? ['spec.kustomize.patches tune the controllers (scaffold.yaml fluxInstance.tuning).'] : []),
        ...(policyPatches.length > 0 ? ["A patch lets Cilium's Gateway reach the webhook receiver through allow-egress (fluxInstance.networkPolicy)."] : []),
        ...(spec.sharding !== undefined
          ? [`spec.sharding runs shard controllers for ${spec.sharding.shards.join(', ')}: only objects labelled ${spec.sharding.key}=<shard> go to them.`]
          : []),
        'Generated by gitops-scaffolder.',
      ].join('\n'),
    ),
  };
}
