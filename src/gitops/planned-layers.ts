/**
 * The layers a render writes, found one of two ways: the platform's layer
 * catalog (scaffold.yaml `layers`, selected by the cluster's attributes) or,
 * without one, the reference environment's own Flux Kustomizations. Both end
 * as the same PlannedLayer so the rest of the render does not care which.
 */
import { isMap, isSeq, parseDocument, YAMLMap } from 'yaml';
import { ValidationError } from '../errors.js';
import type { ClusterSpec } from '../model/cluster-spec.js';
import { renderCatalogKustomization, substitutionSourcesOf } from './catalog-kustomization.js';
import { rewriteIdentity } from './cluster-identity.js';
import { KUSTOMIZATION_FILE_NAMES } from './cluster-ownership.js';
import type { SyncKind } from './flux-instance.js';
import { expandLayerPath, selectLayers, type ResolvedAttributes } from './layer-catalog.js';
import { FLUX_NAMESPACE, PLATFORM_DESCRIPTOR_PATH, type PlatformDescriptor } from './platform-descriptor.js';
import { CLUSTER_CONFIG_NAME, type ReferenceEnvironment, type ReferenceLayer } from './reference-environment.js';
import type { RepoReader } from './repo-reader.js';
import { documentToYaml } from './yaml.js';

const REQUIRED_SPEC_DEFAULTS: Readonly<Record<string, unknown>> = {
  prune: true,
  interval: '10m',
  retryInterval: '1m',
  timeout: '5m',
};

/** The layer's Flux Kustomization for the new cluster, comments and order of the reference kept. */
function renderLayerKustomization(layer: ReferenceLayer, reference: ReferenceEnvironment, cluster: ClusterSpec, syncKind?: SyncKind): string {
  // Identity is rewritten before the new values are set, so a new value that
  // contains an old one (a domain below the reference's) is not rewritten again.
  const doc = parseDocument(rewriteIdentity(documentToYaml(layer.document), reference.identity, cluster));
  doc.setIn(['spec', 'path'], `./clusters/${cluster.name}/${layer.dir}`);
  // A FluxInstance's sync creates the flux-system source; a layer reading it follows its kind.
  if (
    syncKind &&
    doc.getIn(['spec', 'sourceRef', 'name']) === FLUX_NAMESPACE &&
    (doc.getIn(['spec', 'sourceRef', 'namespace']) ?? FLUX_NAMESPACE) === FLUX_NAMESPACE
  ) {
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
  const hasConfig = isSeq(sources) && sources.items.some((item) => isMap(item) && item.get('kind') === 'ConfigMap' && item.get('name') === CLUSTER_CONFIG_NAME);
  if (!hasConfig) {
    const entry = new YAMLMap();
    entry.set('kind', 'ConfigMap');
    entry.set('name', CLUSTER_CONFIG_NAME);
    if (isSeq(sources)) sources.add(entry);
    else doc.setIn(['spec', 'postBuild', 'substituteFrom'], [entry]);
  }
  return documentToYaml(doc);
}

/** A layer the render plans to write, whichever way it was found. */
export interface PlannedLayer {
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
  /** Opt-in: suspended unless the cluster enables it (optional-layers.ts). */
  readonly optional?: boolean;
  readonly render: () => string;
}

/** The layers of a platform without a catalog: the reference's Flux Kustomizations, each over an overlay. */
export function referenceLayers(reference: ReferenceEnvironment, cluster: ClusterSpec, syncKind: SyncKind | undefined): PlannedLayer[] {
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
  for (const name of KUSTOMIZATION_FILE_NAMES) {
    if ((await reader.read(`${dir}/${name}`)) !== undefined) return true;
  }
  return false;
}

/** The layers the catalog selects for the cluster, with their paths checked against the repository. */
export async function catalogLayers(
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
        throw new ValidationError([
          {
            field: `${field}.overlay`,
            message: `${reference.root}/${spec.overlay}/kustomization.yaml does not exist: the reference environment has no such overlay`,
          },
        ]);
      }
      path = `clusters/${cluster.name}/${spec.overlay}`;
    } else {
      path = expandLayerPath(spec.path!, attributes);
      if (!(await hasKustomization(reader, path))) {
        throw new ValidationError([
          {
            field: `${field}.path`,
            message: `${path}/ (from ${spec.path}) has no kustomization.yaml in the repository: the platform lacks this layer for the cluster's attributes`,
          },
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
      ...(spec.optional === true ? { optional: true } : {}),
      render: () =>
        renderCatalogKustomization({
          layer: spec,
          defaults: descriptor.layerDefaults,
          path,
          dependsOn,
          clusterName: cluster.name,
          ...(syncKind ? { syncKind } : {}),
        }),
    });
  }
  return { layers, skipped: selection.skipped };
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
