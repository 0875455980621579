/**
 * Opt-in layers (spec 004, "Opt-in layers ship suspended"): a layer the
 * platform declares optional (a catalog layer's `optional: true`, or the
 * generated `previews` layer) is rendered on every cluster that gets it, with
 * `spec.suspend: true` on its Flux Kustomization, and resumed on the clusters
 * that enable it (cluster `enable_layers`). Suspending keeps the files (and so
 * the layer's removal and prune semantics) the same whether a cluster enables
 * it or not: resuming is one field, and disabling it again leaves what it
 * applied in place, as suspending any Kustomization does.
 *
 * Flux's rule behind the checks: a Kustomization whose dependsOn names a
 * suspended one never becomes Ready, so only optional layers may depend on an
 * optional layer, and a cluster enabling a layer must enable the optional
 * layers it depends on.
 */
import { parseDocument } from 'yaml';
import { ValidationError, type FieldIssue } from '../errors.js';
import type { LayerSpec } from './layer-catalog-schema.js';
import type { PlatformDescriptor } from './platform-descriptor.js';
import { PREVIEWS_LAYER } from './previews-schema.js';
import { documentToYaml } from './yaml.js';

/** Marks a generated Kustomization as an opt-in layer: suspended means "not enabled here", not "broken". */
export const OPTIONAL_LAYER_ANNOTATION = 'gitops-scaffolder.io/optional-layer';

/** Cross-checks of `optional` in the catalog; fields relative to scaffold.yaml. */
export function optionalLayerIssues(descriptor: PlatformDescriptor, layers: readonly LayerSpec[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const optional = new Set(layers.filter((l) => l.optional === true).map((l) => l.name));
  for (const layer of layers) {
    if (layer.optional === true) continue;
    for (const dep of layer.dependsOn) {
      if (!optional.has(dep)) continue;
      issues.push({
        field: `layers.${layer.name}.dependsOn`,
        message: `${JSON.stringify(dep)} is optional (suspended on every cluster that does not enable it), and a Kustomization depending on a suspended one never becomes Ready: make ${layer.name} optional too, or drop the dependency`,
      });
    }
  }
  const bootstrap = descriptor.bootstrap?.layer;
  if (bootstrap !== undefined && optional.has(bootstrap)) {
    issues.push({ field: `layers.${bootstrap}.optional`, message: 'the bootstrap layer is the one every other layer depends on: it cannot be optional' });
  }
  if (descriptor.previews?.enabled === true && layers.some((l) => l.name === PREVIEWS_LAYER)) {
    issues.push({ field: `layers.${PREVIEWS_LAYER}`, message: `${JSON.stringify(PREVIEWS_LAYER)} is the layer previews.enabled generates: rename this one` });
  }
  return issues;
}

/** A layer a cluster gets, as the enabling sees it. */
export interface OptionalCandidate {
  readonly name: string;
  readonly dependsOn: readonly string[];
  readonly optional: boolean;
}

/** Inputs of {@link enabledOptionalLayers}. */
export interface EnableLayersInput {
  /** Every layer the cluster gets. */
  readonly layers: readonly OptionalCandidate[];
  /** Catalog layers this cluster does not get (their `when` does not hold). */
  readonly skipped: readonly string[];
  /** What the cluster asks for; undefined: keep `previous`. */
  readonly requested: readonly string[] | undefined;
  /** What the cluster was rendered with before (its provenance). */
  readonly previous: unknown;
}

/**
 * The optional layers the cluster resumes.
 * @throws ValidationError naming `cluster.enable_layers`: a name that is not a
 *   layer of the platform, a layer that is always on, a layer this cluster does
 *   not get, or an enabled layer depending on an optional layer left suspended
 */
export function enabledOptionalLayers(input: EnableLayersInput): Set<string> {
  const byName = new Map(input.layers.map((l) => [l.name, l]));
  const optional = input.layers.filter((l) => l.optional).map((l) => l.name);
  const known = optional.length > 0 ? optional.join(', ') : 'none';
  const issues: FieldIssue[] = [];
  let names: readonly string[];
  if (input.requested !== undefined) {
    names = input.requested;
    for (const name of names) {
      const layer = byName.get(name);
      if (layer?.optional) continue;
      const why = layer
        ? `is not optional: it is always on`
        : input.skipped.includes(name)
          ? `is not a layer this cluster gets (its \`when\` does not hold for the cluster's attributes)`
          : `is not a layer of this platform`;
      issues.push({ field: 'cluster.enable_layers', message: `${JSON.stringify(name)} ${why}; the optional layers it can enable: ${known}` });
    }
  } else {
    // Kept from the last render, as far as they are still optional here.
    names = Array.isArray(input.previous) ? input.previous.filter((n): n is string => typeof n === 'string' && byName.get(n)?.optional === true) : [];
  }
  if (issues.length > 0) throw new ValidationError(issues);
  const enabled = new Set(names);
  for (const name of [...enabled].sort()) {
    const seen = new Set<string>();
    const walk = (current: string): void => {
      for (const dep of byName.get(current)?.dependsOn ?? []) {
        if (seen.has(dep)) continue;
        seen.add(dep);
        if (byName.get(dep)?.optional && !enabled.has(dep)) {
          issues.push({
            field: 'cluster.enable_layers',
            message: `${JSON.stringify(name)} depends on optional layer ${JSON.stringify(dep)}, which would stay suspended, and a Kustomization depending on a suspended one never becomes Ready: enable ${dep} too`,
          });
        }
        walk(dep);
      }
    };
    walk(name);
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return enabled;
}

/**
 * An optional layer's Flux Kustomization as this cluster gets it: marked
 * optional, and suspended unless the cluster enables it. Comments and field
 * order of `yaml` are kept.
 */
export function markOptionalLayer(yaml: string, enabled: boolean): string {
  const doc = parseDocument(yaml);
  doc.setIn(['metadata', 'annotations', OPTIONAL_LAYER_ANNOTATION], 'true');
  if (enabled) doc.deleteIn(['spec', 'suspend']);
  else doc.setIn(['spec', 'suspend'], true);
  return documentToYaml(doc);
}
