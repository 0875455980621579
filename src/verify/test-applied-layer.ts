/**
 * Test support: a layer as verify's checks see it after the simulation — a
 * Flux Kustomization in `flux-system` of cluster `c`, its path named like it,
 * and the objects it applies.
 */
import type { AppliedKustomization } from './applied-object.js';

export interface AppliedLayerOptions {
  readonly targetNamespace?: string;
  readonly dependsOn?: string[];
}

export function appliedLayer(name: string, objects: Record<string, unknown>[], options: AppliedLayerOptions = {}): AppliedKustomization {
  return {
    key: `flux-system/${name}`,
    file: `clusters/c/flux/${name}.yaml`,
    dir: name,
    object: {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name, namespace: 'flux-system' },
      spec: options.targetNamespace ? { targetNamespace: options.targetNamespace } : {},
    },
    dependsOn: options.dependsOn ?? [],
    objects,
  };
}
