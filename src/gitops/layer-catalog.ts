/**
 * The layer catalog at work: which of the catalog's layers a cluster gets,
 * given its attributes (role, infrastructure provider, DNS provider,
 * self-hosted), how their dependsOn is wired once some are skipped, and the
 * order Flux will apply them in.
 *
 * Pure: the catalog arrives parsed and checked (platform-descriptor.ts).
 */
import { ValidationError, type FieldIssue } from '../errors.js';
import { CLUSTER_ATTRIBUTES, type ClusterAttribute, type ClusterSpec } from '../model/cluster-spec.js';
import type { ClusterAttributes, LayerCondition, LayerSpec } from './platform-descriptor.js';

/** A cluster's attribute values as the catalog resolved them (given, kept from before, or defaulted). */
export interface ResolvedAttributes {
  readonly role?: string;
  readonly infra_provider?: string;
  readonly dns_provider?: string;
  /** Whether the infrastructure provider is one of the catalog's self-hosted ones. */
  readonly self_hosted?: boolean;
}

/** The cluster-config key each attribute is recorded under. */
export const ATTRIBUTE_CONFIG_KEYS: Readonly<Record<ClusterAttribute, string>> = {
  role: 'cluster_role',
  infra_provider: 'infra_provider',
  dns_provider: 'dns_provider',
};

const ATTRIBUTE_NOUNS: Readonly<Record<ClusterAttribute, string>> = {
  role: 'role',
  infra_provider: 'infrastructure provider',
  dns_provider: 'DNS provider',
};

const WITH_ARTICLE: Readonly<Record<ClusterAttribute, string>> = {
  role: 'a role',
  infra_provider: 'an infrastructure provider',
  dns_provider: 'a DNS provider',
};

/**
 * The cluster's value of each attribute the platform declares: the one given,
 * else the one the cluster was rendered with before (so a re-render converges
 * even when the catalog's default changes), else the catalog's default.
 *
 * @param previous - the attributes recorded in the cluster's provenance, if any
 * @throws ValidationError naming `cluster.<attribute>` for a value the catalog does
 *   not know, a missing value without default, or a value for an attribute the
 *   platform does not declare; each message lists the known values
 */
export function resolveClusterAttributes(
  attributes: ClusterAttributes | undefined,
  cluster: Pick<ClusterSpec, ClusterAttribute>,
  previous: Partial<Record<ClusterAttribute, unknown>> = {},
): ResolvedAttributes {
  const issues: FieldIssue[] = [];
  const resolved: { -readonly [K in keyof ResolvedAttributes]: ResolvedAttributes[K] } = {};
  for (const name of CLUSTER_ATTRIBUTES) {
    const declared = attributes?.[name];
    const given = cluster[name];
    if (!declared) {
      if (given !== undefined) {
        issues.push({
          field: `cluster.${name}`,
          message: `this platform's scaffold.yaml declares no attributes.${name}: it selects no layer by ${ATTRIBUTE_NOUNS[name]}, so leave it out`,
        });
      }
      continue;
    }
    const kept = typeof previous[name] === 'string' && declared.values.includes(previous[name]) ? previous[name] : undefined;
    const value = given ?? kept ?? declared.default;
    const known = declared.values.join(', ');
    if (value === undefined) {
      issues.push({ field: `cluster.${name}`, message: `is required by this platform (one of ${known}); scaffold.yaml sets no default` });
    } else if (!declared.values.includes(value)) {
      issues.push({ field: `cluster.${name}`, message: `${JSON.stringify(value)} is not ${WITH_ARTICLE[name]} this platform knows: one of ${known}` });
    } else {
      resolved[name] = value;
    }
  }
  if (issues.length > 0) throw new ValidationError(issues);
  if (attributes?.infra_provider && resolved.infra_provider !== undefined) {
    resolved.self_hosted = attributes.infra_provider.selfHosted.includes(resolved.infra_provider);
  }
  return resolved;
}

/** Whether a layer's condition holds for the cluster: every attribute it names matches. */
export function conditionHolds(when: LayerCondition | undefined, attributes: ResolvedAttributes): boolean {
  if (!when) return true;
  for (const name of CLUSTER_ATTRIBUTES) {
    const allowed = when[name];
    if (allowed === undefined) continue;
    const value = attributes[name];
    if (value === undefined || !allowed.includes(value)) return false;
  }
  if (when.self_hosted !== undefined && attributes.self_hosted !== when.self_hosted) return false;
  return true;
}

/** The layer's repository path with the cluster's values put in for `{role}`, `{infra_provider}`, `{dns_provider}`. */
export function expandLayerPath(template: string, attributes: ResolvedAttributes): string {
  return template
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '')
    .replace(/\{([a-z_]+)\}/g, (match, name: string) => {
      const value = (CLUSTER_ATTRIBUTES as readonly string[]).includes(name) ? attributes[name as ClusterAttribute] : undefined;
      if (value === undefined)
        throw new ValidationError([{ field: 'scaffold.yaml', message: `layer path ${template} uses ${match}, which this cluster has no value for` }]);
      return value;
    });
}

/** A layer a cluster gets, with its dependsOn wired among the layers it gets. */
export interface SelectedLayer {
  readonly spec: LayerSpec;
  readonly name: string;
  readonly dependsOn: readonly string[];
}

/** What {@link selectLayers} decided. */
export interface LayerSelection {
  /** Dependencies first; among layers free to go, catalog order. */
  readonly layers: readonly SelectedLayer[];
  /** Names of the catalog's layers the cluster does not get, in catalog order. */
  readonly skipped: readonly string[];
}

/**
 * Selects the layers whose condition holds and wires their dependsOn.
 *
 * A kept layer's dependency on a skipped layer is replaced by the skipped
 * layer's own dependencies, recursively (env-auth depends on env directly when
 * env-data is skipped). Such a stand-in is dropped when another dependency of
 * the layer already depends on it, so the graph stays minimal: a role layer
 * that lists every vendor layer depends on the one vendor the cluster gets, or
 * on what the vendors depend on when it gets none. Dependencies the catalog
 * lists for kept layers are always kept as written.
 *
 * The order is topological (dependencies first) and otherwise the catalog's,
 * which is the order of spec 001's deployment matrix.
 */
export function selectLayers(catalog: readonly LayerSpec[], attributes: ResolvedAttributes): LayerSelection {
  const byName = new Map(catalog.map((l) => [l.name, l]));
  const kept = new Set(catalog.filter((l) => conditionHolds(l.when, attributes)).map((l) => l.name));

  // What a dependency on `name` means among kept layers.
  const standIns = new Map<string, string[]>();
  const resolveDependency = (name: string): string[] => {
    if (kept.has(name)) return [name];
    const memo = standIns.get(name);
    if (memo) return memo;
    const out = unique((byName.get(name)?.dependsOn ?? []).flatMap(resolveDependency));
    standIns.set(name, out);
    return out;
  };

  const wired = new Map<string, string[]>();
  const ancestors = new Map<string, Set<string>>();
  const ancestorsOf = (name: string): Set<string> => {
    let set = ancestors.get(name);
    if (set) return set;
    set = new Set<string>();
    for (const dep of dependenciesOf(name)) {
      set.add(dep);
      for (const a of ancestorsOf(dep)) set.add(a);
    }
    ancestors.set(name, set);
    return set;
  };
  const dependenciesOf = (name: string): string[] => {
    const memo = wired.get(name);
    if (memo) return memo;
    const declared = byName.get(name)!.dependsOn;
    const direct = new Set(declared.filter((d) => kept.has(d)));
    const candidates = unique(declared.flatMap(resolveDependency));
    const out = candidates.filter((d) => direct.has(d) || !candidates.some((other) => other !== d && ancestorsOf(other).has(d)));
    wired.set(name, out);
    return out;
  };

  const selected = catalog.filter((l) => kept.has(l.name)).map((spec) => ({ spec, name: spec.name, dependsOn: dependenciesOf(spec.name) }));
  return { layers: orderLayers(selected), skipped: catalog.filter((l) => !kept.has(l.name)).map((l) => l.name) };
}

/** Dependencies first; ties in the given order. The catalog is acyclic (checked when parsed). */
function orderLayers(layers: readonly SelectedLayer[]): SelectedLayer[] {
  const done = new Set<string>();
  const out: SelectedLayer[] = [];
  const pending = [...layers];
  while (pending.length > 0) {
    const index = pending.findIndex((l) => l.dependsOn.every((d) => done.has(d)));
    if (index < 0)
      throw new ValidationError([{ field: 'scaffold.yaml.layers', message: `dependsOn has a cycle among ${pending.map((l) => l.name).join(', ')}` }]);
    const [next] = pending.splice(index, 1);
    done.add(next!.name);
    out.push(next!);
  }
  return out;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
