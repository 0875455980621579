/**
 * Decommissioning a generated cluster: which files under `clusters/<name>/`
 * are the generator's to delete (those its provenance lists, and provenance
 * itself) and which are someone else's and stay (flux bootstrap's
 * `flux-system/`, a person's file), and what the cluster's Flux does with it.
 *
 * The sync path stays, the same way for every kind of Flux installation: the
 * entry point `clusters/<name>/kustomization.yaml` is rewritten to list only
 * what stays (flux bootstrap's `flux-system/`, a FluxInstance's own file, the
 * roots of others), so the sync finds its path, prunes the layer Kustomizations,
 * and each layer's finalizer deletes what it applied, except objects marked
 * `kustomize.toolkit.fluxcd.io/prune: disabled` (the stateful namespaces and
 * their volumes). Deleting a path outright would leave a FluxInstance's sync
 * failing with "path not found" and prune nothing. Pure apart from reading the
 * repository.
 */
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { parseReferenceName } from '../model/cluster-spec.js';
import { parseProvenance, PROVENANCE_FILE } from '../gitops/provenance.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import type { ClusterSpec } from '../model/cluster-spec.js';
import { FLUX_INSTANCE_FILE } from '../gitops/flux-instance.js';
import { FLUX_OPERATOR_FILE } from '../gitops/flux-operator-release.js';
import { parseYamlDocuments, toYaml } from '../gitops/yaml.js';
import { isRecord } from '../model/is-record.js';
import { clusterEntryOf } from './cluster-registry.js';
import { layerKustomizationOf, objectRefOf, type LayerKustomization, type ObjectRef } from './prune-forecast.js';
import { registeredClusterSpec } from './registered-cluster-spec.js';

/** The directory flux bootstrap writes into a cluster path (its own installation and sync). */
const FLUX_BOOTSTRAP_DIR = 'flux-system';

/** What removing a cluster deletes and leaves. */
export interface RemovalPlan {
  readonly name: string;
  readonly gitopsPath: string;
  /** The cluster as its provenance records it: what the removal run is recorded as. */
  readonly spec: ClusterSpec;
  /** Repository-relative files to delete, sorted. */
  readonly remove: readonly string[];
  /** Repository-relative files that stay because the generator did not write them, sorted. */
  readonly kept: readonly string[];
  /** Whether a bootstrap-written `flux-system/` is among the kept files (reported, never deleted). */
  readonly fluxBootstrap: boolean;
  /**
   * How the cluster's Flux is installed, as the tree shows it: flux bootstrap's
   * `flux-system/`, a FluxInstance the generator wrote (kept, so Flux stays
   * installed), or neither (installed some other way, pointed at the same path).
   */
  readonly flux: 'bootstrap' | 'flux-instance' | 'none';
  /** Repository-relative path → content the removal writes: the entry point listing only what stays. */
  readonly write: ReadonlyMap<string, string>;
  /** The layer Kustomizations the sync prunes; each one's finalizer then deletes what it applied (unless protected). */
  readonly layers: readonly LayerKustomization[];
  /** Every object of the removed `flux/` files: the sync deletes them (the layer Kustomizations, cluster-config, …). */
  readonly syncDeletes: readonly ObjectRef[];
}

/** The entry point that stays: the sync's path keeps existing and lists only what stays. */
function remainingEntryPoint(cluster: string, resources: readonly string[], flux: RemovalPlan['flux']): string {
  const why =
    flux === 'flux-instance'
      ? "It lists only the FluxInstance and the Flux Operator's own HelmRelease, so Flux stays installed and its sync prunes the rest."
      : flux === 'bootstrap'
        ? "It lists only what gitops-scaffolder did not write (flux bootstrap's flux-system/), so Flux stays installed and its sync prunes the rest."
        : 'It lists only what gitops-scaffolder did not write, so a sync pointed at this path prunes the rest instead of failing on a missing path.';
  return toYaml(
    { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [...resources] },
    `Cluster ${cluster} was removed by gitops-scaffolder. ${why} Objects marked kustomize.toolkit.fluxcd.io/prune: disabled (data) stay on the cluster.`,
  );
}

/** The `resources` of an entry point, or none when it is unreadable. */
function entryResources(text: string | undefined, file: string): string[] {
  if (text === undefined) return [];
  try {
    const object = parseYamlDocuments(text, file)[0];
    const resources = isRecord(object) && Array.isArray(object.resources) ? object.resources : [];
    return resources.filter((r): r is string => typeof r === 'string').map((r) => r.replace(/^\.\//, '').replace(/\/+$/, ''));
  } catch {
    return [];
  }
}

/**
 * Plans the removal of `clusters/<name>/`.
 * @throws ValidationError when `name` is not a cluster name or is the reference environment
 * @throws NotFoundError when the cluster does not exist
 * @throws ConflictError when it has no provenance file list (not generated, or by a generator that did not record its files)
 */
export async function planRemoval(reader: RepoReader, name: string, reference: string): Promise<RemovalPlan> {
  const cluster = parseReferenceName(name, 'cluster');
  if (cluster === reference) {
    throw new ValidationError([{ field: 'cluster', message: `${cluster} is the reference environment, the template of every cluster: it is never removed` }]);
  }
  const gitopsPath = `clusters/${cluster}`;
  const existing = await reader.list(gitopsPath);
  if (existing.length === 0) throw new NotFoundError(`${gitopsPath} does not exist in the repository`);
  const provenanceText = await reader.read(`${gitopsPath}/${PROVENANCE_FILE}`);
  const provenance = parseProvenance(provenanceText);
  if (provenance === undefined) {
    throw new ConflictError(
      `${gitopsPath} has no ${PROVENANCE_FILE}: it was not generated by gitops-scaffolder, so nothing in it is the generator's to remove`,
    );
  }
  if (provenance.files === undefined) {
    throw new ConflictError(
      `${gitopsPath}/${PROVENANCE_FILE} does not list the files the generator wrote (an older generator): run upgrade for this cluster first, then remove it`,
    );
  }
  const entryPoint = `${gitopsPath}/kustomization.yaml`;
  const fluxInstance = `${gitopsPath}/${FLUX_INSTANCE_FILE}`;
  const owned = new Set([...provenance.files, PROVENANCE_FILE].map((rel) => `${gitopsPath}/${rel}`));
  // The FluxInstance is Flux itself, and the operator's HelmRelease is what runs it:
  // both stay, like flux bootstrap's flux-system/.
  const ownedInstance = owned.has(fluxInstance) && existing.includes(fluxInstance);
  const fluxSelf = new Set(
    ownedInstance
      ? [FLUX_INSTANCE_FILE, FLUX_OPERATOR_FILE].map((rel) => `${gitopsPath}/${rel}`).filter((path) => owned.has(path) && existing.includes(path))
      : [],
  );
  const remove = existing.filter((path) => owned.has(path) && path !== entryPoint && !fluxSelf.has(path));
  const kept = existing.filter((path) => !owned.has(path) || fluxSelf.has(path));
  const fluxBootstrap = kept.some((path) => path.startsWith(`${gitopsPath}/${FLUX_BOOTSTRAP_DIR}/`));
  const flux: RemovalPlan['flux'] = ownedInstance ? 'flux-instance' : fluxBootstrap ? 'bootstrap' : 'none';

  // What stays listed: the FluxInstance, and every root the entry point listed besides flux/ that stays.
  const stays = (root: string) => kept.some((path) => path === `${gitopsPath}/${root}` || path.startsWith(`${gitopsPath}/${root}/`));
  const roots = entryResources(await reader.read(entryPoint), entryPoint).filter((root) => root !== 'flux' && stays(root));
  // Flux's own installation always: an entry point that left it out would have the sync prune Flux itself.
  const resources = [
    ...new Set([...[...fluxSelf].map((path) => path.slice(gitopsPath.length + 1)), ...(fluxBootstrap ? [FLUX_BOOTSTRAP_DIR] : []), ...roots]),
  ].sort();
  const write = new Map([[entryPoint, remainingEntryPoint(cluster, resources, flux)]]);

  const layers: LayerKustomization[] = [];
  const syncDeletes: ObjectRef[] = [];
  for (const path of remove.filter((p) => p.startsWith(`${gitopsPath}/flux/`) && /\.ya?ml$/.test(p) && !p.endsWith('/kustomization.yaml'))) {
    let objects: unknown[];
    try {
      objects = parseYamlDocuments((await reader.read(path)) ?? '', path);
    } catch {
      continue;
    }
    for (const object of objects) {
      const ref = objectRefOf(object);
      if (ref !== undefined) syncDeletes.push(ref);
      const layer = layerKustomizationOf(object);
      if (layer !== undefined) layers.push(layer);
    }
  }
  const spec = registeredClusterSpec(clusterEntryOf(cluster, provenanceText, { reference }));
  return { name: cluster, gitopsPath, spec, remove, kept, fluxBootstrap, flux, write, layers, syncDeletes };
}
