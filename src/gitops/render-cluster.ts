/**
 * Renders a new cluster's Flux tree, `clusters/<name>/`, from the reference
 * environment: identity regenerated, overlays carried over, credentials sealed.
 * Pure apart from reading the repository through the RepoReader port: the result
 * is a FileTree for an edge to write.
 */
import { isMap, isSeq, parseDocument, type Document, YAMLMap, YAMLSeq } from 'yaml';
import { ValidationError } from '../errors.js';
import { parseClusterSpec, parseReferenceName, type ClusterSpec } from '../model/cluster-spec.js';
import type { SealingCertificate } from '../sealing/sealing-certificate.js';
import { identityLeftovers, rewriteIdentity } from './cluster-identity.js';
import { renderIdentityComponent } from './external-dns-identity.js';
import type { FileTree } from './file-tree.js';
import { renderHostsComponent } from './ingress-hosts.js';
import { layerResourceObjects } from './layer-resources.js';
import { PLATFORM_DESCRIPTOR_PATH, parsePlatformDescriptor } from './platform-descriptor.js';
import { parseProvenance, renderProvenance, PROVENANCE_FILE } from './provenance.js';
import type { RandomBytes } from './random-string.js';
import { CLUSTER_CONFIG_NAME, loadReferenceEnvironment, type ReferenceEnvironment, type ReferenceLayer } from './reference-environment.js';
import type { RepoReader } from './repo-reader.js';
import { renderSealedCredentials, type CredentialOutcome } from './sealed-credentials.js';
import { documentToYaml, toYaml } from './yaml.js';

/**
 * `infrastructure`: the layers without dependsOn (they bring up the Sealed Secrets
 * controller), nothing sealed. `all`: every layer, credentials sealed.
 */
export type RenderPass = 'infrastructure' | 'all';

/** Inputs of {@link renderCluster}. */
export interface RenderOptions {
  /** Unvalidated; checked here. */
  readonly cluster: ClusterSpec;
  /** @default 'development' */
  readonly reference?: string;
  readonly pass: RenderPass;
  /** The cluster's sealing certificate; required when anything must be sealed. */
  readonly certificate?: SealingCertificate;
  /** A caller-supplied `.dockerconfigjson` for the registry pull secret. */
  readonly registryAuth?: string;
  /** Seal fresh credentials even where sealed ones exist. @default false */
  readonly rotateCredentials?: boolean;
  readonly random: RandomBytes;
  readonly generatorVersion: string;
  /** The newest commit that touched the platform (base/, the reference, scaffold.yaml). */
  readonly platformCommit?: string;
}

/** What a render produced. */
export interface RenderResult {
  readonly cluster: ClusterSpec;
  /** `clusters/<name>`: the one path Flux is pointed at. */
  readonly gitopsPath: string;
  /** The pass actually rendered: `all` when the cluster already had its full tree. */
  readonly pass: RenderPass;
  /** Every file under gitopsPath, by repository-relative path. */
  readonly tree: FileTree;
  readonly layers: readonly { readonly name: string; readonly dependsOn: readonly string[] }[];
  readonly credentials: readonly CredentialOutcome[];
}

const REQUIRED_SPEC_DEFAULTS: Readonly<Record<string, unknown>> = {
  prune: true,
  interval: '10m',
  retryInterval: '1m',
  timeout: '5m',
};

// Carried over verbatim (with identity rewritten) unless one of these: the generator owns them.
function isGeneratedPath(rel: string): boolean {
  return rel === 'kustomization.yaml' || rel === PROVENANCE_FILE || rel.startsWith('flux/') || /^[^/]+\/(hosts|identity|sealed)\//.test(rel);
}

/** Adds `value` to the list at `key` of a YAML map document if it is not there yet. */
function ensureListEntry(doc: Document, key: string, value: string): void {
  const existing = doc.get(key);
  if (isSeq(existing)) {
    if (!existing.items.some((item) => String((item as { value?: unknown }).value ?? item) === value)) existing.add(value);
    return;
  }
  const seq = new YAMLSeq();
  seq.add(value);
  doc.set(key, seq);
}

/** Removes `value` from the list at `key` of a YAML map document, and the list if it becomes empty. */
function removeListEntry(doc: Document, key: string, value: string): void {
  const existing = doc.get(key);
  if (!isSeq(existing)) return;
  existing.items = existing.items.filter((item) => String((item as { value?: unknown }).value ?? item).replace(/^\.\//, '').replace(/\/+$/, '') !== value);
  if (existing.items.length === 0) doc.delete(key);
}

/**
 * A reader that serves the reference environment's files as they are carried
 * over (identity rewritten), so what the generator derives from an object in
 * the reference (a host patch's `test` value) matches the file written.
 */
function carriedOverReader(reader: RepoReader, reference: ReferenceEnvironment, cluster: ClusterSpec): RepoReader {
  const prefix = `${reference.root}/`;
  return {
    list: (dir) => reader.list(dir),
    isDirectory: (path) => reader.isDirectory(path),
    async read(path) {
      const text = await reader.read(path);
      return text !== undefined && path.startsWith(prefix) ? rewriteIdentity(text, reference.identity, cluster) : text;
    },
  };
}

/** The layer's Flux Kustomization for the new cluster, comments and order of the reference kept. */
function renderLayerKustomization(layer: ReferenceLayer, reference: ReferenceEnvironment, cluster: ClusterSpec): string {
  // Identity is rewritten before the new values are set, so a new value that
  // contains an old one (a domain below the reference's) is not rewritten again.
  const doc = parseDocument(rewriteIdentity(documentToYaml(layer.document), reference.identity, cluster));
  doc.setIn(['spec', 'path'], `./clusters/${cluster.name}/${layer.dir}`);
  // Every layer must make "applied" mean "ready" and keep converging; fill in what
  // the reference left out rather than emit a Kustomization Flux would treat loosely.
  for (const [field, value] of Object.entries(REQUIRED_SPEC_DEFAULTS)) {
    if (!doc.hasIn(['spec', field])) doc.setIn(['spec', field], value);
  }
  if (!doc.hasIn(['spec', 'healthChecks']) && !doc.hasIn(['spec', 'healthCheckExprs']) && !doc.hasIn(['spec', 'wait'])) {
    doc.setIn(['spec', 'wait'], true);
  }
  const sources = doc.getIn(['spec', 'postBuild', 'substituteFrom']);
  const hasConfig =
    isSeq(sources) && sources.items.some((item) => isMap(item) && item.get('kind') === 'ConfigMap' && item.get('name') === CLUSTER_CONFIG_NAME);
  if (!hasConfig) {
    const entry = new YAMLMap();
    entry.set('kind', 'ConfigMap');
    entry.set('name', CLUSTER_CONFIG_NAME);
    if (isSeq(sources)) sources.add(entry);
    else doc.setIn(['spec', 'postBuild', 'substituteFrom'], [entry]);
  }
  return documentToYaml(doc);
}

function renderClusterConfig(reference: ReferenceEnvironment, cluster: ClusterSpec): string {
  const doc = parseDocument(rewriteIdentity(documentToYaml(reference.configMap), reference.identity, cluster));
  doc.setIn(['data', 'cluster_name'], cluster.name);
  doc.setIn(['data', 'cluster_domain'], cluster.domain);
  doc.setIn(['data', 'cluster_region'], cluster.region);
  // Flux re-reconciles every Kustomization substituting from a watched ConfigMap
  // as soon as it changes, instead of waiting out the interval.
  doc.setIn(['metadata', 'labels', 'reconcile.fluxcd.io/watch'], 'Enabled');
  return documentToYaml(doc);
}

/** Layers in dependency order (dependencies first), ties by name. */
function orderLayers(layers: readonly ReferenceLayer[]): ReferenceLayer[] {
  const byName = new Map(layers.map((l) => [l.name, l]));
  const done = new Set<string>();
  const out: ReferenceLayer[] = [];
  const visit = (layer: ReferenceLayer, path: string[]) => {
    if (done.has(layer.name)) return;
    if (path.includes(layer.name)) {
      throw new ValidationError([{ field: 'reference', message: `layers depend on each other in a cycle: ${[...path, layer.name].join(' -> ')}` }]);
    }
    for (const dep of [...layer.dependsOn].sort()) {
      const target = byName.get(dep);
      if (target) visit(target, [...path, layer.name]);
    }
    done.add(layer.name);
    out.push(layer);
  };
  for (const layer of [...layers].sort((a, b) => a.name.localeCompare(b.name))) visit(layer, []);
  return out;
}

/**
 * Renders `clusters/<name>/` for one pass.
 *
 * Re-rendering converges: the same inputs give the same bytes, existing sealed
 * credentials are kept, and asking for the infrastructure pass on a cluster that
 * already has its full tree renders the full tree (never takes layers away).
 *
 * @throws ValidationError for a bad cluster spec, a malformed reference or descriptor,
 *   or credentials to seal without a certificate
 * @throws NotFoundError when the reference environment does not exist
 */
export async function renderCluster(reader: RepoReader, options: RenderOptions): Promise<RenderResult> {
  const cluster = parseClusterSpec(options.cluster);
  const referenceName = parseReferenceName(options.reference ?? 'development');
  if (cluster.name === referenceName) {
    throw new ValidationError([{ field: 'cluster.name', message: `must differ from the reference environment ${JSON.stringify(referenceName)}, which is the template` }]);
  }
  const reference = await loadReferenceEnvironment(reader, referenceName);
  const descriptor = parsePlatformDescriptor(await reader.read(PLATFORM_DESCRIPTOR_PATH));
  const gitopsPath = `clusters/${cluster.name}`;

  const existing = new Map<string, string>();
  for (const path of await reader.list(gitopsPath)) existing.set(path.slice(gitopsPath.length + 1), (await reader.read(path)) ?? '');
  const previous = parseProvenance(existing.get(PROVENANCE_FILE));
  const pass: RenderPass = options.pass === 'infrastructure' && previous?.pass === 'all' ? 'all' : options.pass;

  const layers = orderLayers(reference.layers);
  const included = layers.filter((l) => pass === 'all' || l.dependsOn.length === 0);
  const includedDirs = new Set(included.map((l) => l.dir));
  const layerDirs = new Set(layers.map((l) => l.dir));

  const out = new Map<string, string>();
  const put = (rel: string, content: string) => out.set(`${gitopsPath}/${rel}`, content);

  for (const [rel, text] of reference.files) {
    if (isGeneratedPath(rel)) continue;
    const top = rel.split('/')[0]!;
    if (rel.includes('/') && layerDirs.has(top) && !includedDirs.has(top)) continue;
    // File names follow their content: a reference to `development.yaml` is rewritten, so is the file.
    put(rewriteIdentity(rel, reference.identity, cluster), rewriteIdentity(text, reference.identity, cluster));
  }

  for (const credential of descriptor.credentials) {
    if (!layerDirs.has(credential.layer)) {
      throw new ValidationError([
        { field: PLATFORM_DESCRIPTOR_PATH, message: `credential ${credential.namespace}/${credential.name} names layer ${JSON.stringify(credential.layer)}, which the reference environment does not have` },
      ]);
    }
  }
  const credentials = descriptor.credentials.filter((c) => includedDirs.has(c.layer));
  const sealed = renderSealedCredentials({
    credentials,
    existing,
    identity: cluster,
    ...(options.certificate ? { certificate: options.certificate } : {}),
    ...(options.registryAuth !== undefined ? { registryAuth: options.registryAuth } : {}),
    rotate: options.rotateCredentials ?? false,
    random: options.random,
  });
  for (const [rel, content] of sealed.files) put(rel, content);

  for (const layer of included) {
    const kustomizationRel = `${layer.dir}/kustomization.yaml`;
    const text = reference.files.get(kustomizationRel);
    if (text === undefined) {
      throw new ValidationError([{ field: `${reference.root}/${kustomizationRel}`, message: `layer ${layer.name} has no kustomization.yaml` }]);
    }
    const objects = await layerResourceObjects(carriedOverReader(reader, reference, cluster), `${reference.root}/${layer.dir}`, text);
    const doc = parseDocument(out.get(`${gitopsPath}/${kustomizationRel}`)!);
    const components = [...renderHostsComponent(objects, cluster.domain), ...renderIdentityComponent(objects, cluster)];
    for (const [rel, content] of components) put(`${layer.dir}/${rel}`, content);
    // The generated directories are listed exactly when they are generated: a
    // reference entry for one this cluster does not get would break the build.
    const generated = (dir: string) => components.some(([rel]) => rel.startsWith(`${dir}/`));
    for (const dir of ['hosts', 'identity'] as const) {
      if (generated(dir)) ensureListEntry(doc, 'components', dir);
      else removeListEntry(doc, 'components', dir);
    }
    if (credentials.some((c) => c.layer === layer.dir)) ensureListEntry(doc, 'resources', 'sealed');
    else removeListEntry(doc, 'resources', 'sealed');
    put(kustomizationRel, documentToYaml(doc));
  }

  for (const layer of included) put(`flux/${layer.file}`, renderLayerKustomization(layer, reference, cluster));
  put(`flux/${reference.configMapFile}`, renderClusterConfig(reference, cluster));
  const excludedFiles = new Set(layers.filter((l) => !includedDirs.has(l.dir)).map((l) => l.file));
  const listed = [...new Set(reference.fluxResources.map((r) => r.replace(/^\.\//, '')))].filter((r) => !excludedFiles.has(r));
  const fluxResources = [
    ...listed,
    ...[reference.configMapFile, ...included.map((l) => l.file)].filter((f) => !listed.includes(f)),
  ];
  for (const rel of listed) {
    const text = reference.files.get(`flux/${rel}`);
    if (text !== undefined && !out.has(`${gitopsPath}/flux/${rel}`)) put(`flux/${rel}`, rewriteIdentity(text, reference.identity, cluster));
  }
  put(
    'flux/kustomization.yaml',
    toYaml(
      { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: fluxResources },
      `Flux objects of cluster ${cluster.name}: its cluster-config and one Kustomization per layer. Generated by gitops-scaffolder.`,
    ),
  );
  put(
    'kustomization.yaml',
    toYaml(
      { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: ['flux'] },
      `Entry point of cluster ${cluster.name}: Flux is pointed at ${gitopsPath}. Lists only the Flux objects; each layer is applied by its own Kustomization. Generated by gitops-scaffolder.`,
    ),
  );
  put(
    PROVENANCE_FILE,
    renderProvenance({
      generatorVersion: options.generatorVersion,
      reference: referenceName,
      platformCommit: options.platformCommit ?? 'unknown',
      pass,
      cluster,
    }),
  );

  // Nothing of the reference's identity may be left behind. Sealed files are
  // generated whole (and ciphertext could match by chance), and provenance names
  // the reference on purpose, so both are skipped.
  for (const [path, content] of [...out].sort(([a], [b]) => a.localeCompare(b))) {
    if (/\/sealed\/sealed-[^/]+\.yaml$/.test(path) || path === `${gitopsPath}/${PROVENANCE_FILE}`) continue;
    const leftovers = identityLeftovers(`${path}\n${content}`, reference.identity, cluster);
    if (leftovers.length > 0) {
      throw new ValidationError([
        { field: path, message: `still contains the reference environment's ${leftovers.map((l) => JSON.stringify(l)).join(', ')} after rendering` },
      ]);
    }
  }

  const tree = new Map([...out].sort(([a], [b]) => a.localeCompare(b)));
  return {
    cluster,
    gitopsPath,
    pass,
    tree,
    layers: included.map((l) => ({ name: l.name, dependsOn: l.dependsOn })),
    credentials: sealed.outcomes,
  };
}
