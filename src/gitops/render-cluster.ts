/**
 * Renders a new cluster's Flux tree, `clusters/<name>/`, from the reference
 * environment: identity regenerated, overlays carried over, credentials sealed.
 * Pure apart from reading the repository through the RepoReader port: the result
 * is a FileTree for an edge to write.
 */
import { isMap, isSeq, parseDocument, type Document, YAMLMap, YAMLSeq } from 'yaml';
import { ValidationError } from '../errors.js';
import { CLUSTER_ATTRIBUTES, parseClusterSpec, parseReferenceName, type ClusterSpec } from '../model/cluster-spec.js';
import type { SealingCertificate } from '../sealing/sealing-certificate.js';
import { renderCatalogKustomization, substitutionSourcesOf } from './catalog-kustomization.js';
import { identityLeftovers, rewriteIdentity } from './cluster-identity.js';
import { foreignKustomizeRoots, staleFiles } from './cluster-ownership.js';
import { renderIdentityComponent } from './external-dns-identity.js';
import type { FileTree } from './file-tree.js';
import { FLUX_INSTANCE_FILE, renderFluxInstance, type SyncKind } from './flux-instance.js';
import { renderHostsComponent } from './ingress-hosts.js';
import { ATTRIBUTE_CONFIG_KEYS, expandLayerPath, resolveClusterAttributes, selectLayers, type ResolvedAttributes } from './layer-catalog.js';
import { layerResourceObjects } from './layer-resources.js';
import { FLUX_CREDENTIAL_LAYER, FLUX_NAMESPACE, PLATFORM_DESCRIPTOR_PATH, fluxInstanceSpecSchema, parsePlatformDescriptor, type PlatformDescriptor } from './platform-descriptor.js';
import { parseProvenance, renderProvenance, PROVENANCE_FILE } from './provenance.js';
import type { RandomBytes } from './random-string.js';
import { CLUSTER_CONFIG_NAME, loadReferenceEnvironment, type ReferenceEnvironment, type ReferenceLayer } from './reference-environment.js';
import type { RepoReader } from './repo-reader.js';
import { renderSealedCredentials, type CredentialOutcome, type CredentialRotation } from './sealed-credentials.js';
import { documentToYaml, parseYamlDocuments, toYaml } from './yaml.js';

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
  /** Seal fresh credentials even where sealed ones exist: all (`true`) or the ones named. @default false */
  readonly rotateCredentials?: CredentialRotation;
  readonly random: RandomBytes;
  readonly generatorVersion: string;
  /**
   * Parses the files a layer's overlay applies from outside itself (base/).
   * Upgrading a fleet passes a memoized one so base/ is parsed once, not once per cluster.
   * @default parseYamlDocuments
   */
  readonly parseResources?: (text: string, file: string) => unknown[];
  /** The newest commit that touched the platform (base/, the reference, scaffold.yaml). */
  readonly platformCommit?: string;
  /**
   * Write `flux/flux-instance.yaml`, a FluxInstance for the Flux Operator.
   * @default scaffold.yaml's `fluxInstance.enabled`, or whether the cluster already has one
   */
  readonly fluxInstance?: boolean;
  /** The URL the FluxInstance syncs from; required with one unless scaffold.yaml or the existing FluxInstance gives it. */
  readonly syncUrl?: string;
  /** The ref it syncs: `refs/heads/<branch>` for Git (default refs/heads/main), a tag for OCI (default latest). */
  readonly syncRef?: string;
  /** The Secret in flux-system the FluxInstance pulls a private repository with; default scaffold.yaml's, else the one the cluster has. */
  readonly syncSecret?: string;
}

/** One Flux Kustomization of the rendered cluster. */
export interface RenderedLayer {
  readonly name: string;
  readonly dependsOn: readonly string[];
  /** The repository path it applies, e.g. `clusters/eu-prod-1/apps` or `dns/route53`. */
  readonly path: string;
}

/** What a render produced. */
export interface RenderResult {
  readonly cluster: ClusterSpec;
  /** `clusters/<name>`: the one path Flux is pointed at. */
  readonly gitopsPath: string;
  /** The pass actually rendered: `all` when the cluster already had its full tree. */
  readonly pass: RenderPass;
  /** Every file under gitopsPath this render writes, by repository-relative path. */
  readonly tree: FileTree;
  /**
   * Repository-relative paths, sorted, that an earlier render wrote under
   * gitopsPath and this one no longer produces: the only files to delete.
   * Any other file there (flux bootstrap's flux-system/) is not the render's.
   */
  readonly stale: readonly string[];
  /** Top-level directories of gitopsPath that are Kustomize roots the render does not own, listed in its entry point (`flux-system`). */
  readonly foreignRoots: readonly string[];
  /** The layers written, dependencies first. */
  readonly layers: readonly RenderedLayer[];
  /** Catalog layers this cluster does not get (by its attributes), in catalog order; empty without a catalog. */
  readonly skippedLayers: readonly string[];
  /** The cluster's catalog attributes, given or defaulted; empty when the platform declares none. */
  readonly attributes: ResolvedAttributes;
  /** Whether `flux/flux-instance.yaml` was written. */
  readonly fluxInstance: boolean;
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

/**
 * What `flux bootstrap` writes into a cluster path: that cluster's own Flux
 * installation and sync. Never carried over from the reference, and never the
 * render's to write or remove.
 */
const FLUX_BOOTSTRAP_DIR = 'flux-system';

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
function renderLayerKustomization(layer: ReferenceLayer, reference: ReferenceEnvironment, cluster: ClusterSpec, syncKind?: SyncKind): string {
  // Identity is rewritten before the new values are set, so a new value that
  // contains an old one (a domain below the reference's) is not rewritten again.
  const doc = parseDocument(rewriteIdentity(documentToYaml(layer.document), reference.identity, cluster));
  doc.setIn(['spec', 'path'], `./clusters/${cluster.name}/${layer.dir}`);
  // A FluxInstance's sync creates the flux-system source; a layer reading it follows its kind.
  if (syncKind && doc.getIn(['spec', 'sourceRef', 'name']) === FLUX_NAMESPACE && (doc.getIn(['spec', 'sourceRef', 'namespace']) ?? FLUX_NAMESPACE) === FLUX_NAMESPACE) {
    doc.setIn(['spec', 'sourceRef', 'kind'], syncKind);
  }
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

function renderClusterConfig(reference: ReferenceEnvironment, cluster: ClusterSpec, attributes: ResolvedAttributes, descriptor: PlatformDescriptor): string {
  const doc = parseDocument(rewriteIdentity(documentToYaml(reference.configMap), reference.identity, cluster));
  doc.setIn(['data', 'cluster_name'], cluster.name);
  doc.setIn(['data', 'cluster_domain'], cluster.domain);
  doc.setIn(['data', 'cluster_region'], cluster.region);
  // The catalog attributes, for manifests that differ by them in values rather than layers.
  for (const name of CLUSTER_ATTRIBUTES) {
    const value = attributes[name];
    if (value !== undefined) doc.setIn(['data', ATTRIBUTE_CONFIG_KEYS[name]], value);
  }
  // What differs by attribute value in values rather than in layers (a storage class, a gateway class).
  for (const name of CLUSTER_ATTRIBUTES) {
    const value = attributes[name];
    const entries = value !== undefined ? descriptor.attributes?.[name]?.config?.[value] : undefined;
    for (const [key, text] of Object.entries(entries ?? {})) doc.setIn(['data', key], text);
  }
  // Flux re-reconciles every Kustomization substituting from a watched ConfigMap
  // as soon as it changes, instead of waiting out the interval.
  doc.setIn(['metadata', 'labels', 'reconcile.fluxcd.io/watch'], 'Enabled');
  return documentToYaml(doc);
}

/** A layer the render plans to write, whichever way it was found. */
interface PlannedLayer {
  readonly name: string;
  readonly dependsOn: readonly string[];
  /** Its file under `flux/`. */
  readonly file: string;
  /** The cluster's own overlay directory of the layer (relative to the cluster directory), when it has one. */
  readonly dir?: string;
  /** The repository path Flux applies. */
  readonly path: string;
  /** Substitution Secrets it reads that the render seals (their names). */
  readonly sealedSources: readonly string[];
  readonly render: () => string;
}

/** The layers of a platform without a catalog: the reference's Flux Kustomizations, each over an overlay. */
function referenceLayers(reference: ReferenceEnvironment, cluster: ClusterSpec, syncKind: SyncKind | undefined): PlannedLayer[] {
  return orderLayers(reference.layers).map((layer) => ({
    name: layer.name,
    dependsOn: layer.dependsOn,
    file: layer.file,
    dir: layer.dir,
    path: `clusters/${cluster.name}/${layer.dir}`,
    sealedSources: [],
    render: () => renderLayerKustomization(layer, reference, cluster, syncKind),
  }));
}

/** Whether the repository has a Kustomize root at `dir`. */
async function hasKustomization(reader: RepoReader, dir: string): Promise<boolean> {
  for (const name of ['kustomization.yaml', 'kustomization.yml', 'Kustomization']) {
    if ((await reader.read(`${dir}/${name}`)) !== undefined) return true;
  }
  return false;
}

/** The layers the catalog selects for the cluster, with their paths checked against the repository. */
async function catalogLayers(
  reader: RepoReader,
  descriptor: PlatformDescriptor,
  reference: ReferenceEnvironment,
  cluster: ClusterSpec,
  attributes: ResolvedAttributes,
  syncKind: SyncKind | undefined,
): Promise<{ layers: PlannedLayer[]; skipped: readonly string[] }> {
  const selection = selectLayers(descriptor.layers ?? [], attributes);
  const sealed = new Set(descriptor.credentials.filter((c) => c.namespace === FLUX_NAMESPACE).map((c) => c.name));
  const layers: PlannedLayer[] = [];
  for (const { spec, dependsOn } of selection.layers) {
    const field = `${PLATFORM_DESCRIPTOR_PATH}.layers.${spec.name}`;
    let path: string;
    if (spec.overlay !== undefined) {
      if (!reference.files.has(`${spec.overlay}/kustomization.yaml`)) {
        throw new ValidationError([{ field: `${field}.overlay`, message: `${reference.root}/${spec.overlay}/kustomization.yaml does not exist: the reference environment has no such overlay` }]);
      }
      path = `clusters/${cluster.name}/${spec.overlay}`;
    } else {
      path = expandLayerPath(spec.path!, attributes);
      if (!(await hasKustomization(reader, path))) {
        throw new ValidationError([
          { field: `${field}.path`, message: `${path}/ (from ${spec.path}) has no kustomization.yaml in the repository: the platform lacks this layer for the cluster's attributes` },
        ]);
      }
    }
    layers.push({
      name: spec.name,
      dependsOn,
      file: `${spec.name}.yaml`,
      ...(spec.overlay !== undefined ? { dir: spec.overlay } : {}),
      path,
      sealedSources: substitutionSourcesOf(spec, descriptor.layerDefaults)
        .filter((s) => s.kind === 'Secret' && sealed.has(s.name))
        .map((s) => s.name),
      render: () => renderCatalogKustomization({ layer: spec, defaults: descriptor.layerDefaults, path, dependsOn, clusterName: cluster.name, ...(syncKind ? { syncKind } : {}) }),
    });
  }
  return { layers, skipped: selection.skipped };
}

/** The sync URL and ref of a FluxInstance the cluster already has, to keep it on a re-render. */
function existingFluxInstance(text: string | undefined): { url?: string; ref?: string; pullSecret?: string } | undefined {
  if (text === undefined) return undefined;
  let objects: unknown[];
  try {
    objects = parseYamlDocuments(text, FLUX_INSTANCE_FILE);
  } catch {
    return {};
  }
  const sync = (objects[0] as { spec?: { sync?: { url?: unknown; ref?: unknown; pullSecret?: unknown } } } | undefined)?.spec?.sync;
  return {
    ...(typeof sync?.url === 'string' ? { url: sync.url } : {}),
    ...(typeof sync?.ref === 'string' ? { ref: sync.ref } : {}),
    ...(typeof sync?.pullSecret === 'string' ? { pullSecret: sync.pullSecret } : {}),
  };
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
 * The layers are the platform's layer catalog's, selected by the cluster's
 * attributes, when scaffold.yaml has one; otherwise the reference
 * environment's Flux Kustomizations.
 *
 * Re-rendering converges: the same inputs give the same bytes, existing sealed
 * credentials are kept, and asking for the infrastructure pass on a cluster that
 * already has its full tree renders the full tree (never takes layers away).
 * Attributes and a FluxInstance the cluster was rendered with are kept when
 * not given again.
 *
 * @throws ValidationError for a bad cluster spec or attribute, a malformed reference
 *   or descriptor, a catalog layer the repository lacks, credentials to seal
 *   without a certificate, or a FluxInstance without a sync URL
 * @throws NotFoundError when the reference environment does not exist
 */
export async function renderCluster(reader: RepoReader, options: RenderOptions): Promise<RenderResult> {
  const cluster = parseClusterSpec(options.cluster);
  const referenceName = parseReferenceName(options.reference ?? 'development');
  if (cluster.name === referenceName) {
    throw new ValidationError([{ field: 'cluster.name', message: `must differ from the reference environment ${JSON.stringify(referenceName)}, which is the template` }]);
  }
  const descriptor = parsePlatformDescriptor(await reader.read(PLATFORM_DESCRIPTOR_PATH));
  const fromCatalog = descriptor.layers !== undefined;
  const reference = await loadReferenceEnvironment(reader, referenceName, { layers: fromCatalog ? 'catalog' : 'flux' });
  const gitopsPath = `clusters/${cluster.name}`;

  const existing = new Map<string, string>();
  for (const path of await reader.list(gitopsPath)) existing.set(path.slice(gitopsPath.length + 1), (await reader.read(path)) ?? '');
  const previous = parseProvenance(existing.get(PROVENANCE_FILE));
  const pass: RenderPass = options.pass === 'infrastructure' && previous?.pass === 'all' ? 'all' : options.pass;
  const attributes = resolveClusterAttributes(descriptor.attributes, cluster, previous?.cluster ?? {});
  const resolvedCluster: ClusterSpec = { ...cluster, ...Object.fromEntries(CLUSTER_ATTRIBUTES.flatMap((name) => (attributes[name] !== undefined ? [[name, attributes[name]]] : []))) };

  // Flux managed by the Flux Operator: when asked for, when scaffold.yaml enables
  // it, or when the cluster (else the reference, the template) already has one.
  const instanceFile = FLUX_INSTANCE_FILE.slice('flux/'.length);
  const before =
    existingFluxInstance(existing.get(FLUX_INSTANCE_FILE)) ??
    (reference.fluxResources.some((r) => r.replace(/^\.\//, '') === instanceFile) ? existingFluxInstance(reference.files.get(FLUX_INSTANCE_FILE)) : undefined);
  const wantsInstance = options.fluxInstance ?? (descriptor.fluxInstance?.enabled === true || before !== undefined);
  let fluxInstance: { yaml: string; syncKind: SyncKind } | undefined;
  if (wantsInstance) {
    const syncUrl = options.syncUrl ?? descriptor.fluxInstance?.sync.url ?? before?.url;
    if (syncUrl === undefined) {
      throw new ValidationError([
        { field: 'sync-url', message: 'a FluxInstance syncs the cluster from its repository: give the URL Flux pulls from (--sync-url, or fluxInstance.sync.url in scaffold.yaml)' },
      ]);
    }
    const syncRef = options.syncRef ?? (options.syncUrl === undefined ? before?.ref : undefined);
    const pullSecret = options.syncSecret ?? descriptor.fluxInstance?.sync.pullSecret ?? before?.pullSecret;
    fluxInstance = renderFluxInstance(descriptor.fluxInstance ?? fluxInstanceSpecSchema.parse({}), {
      clusterName: cluster.name,
      syncUrl,
      ...(syncRef !== undefined ? { syncRef } : {}),
      ...(pullSecret !== undefined ? { pullSecret } : {}),
    });
  }
  const syncKind = fluxInstance?.syncKind;

  const planned = fromCatalog
    ? await catalogLayers(reader, descriptor, reference, cluster, attributes, syncKind)
    : { layers: referenceLayers(reference, cluster, syncKind), skipped: [] as readonly string[] };
  const layers = planned.layers;
  const included = layers.filter((l) => pass === 'all' || l.dependsOn.length === 0);
  // A layer of the first pass runs before the Sealed Secrets controller: nothing sealed exists yet.
  for (const layer of layers.filter((l) => l.dependsOn.length === 0 && l.sealedSources.length > 0)) {
    throw new ValidationError([
      {
        field: `${PLATFORM_DESCRIPTOR_PATH}.layers.${layer.name}.substituteFrom`,
        message: `layer ${layer.name} has no dependsOn, so it is applied in the first pass, before the Sealed Secrets controller can unseal Secret ${layer.sealedSources.join(', ')}: it cannot substitute from it`,
      },
    ]);
  }
  const overlayDir = (l: PlannedLayer): string[] => (l.dir !== undefined ? [l.dir] : []);
  const includedDirs = new Set(included.flatMap(overlayDir));
  const layerDirs = new Set(fromCatalog ? (descriptor.layers ?? []).flatMap((l) => (l.overlay !== undefined ? [l.overlay] : [])) : layers.flatMap(overlayDir));

  const out = new Map<string, string>();
  const put = (rel: string, content: string) => out.set(`${gitopsPath}/${rel}`, content);

  for (const [rel, text] of reference.files) {
    if (isGeneratedPath(rel) || rel.startsWith(`${FLUX_BOOTSTRAP_DIR}/`)) continue;
    const top = rel.split('/')[0]!;
    if (rel.includes('/') && layerDirs.has(top) && !includedDirs.has(top)) continue;
    // File names follow their content: a reference to `development.yaml` is rewritten, so is the file.
    put(rewriteIdentity(rel, reference.identity, cluster), rewriteIdentity(text, reference.identity, cluster));
  }

  for (const credential of descriptor.credentials) {
    if (credential.layer !== FLUX_CREDENTIAL_LAYER && !layerDirs.has(credential.layer)) {
      throw new ValidationError([
        { field: PLATFORM_DESCRIPTOR_PATH, message: `credential ${credential.namespace}/${credential.name} names layer ${JSON.stringify(credential.layer)}, which the reference environment does not have` },
      ]);
    }
  }
  // Flux's own credentials (the substitution Secret) are sealed with the rest, in the second pass.
  const credentials = descriptor.credentials.filter((c) => (c.layer === FLUX_CREDENTIAL_LAYER ? pass === 'all' : includedDirs.has(c.layer)));
  // A value taken from another credential needs that credential in the same render.
  for (const c of credentials) {
    for (const source of Object.values(c.keys)) {
      if (!('sameAs' in source)) continue;
      const [namespace, name] = source.sameAs.split('/');
      const target = descriptor.credentials.find((o) => o.namespace === namespace && o.name === name)!;
      if (!credentials.includes(target)) {
        throw new ValidationError([
          {
            field: `${PLATFORM_DESCRIPTOR_PATH}.credentials.${c.namespace}/${c.name}`,
            message: `takes ${source.sameAs} from a credential of layer ${target.layer}, which this ${pass === 'all' ? 'cluster does not get' : 'pass does not render'}`,
          },
        ]);
      }
    }
  }
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
  const fluxSealed = credentials.some((c) => c.layer === FLUX_CREDENTIAL_LAYER);

  for (const layer of included) {
    if (layer.dir === undefined) continue;
    const kustomizationRel = `${layer.dir}/kustomization.yaml`;
    const text = reference.files.get(kustomizationRel);
    if (text === undefined) {
      throw new ValidationError([{ field: `${reference.root}/${kustomizationRel}`, message: `layer ${layer.name} has no kustomization.yaml` }]);
    }
    const objects = await layerResourceObjects(carriedOverReader(reader, reference, cluster), `${reference.root}/${layer.dir}`, text, options.parseResources);
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

  for (const layer of included) put(`flux/${layer.file}`, layer.render());
  put(`flux/${reference.configMapFile}`, renderClusterConfig(reference, cluster, attributes, descriptor));
  if (fluxInstance) put(FLUX_INSTANCE_FILE, fluxInstance.yaml);

  // What flux/kustomization.yaml lists. Without a catalog: the reference's order,
  // minus the layers not rendered, plus whatever it lacks. With one: the
  // ConfigMap, the generated Flux objects, what else the reference lists, then
  // the layers in order (the reference's own Kustomizations are its selection).
  const generatedFlux = [...(fluxInstance ? [instanceFile] : []), ...(fluxSealed ? ['sealed'] : [])];
  const notRendered = new Set(fromCatalog ? reference.fluxKustomizationFiles : layers.filter((l) => !included.includes(l)).map((l) => l.file));
  const listed = [...new Set(reference.fluxResources.map((r) => r.replace(/^\.\//, '').replace(/\/+$/, '')))]
    .filter((r) => !notRendered.has(r))
    // Generated when they are rendered, never carried over.
    .filter((r) => (r !== 'sealed' || fluxSealed) && (r !== instanceFile || fluxInstance !== undefined))
    .filter((r) => !fromCatalog || (r !== reference.configMapFile && !generatedFlux.includes(r)));
  const fluxResources = fromCatalog
    ? [reference.configMapFile, ...generatedFlux, ...listed, ...included.map((l) => l.file)]
    : [...listed, ...[reference.configMapFile, ...included.map((l) => l.file), ...generatedFlux].filter((f) => !listed.includes(f))];
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

  // What the render owns decides what it removes and what the entry point lists
  // besides flux/: the Kustomize roots of others (flux-system) stay applied.
  const produced = new Set([...[...out.keys()].map((p) => p.slice(gitopsPath.length + 1)), 'kustomization.yaml', PROVENANCE_FILE]);
  const referencePaths = new Set([...reference.files.keys()].map((rel) => rewriteIdentity(rel, reference.identity, cluster)));
  const referenceDirs = new Set([...referencePaths].filter((rel) => rel.includes('/')).map((rel) => rel.slice(0, rel.indexOf('/'))));
  const stale = staleFiles({
    existing: existing.keys(),
    produced,
    previous,
    // Provenance of a generator that recorded no file list: what this generator
    // would write from this reference, whatever the pass or selection.
    generatorShaped: (rel) => {
      if (rel.startsWith(`${FLUX_BOOTSTRAP_DIR}/`)) return false;
      if (rel === 'kustomization.yaml' || rel === PROVENANCE_FILE || rel.startsWith('flux/') || referencePaths.has(rel)) return true;
      const generated = /^([^/]+)\/(hosts|identity|sealed)\//.exec(rel);
      return generated !== null && referenceDirs.has(generated[1]!);
    },
  });
  const foreignRoots = foreignKustomizeRoots(existing.keys(), produced, stale);
  put(
    'kustomization.yaml',
    toYaml(
      { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [...new Set(['flux', ...foreignRoots])].sort() },
      foreignRoots.length === 0
        ? `Entry point of cluster ${cluster.name}: Flux is pointed at ${gitopsPath}. Lists only the Flux objects; each layer is applied by its own Kustomization. Generated by gitops-scaffolder.`
        : `Entry point of cluster ${cluster.name}: Flux is pointed at ${gitopsPath}. Lists the Flux objects (each layer is applied by its own Kustomization) and the Kustomize roots gitops-scaffolder does not own (${foreignRoots.join(', ')}), which the sync would otherwise prune. Generated by gitops-scaffolder.`,
    ),
  );
  put(
    PROVENANCE_FILE,
    renderProvenance({
      generatorVersion: options.generatorVersion,
      reference: referenceName,
      platformCommit: options.platformCommit ?? 'unknown',
      pass,
      cluster: resolvedCluster,
      files: [...produced],
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
    cluster: resolvedCluster,
    gitopsPath,
    pass,
    tree,
    stale: stale.map((rel) => `${gitopsPath}/${rel}`),
    foreignRoots,
    layers: included.map((l) => ({ name: l.name, dependsOn: l.dependsOn, path: l.path })),
    skippedLayers: planned.skipped,
    attributes,
    fluxInstance: fluxInstance !== undefined,
    credentials: sealed.outcomes,
  };
}
