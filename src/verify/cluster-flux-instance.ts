/**
 * The FluxInstance a cluster's tree applies (the root sync's flux/flux-instance.yaml,
 * or one a layer applies), as the checks that depend on how the operator
 * installs Flux read it. Undefined: the tree has none (flux bootstrap, or Flux
 * installed outside the tree), so nothing can be said about its controllers.
 */
import { isRecord } from '../model/is-record.js';
import { appliedNamespace, type AppliedKustomization } from './applied-object.js';

/** One cluster's objects: what the root sync applies and what each Kustomization does. */
export interface ClusterObjects {
  readonly clusterDir: string;
  readonly kustomizations: readonly AppliedKustomization[];
  readonly rootObjects?: readonly Record<string, unknown>[];
}

/** An object of the cluster, the directory a finding names for it and the namespace it lands in. */
export interface PlacedObject {
  readonly object: Record<string, unknown>;
  readonly dir: string;
  readonly namespace: string | undefined;
}

/** Every object of the cluster; the root sync sets no targetNamespace, so its objects keep their own. */
export function* placedObjects(input: ClusterObjects): Generator<PlacedObject> {
  for (const object of input.rootObjects ?? []) yield { object, dir: input.clusterDir, namespace: appliedNamespace(object, {}) };
  for (const k of input.kustomizations) for (const object of k.objects) yield { object, dir: k.dir, namespace: appliedNamespace(object, k.object) };
}

/** The FluxInstance's spec, or undefined when the tree applies none. */
export function clusterFluxInstanceSpec(input: ClusterObjects): Record<string, unknown> | undefined {
  for (const { object } of placedObjects(input)) {
    if (object.kind !== 'FluxInstance' || typeof object.apiVersion !== 'string' || !object.apiVersion.startsWith('fluxcd.controlplane.io/')) continue;
    return isRecord(object.spec) ? object.spec : {};
  }
  return undefined;
}
