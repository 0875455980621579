/**
 * Reading the reference environment (`clusters/<reference>/`), the template every
 * new cluster is generated from: its layers (the Flux Kustomizations in `flux/`,
 * unless the platform has a layer catalog), its identity (the cluster-config
 * ConfigMap) and the files that carry over.
 */
import { parseDocument, type Document } from 'yaml';
import { NotFoundError, ValidationError } from '../errors.js';
import type { ClusterIdentity } from './cluster-identity.js';
import type { RepoReader } from './repo-reader.js';
import { parseStrictYamlDocuments } from '../model/strict-yaml.js';
import { parseYamlDocuments } from './yaml.js';
import { isRecord } from '../model/is-record.js';
import { LruMap } from '../lru-map.js';

/** The ConfigMap every layer substitutes from. */
export const CLUSTER_CONFIG_NAME = 'cluster-config';

/** One Flux Kustomization of the reference, i.e. one layer of the platform. */
export interface ReferenceLayer {
  /** The Kustomization's name, e.g. `apps`. */
  readonly name: string;
  /** The layer's directory under the cluster path, e.g. `apps`. */
  readonly dir: string;
  /** Names of the Kustomizations it depends on. */
  readonly dependsOn: readonly string[];
  /** File under `flux/` that holds it, e.g. `apps.yaml`. */
  readonly file: string;
  /** The parsed document, comments kept, to be rewritten for the new cluster. */
  readonly document: Document;
}

/** Everything the generator takes from the reference environment. */
export interface ReferenceEnvironment {
  readonly name: string;
  /** `clusters/<reference>` */
  readonly root: string;
  readonly identity: ClusterIdentity;
  readonly layers: readonly ReferenceLayer[];
  /** `flux/` file holding the cluster-config ConfigMap, e.g. `cluster-config.yaml`. */
  readonly configMapFile: string;
  readonly configMap: Document;
  /** Order of `flux/kustomization.yaml`'s resources, as the reference lists them. */
  readonly fluxResources: readonly string[];
  /** Files under `flux/` (relative to it) holding a Flux Kustomization, whether or not read as layers. */
  readonly fluxKustomizationFiles: ReadonlySet<string>;
  /** Every file of the reference, by path relative to `root`. */
  readonly files: ReadonlyMap<string, string>;
}

/** How the reference's Flux Kustomizations are read. */
export interface LoadReferenceOptions {
  /**
   * `flux` (the default): they are the platform's layers, each applying an
   * overlay directly under the reference. `catalog`: the platform's layers come
   * from its layer catalog; the reference's own Kustomizations are only its own
   * selection and are not read as layers.
   */
  readonly layers?: 'flux' | 'catalog';
}

/**
 * Loads and checks the reference environment.
 * @throws NotFoundError when `clusters/<reference>` does not exist
 * @throws ValidationError when its flux/ directory lacks the ConfigMap or a layer is malformed
 */
export async function loadReferenceEnvironment(reader: RepoReader, reference: string, options: LoadReferenceOptions = {}): Promise<ReferenceEnvironment> {
  const fromFlux = (options.layers ?? 'flux') === 'flux';
  const root = `clusters/${reference}`;
  const paths = await reader.list(root);
  if (paths.length === 0) {
    throw new NotFoundError(`reference environment ${root}/ does not exist in the repository (set --reference / REFERENCE_ENVIRONMENT)`);
  }
  const files = new Map<string, string>();
  for (const path of paths) files.set(path.slice(root.length + 1), (await reader.read(path)) ?? '');
  const key = JSON.stringify([reference, fromFlux, [...files]]);
  return interpreted.remember(key, () => interpretReference(reference, files, fromFlux));
}

/**
 * Reference environments interpreted, by their name, layer mode and files:
 * a batch run renders many clusters from one reference, and each render's
 * parse of it cost 20-25 ms of a cluster's CPU. What is kept is only read
 * afterwards (its documents are printed, then parsed again for each cluster);
 * a few references' worth of text.
 */
const interpreted = new LruMap<string, ReferenceEnvironment>(4 * 1024 * 1024, (key) => key.length);

function interpretReference(reference: string, files: ReadonlyMap<string, string>, fromFlux: boolean): ReferenceEnvironment {
  const root = `clusters/${reference}`;
  const invalid = (file: string, message: string) => new ValidationError([{ field: `${root}/${file}`, message }]);
  // The ConfigMap, the Flux Kustomizations and flux/kustomization.yaml are interpreted here (identity,
  // path, dependsOn, resources) and re-emitted with edits, so they are plain data only (no aliases,
  // anchors, merge keys or custom tags: model/strict-yaml.ts); what the render checks is then what it
  // writes and what Flux applies. The layers' own manifests (HelmRelease values and the like) are
  // copied for kustomize and Flux, whose YAML readers resolve anchors themselves: they keep theirs.
  const strict = (rel: string, text: string): void => {
    const read = parseStrictYamlDocuments(text, `${root}/${rel}`);
    if (!read.ok) throw new ValidationError(read.issues);
  };
  const layers: ReferenceLayer[] = [];
  const fluxKustomizationFiles = new Set<string>();
  let configMapFile: string | undefined;
  let configMap: Document | undefined;
  for (const [rel, text] of files) {
    if (!rel.startsWith('flux/') || !/\.ya?ml$/.test(rel) || rel === 'flux/kustomization.yaml') continue;
    const objects = parseYamlDocuments(text, `${root}/${rel}`);
    if (objects.length !== 1) {
      if (objects.some((o) => isRecord(o) && (o.kind === 'ConfigMap' || o.kind === 'Kustomization'))) {
        throw invalid(rel, 'must hold exactly one object (one Kustomization or the ConfigMap per file)');
      }
      continue;
    }
    const object = objects[0];
    if (!isRecord(object)) continue;
    const metadata = isRecord(object.metadata) ? object.metadata : {};
    const file = rel.slice('flux/'.length);
    if (object.kind === 'ConfigMap' && metadata.name === CLUSTER_CONFIG_NAME) {
      strict(rel, text);
      configMapFile = file;
      configMap = parseDocument(text);
      continue;
    }
    if (object.kind !== 'Kustomization' || typeof object.apiVersion !== 'string' || !object.apiVersion.startsWith('kustomize.toolkit.fluxcd.io/')) continue;
    strict(rel, text);
    fluxKustomizationFiles.add(file);
    if (!fromFlux) continue;
    const spec = isRecord(object.spec) ? object.spec : {};
    const path = String(spec.path ?? '');
    const prefix = `./${root}/`;
    const dir = path.startsWith(prefix) ? path.slice(prefix.length).replace(/\/+$/, '') : '';
    if (!dir || dir.includes('/')) {
      throw invalid(rel, `spec.path ${JSON.stringify(path)} must be ${prefix}<layer> (a directory directly under the reference environment)`);
    }
    const dependsOn = (Array.isArray(spec.dependsOn) ? spec.dependsOn : []).filter(isRecord).map((d) => String(d.name));
    layers.push({ name: String(metadata.name ?? ''), dir, dependsOn, file, document: parseDocument(text) });
  }
  if (!configMap || !configMapFile) {
    throw invalid(
      'flux/',
      `no ConfigMap ${CLUSTER_CONFIG_NAME} found: the reference must define its identity (cluster_name, cluster_domain, cluster_region) there`,
    );
  }
  if (fromFlux && layers.length === 0) throw invalid('flux/', 'no Flux Kustomization found: the reference has no layers');

  const data = configMap.toJS()?.data as Record<string, unknown> | undefined;
  const identity = { name: data?.cluster_name, domain: data?.cluster_domain, region: data?.cluster_region };
  for (const [key, value] of Object.entries(identity)) {
    if (typeof value !== 'string' || value === '') throw invalid(`flux/${configMapFile}`, `data.cluster_${key} must be set`);
  }
  if (identity.name !== reference)
    throw invalid(`flux/${configMapFile}`, `data.cluster_name is ${JSON.stringify(identity.name)}, expected ${JSON.stringify(reference)}`);

  const fluxKustomization = files.get('flux/kustomization.yaml');
  if (fluxKustomization !== undefined) strict('flux/kustomization.yaml', fluxKustomization);
  const fluxObject = fluxKustomization ? parseYamlDocuments(fluxKustomization, `${root}/flux/kustomization.yaml`)[0] : undefined;
  const fluxResources = isRecord(fluxObject) && Array.isArray(fluxObject.resources) ? fluxObject.resources.map(String) : [];

  layers.sort((a, b) => a.name.localeCompare(b.name));
  return {
    name: reference,
    root,
    identity: identity as ClusterIdentity,
    layers,
    configMapFile,
    configMap,
    fluxResources,
    fluxKustomizationFiles,
    files,
  };
}
