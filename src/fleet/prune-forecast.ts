/**
 * What Flux's kustomize-controller deletes when a layer Kustomization is
 * deleted, computed the way the controller decides it (fluxcd/kustomize-controller
 * `finalizerShouldDeleteResources` and `deleteObjects`, fluxcd/pkg `ssa.Delete`):
 *
 * - the finalizer garbage-collects the inventory only when the Kustomization is
 *   not suspended and its deletionPolicy says so (`MirrorPrune`, the default,
 *   follows `spec.prune`; `Delete` and `WaitForTermination` always; `Orphan` never);
 * - an object is skipped when the live object carries, as a label or an
 *   annotation, `kustomize.toolkit.fluxcd.io/prune: disabled` (or
 *   `kustomize.toolkit.fluxcd.io/reconcile: disabled`), the exact value.
 *
 * Pure: the caller builds the layer's path and hands in the objects.
 */
import { isRecord } from '../model/is-record.js';

/** The annotation that keeps an object out of every prune. */
export const PRUNE_ANNOTATION = 'kustomize.toolkit.fluxcd.io/prune';
/** The one value of {@link PRUNE_ANNOTATION} the controller honours. */
export const PRUNE_DISABLED = 'disabled';
const RECONCILE_ANNOTATION = 'kustomize.toolkit.fluxcd.io/reconcile';

/** One Kubernetes object, as `kind namespace/name`. */
export interface ObjectRef {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** What deleting one layer Kustomization does on the cluster. */
export interface LayerPrune {
  /** The Kustomization's name. */
  readonly name: string;
  /** Its `spec.path`, repository-relative without `./`. */
  readonly path: string;
  /** Whether its finalizer deletes what it applied (otherwise everything is orphaned and stays). */
  readonly prunes: boolean;
  /** Objects Flux deletes (empty when it does not prune). */
  readonly deleted: readonly ObjectRef[];
  /** Objects Flux keeps because they carry `kustomize.toolkit.fluxcd.io/prune: disabled`. */
  readonly protected: readonly ObjectRef[];
}

/** A layer Kustomization as the removal reads it from `flux/`. */
export interface LayerKustomization {
  readonly name: string;
  readonly path: string;
  readonly prunes: boolean;
}

const metadataOf = (object: Record<string, unknown>): Record<string, unknown> => (isRecord(object.metadata) ? object.metadata : {});

/** `kind namespace/name` of an object, or undefined for something that is not one. */
export function objectRefOf(object: unknown): ObjectRef | undefined {
  if (!isRecord(object) || typeof object.kind !== 'string') return undefined;
  const metadata = metadataOf(object);
  if (typeof metadata.name !== 'string') return undefined;
  return { kind: object.kind, name: metadata.name, ...(typeof metadata.namespace === 'string' ? { namespace: metadata.namespace } : {}) };
}

/** Whether kustomize-controller skips this object when it prunes (the live object's labels or annotations). */
export function pruneProtected(object: unknown): boolean {
  if (!isRecord(object)) return false;
  const metadata = metadataOf(object);
  return [metadata.labels, metadata.annotations].some(
    (map) => isRecord(map) && (map[PRUNE_ANNOTATION] === PRUNE_DISABLED || map[RECONCILE_ANNOTATION] === PRUNE_DISABLED),
  );
}

/**
 * The layer Kustomization an object of `flux/` is, or undefined for anything
 * else (the cluster-config ConfigMap, a FluxInstance).
 */
export function layerKustomizationOf(object: unknown): LayerKustomization | undefined {
  if (
    !isRecord(object) ||
    object.kind !== 'Kustomization' ||
    typeof object.apiVersion !== 'string' ||
    !object.apiVersion.startsWith('kustomize.toolkit.fluxcd.io/')
  )
    return undefined;
  const name = metadataOf(object).name;
  const spec = isRecord(object.spec) ? object.spec : {};
  if (typeof name !== 'string' || typeof spec.path !== 'string') return undefined;
  const policy = typeof spec.deletionPolicy === 'string' ? spec.deletionPolicy : 'MirrorPrune';
  const prunes = spec.suspend !== true && (policy === 'Delete' || policy === 'WaitForTermination' || (policy === 'MirrorPrune' && spec.prune === true));
  return { name, path: spec.path.replace(/^\.\//, '').replace(/\/+$/, ''), prunes };
}

/** Splits what a layer applies into what its deletion removes and what stays. */
export function forecastLayerPrune(layer: LayerKustomization, objects: readonly unknown[]): LayerPrune {
  const deleted: ObjectRef[] = [];
  const kept: ObjectRef[] = [];
  if (layer.prunes) {
    for (const object of objects) {
      const ref = objectRefOf(object);
      if (ref !== undefined) (pruneProtected(object) ? kept : deleted).push(ref);
    }
  }
  return { ...layer, deleted, protected: kept };
}

/** `Kind namespace/name`. */
export function formatObjectRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace !== undefined ? `${ref.namespace}/` : ''}${ref.name}`;
}
