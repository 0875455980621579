/**
 * Substitution Secrets the descriptor must seal, and in time. Nothing but
 * the descriptor creates a Secret source, so one it does not seal must be
 * optional. A layer substituting from a Secret that a catalog layer seals (its overlay
 * holds the SealedSecret) must wait for that layer: until the controller has
 * unsealed it, the Secret does not exist and Flux fails the substitution.
 * Secrets sealed into flux/ are the root sync's, there before every layer
 * (and, being custom resources, a problem of their own that verify reports).
 */
import type { FieldIssue } from '../errors.js';
import type { LayerSpec, PlatformDescriptor, SubstitutionSource } from './platform-descriptor.js';

const FLUX_NAMESPACE = 'flux-system';

/** Layers it depends on, directly or not (the catalog has no cycle when this is called). */
function dependenciesOf(name: string, byName: ReadonlyMap<string, LayerSpec>, seen = new Set<string>()): Set<string> {
  for (const dep of byName.get(name)?.dependsOn ?? []) {
    if (seen.has(dep)) continue;
    seen.add(dep);
    dependenciesOf(dep, byName, seen);
  }
  return seen;
}

/** One issue per layer reading a sealed Secret of a layer it does not wait for. */
export function sealedSourceOrderIssues(descriptor: PlatformDescriptor, layers: readonly LayerSpec[]): FieldIssue[] {
  const byName = new Map(layers.map((l) => [l.name, l]));
  const sealedBy = new Map<string, string>();
  for (const c of descriptor.credentials) {
    if (c.namespace !== FLUX_NAMESPACE) continue;
    const layer = layers.find((l) => l.overlay === c.layer);
    if (layer) sealedBy.set(c.name, layer.name);
  }
  const issues: FieldIssue[] = [];
  for (const layer of layers) {
    for (const source of layer.substituteFrom ?? descriptor.layerDefaults.substituteFrom) {
      const owner = source.kind === 'Secret' ? sealedBy.get(source.name) : undefined;
      if (owner === undefined || dependenciesOf(layer.name, byName).has(owner)) continue;
      issues.push({
        field: `layers.${layer.name}.substituteFrom`,
        message: `Secret ${source.name} is sealed by layer ${owner}, which ${layer.name} does not depend on: it may not exist yet when Flux substitutes. Add ${owner} to its dependsOn (directly or through a layer that depends on it)`,
      });
    }
  }
  return issues;
}

/** A Secret source must be one the descriptor seals, or optional: nothing else would create it. */
export function unsealedSecretIssues(
  sources: readonly SubstitutionSource[],
  sealed: ReadonlySet<string>,
  field: string,
  at: (field: string, message: string) => void,
): void {
  for (const source of sources) {
    if (source.kind === 'Secret' && !sealed.has(source.name) && source.optional !== true) {
      at(
        field,
        `Secret ${source.name} is not a credential of scaffold.yaml in namespace flux-system, so nothing would create it; declare it there or mark the source optional`,
      );
    }
  }
}
