/**
 * The cross-checks of scaffold.yaml's layer catalog that a schema cannot
 * express: attribute defaults and config keys, layer names, references,
 * conditions, path placeholders and dependsOn cycles. Run once when the
 * descriptor is parsed, so a render never starts on a catalog whose
 * references dangle or whose dependsOn has a cycle.
 */
import { ValidationError, type FieldIssue } from '../errors.js';
import { CLUSTER_ATTRIBUTES, type ClusterAttribute } from '../model/cluster-spec.js';
import { FLUX_CREDENTIAL_LAYER, FLUX_NAMESPACE } from './credential-schema.js';
import { assertRepoPath } from './file-tree.js';
import type { ClusterAttributes, LayerCondition, LayerSpec } from './layer-catalog-schema.js';
import type { PlatformDescriptor } from './platform-descriptor.js';
import { optionalLayerIssues } from './optional-layers.js';
import { sealedSourceOrderIssues, unsealedSecretIssues } from './sealed-source-order.js';

/** Names a layer cannot have: they are the files and objects of flux/ the generator writes itself. */
const RESERVED_LAYER_NAMES = new Set(['flux-system', 'cluster-config', 'flux-instance', 'kustomization', 'sealed']);

/** The placeholders a layer path may use. */
const PLACEHOLDER = /\{([^{}]*)\}/g;

/** Cross-checks of the catalog: names, references, conditions, placeholders, cycles. Fields are relative to scaffold.yaml. */
export function layerCatalogIssues(descriptor: PlatformDescriptor): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const at = (field: string, message: string) => issues.push({ field, message });
  const attributes = descriptor.attributes ?? {};

  for (const name of CLUSTER_ATTRIBUTES) {
    const attribute = attributes[name];
    if (!attribute) continue;
    if (attribute.default !== undefined && !attribute.values.includes(attribute.default)) {
      at(`attributes.${name}.default`, `${JSON.stringify(attribute.default)} is not one of the values (${attribute.values.join(', ')})`);
    }
  }
  const configKeys = new Map<string, string>();
  const reservedKeys = new Set(['cluster_name', 'cluster_domain', 'cluster_region', 'cluster_role', 'infra_provider', 'dns_provider']);
  for (const name of CLUSTER_ATTRIBUTES) {
    for (const [value, entries] of Object.entries(attributes[name]?.config ?? {})) {
      if (!attributes[name]!.values.includes(value))
        at(`attributes.${name}.config.${value}`, `${JSON.stringify(value)} is not one of the values (${attributes[name]!.values.join(', ')})`);
      for (const key of Object.keys(entries)) {
        if (reservedKeys.has(key)) at(`attributes.${name}.config.${value}.${key}`, 'is set by the generator itself (identity and attributes)');
        const owner = configKeys.get(key);
        if (owner !== undefined && owner !== name)
          at(`attributes.${name}.config.${value}.${key}`, `is also set by attributes.${owner}.config: one attribute owns each key`);
        configKeys.set(key, name);
      }
    }
  }
  for (const value of attributes.infra_provider?.selfHosted ?? []) {
    if (!attributes.infra_provider!.values.includes(value)) {
      at('attributes.infra_provider.selfHosted', `${JSON.stringify(value)} is not one of the values (${attributes.infra_provider!.values.join(', ')})`);
    }
  }

  for (const value of Object.keys(attributes.infra_provider?.platform ?? {})) {
    if (!attributes.infra_provider!.values.includes(value)) {
      at(`attributes.infra_provider.platform.${value}`, `${JSON.stringify(value)} is not one of the values (${attributes.infra_provider!.values.join(', ')})`);
    }
  }

  const layers = descriptor.layers;
  if (layers === undefined) return issues;
  if (layers.length === 0) at('layers', "must list at least one layer (or be left out: the layers are then the reference environment's)");
  // Flux reads substituteFrom Secrets in its own namespace, sealed in flux/ or in a layer's overlay.
  const sealedInFlux = new Set(descriptor.credentials.filter((c) => c.namespace === FLUX_NAMESPACE).map((c) => c.name));
  const names = new Set<string>();
  const overlays = new Set<string>();
  for (const layer of layers) {
    const field = `layers.${layer.name}`;
    if (names.has(layer.name)) at(field, 'is listed twice');
    names.add(layer.name);
    if (RESERVED_LAYER_NAMES.has(layer.name)) at(`${field}.name`, `${JSON.stringify(layer.name)} is reserved for what the generator writes into flux/ itself`);
    if ((layer.path === undefined) === (layer.overlay === undefined)) {
      at(field, 'must set exactly one of path (a Kustomize root of the repository) and overlay (a directory of the reference environment)');
    }
    if (layer.overlay !== undefined) {
      if (layer.overlay === FLUX_CREDENTIAL_LAYER) at(`${field}.overlay`, 'flux/ is generated, it cannot be an overlay');
      if (overlays.has(layer.overlay)) at(`${field}.overlay`, `${layer.overlay} is the overlay of another layer too`);
      overlays.add(layer.overlay);
    }
    if (layer.path !== undefined) {
      for (const message of pathTemplateIssues(layer.path, attributes)) at(`${field}.path`, message);
    }
    if (layer.wait === false && !(layer.healthChecks?.length ?? 0)) {
      at(`${field}.wait`, 'false without healthChecks: "applied" would not mean "ready" before dependents start');
    }
    for (const [key, values] of Object.entries(layer.when ?? {}) as [keyof LayerCondition, unknown][]) {
      if (key === 'self_hosted') {
        if (!attributes.infra_provider)
          at(`${field}.when.self_hosted`, 'needs attributes.infra_provider (self-hosted is a property of the infrastructure provider)');
        continue;
      }
      const attribute = attributes[key as ClusterAttribute];
      if (!attribute) {
        at(`${field}.when.${key}`, `attributes.${key} is not declared, so no cluster has one`);
        continue;
      }
      for (const value of values as string[]) {
        if (!attribute.values.includes(value))
          at(`${field}.when.${key}`, `${JSON.stringify(value)} is not one of attributes.${key}.values (${attribute.values.join(', ')})`);
      }
    }
    unsealedSecretIssues(layer.substituteFrom ?? [], sealedInFlux, `${field}.substituteFrom`, at);
  }
  unsealedSecretIssues(descriptor.layerDefaults.substituteFrom, sealedInFlux, 'layerDefaults.substituteFrom', at);
  for (const layer of layers) {
    for (const dep of layer.dependsOn) {
      if (dep === layer.name) at(`layers.${layer.name}.dependsOn`, 'a layer cannot depend on itself');
      else if (!names.has(dep)) at(`layers.${layer.name}.dependsOn`, `${JSON.stringify(dep)} is not a layer of the catalog`);
    }
  }
  for (const issue of optionalLayerIssues(descriptor, layers)) at(issue.field, issue.message);
  const cycle = findCatalogCycle(layers);
  if (cycle) at('layers', `dependsOn has a cycle: ${cycle.join(' -> ')}`);
  else for (const issue of sealedSourceOrderIssues(descriptor, layers)) at(issue.field, issue.message);
  for (const c of descriptor.credentials) {
    if (c.layer !== FLUX_CREDENTIAL_LAYER && !overlays.has(c.layer)) {
      at(
        `credentials.${c.namespace}/${c.name}.layer`,
        `${JSON.stringify(c.layer)} is neither the overlay of a catalog layer (${[...overlays].sort().join(', ') || 'there are none'}) nor ${FLUX_CREDENTIAL_LAYER}: a shared Kustomize root has no per-cluster directory to seal into`,
      );
    }
  }
  return issues;
}

/** Problems of a layer path template; checked with every value of every placeholder it uses. */
function pathTemplateIssues(template: string, attributes: ClusterAttributes): string[] {
  const issues: string[] = [];
  const used = new Set<ClusterAttribute>();
  for (const [, name] of template.matchAll(PLACEHOLDER)) {
    if (!(CLUSTER_ATTRIBUTES as readonly string[]).includes(name!)) {
      issues.push(`{${name}} is not a placeholder: use {${CLUSTER_ATTRIBUTES.join('}, {')}}`);
    } else if (!attributes[name as ClusterAttribute]) {
      issues.push(`{${name}} needs attributes.${name}`);
    } else {
      used.add(name as ClusterAttribute);
    }
  }
  if (issues.length > 0) return issues;
  const samples = [...used].map((name) => attributes[name]!.values.map((value) => [name, value] as const));
  let expansions: string[] = [template.replace(/^(\.\/)+/, '')];
  for (const values of samples) expansions = expansions.flatMap((path) => values.map(([name, value]) => path.replaceAll(`{${name}}`, value)));
  for (const path of expansions) {
    try {
      assertRepoPath(path, 'path');
    } catch (error) {
      if (error instanceof ValidationError) return [error.issues[0]!.message];
      throw error;
    }
    if (/[{}]/.test(path)) return [`${JSON.stringify(template)} has an unbalanced brace`];
    if (path === '.' || path === 'clusters' || path.startsWith('clusters/')) {
      return [`${JSON.stringify(path)} must be a shared Kustomize root outside clusters/ (a per-cluster directory is an overlay)`];
    }
  }
  return issues;
}

/** A dependsOn cycle of the catalog, as names from its first layer back to it, or undefined. */
function findCatalogCycle(layers: readonly LayerSpec[]): string[] | undefined {
  const byName = new Map(layers.map((l) => [l.name, l]));
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]): string[] | undefined => {
    if (state.get(name) === 'done') return undefined;
    if (state.get(name) === 'visiting') return [...path.slice(path.indexOf(name)), name];
    state.set(name, 'visiting');
    for (const dep of byName.get(name)?.dependsOn ?? []) {
      if (!byName.has(dep) || dep === name) continue;
      const cycle = visit(dep, [...path, name]);
      if (cycle) return cycle;
    }
    state.set(name, 'done');
    return undefined;
  };
  for (const layer of layers) {
    const cycle = visit(layer.name, []);
    if (cycle) return cycle;
  }
  return undefined;
}
