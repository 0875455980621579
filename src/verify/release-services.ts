/**
 * The Services a HelmRelease of a declared chart creates, as scaffold.yaml
 * `charts[].services` describes them: `{release}` standing for the release's
 * name, and a Service that only some values turn on (`enabledBy`) counted only
 * where this release's values turn it on. Shared by the checks that resolve
 * Services: in-cluster hosts, monitor ports and Gateway API backendRefs.
 */
import type { ChartSpec } from '../gitops/platform-prerequisites.js';
import { parse } from 'yaml';
import { appliedNamespace, groupOf, nameOf, specOf, type AppliedKustomization } from './applied-object.js';
import { isRecord } from '../model/is-record.js';

/** One Service a release creates. */
export interface ReleaseService {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ports: readonly string[];
}

/** The ConfigMaps a tree applies, by `namespace/name`: what a release's `valuesFrom` reads. */
export type TreeConfigMaps = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

/** Every ConfigMap the Kustomizations apply, with its data. */
export function configMapsOf(kustomizations: readonly AppliedKustomization[]): TreeConfigMaps {
  const out = new Map<string, Record<string, unknown>>();
  for (const k of kustomizations) {
    for (const object of k.objects) {
      if (object.kind !== 'ConfigMap' || groupOf(object.apiVersion) !== '') continue;
      const namespace = appliedNamespace(object, k.object);
      if (namespace !== undefined) out.set(`${namespace}/${nameOf(object)}`, isRecord(object.data) ? object.data : {});
    }
  }
  return out;
}

const UNKNOWN = Symbol('unknown');

function valueAt(root: unknown, path: string): unknown {
  let value = root;
  for (const key of path.split('.')) value = isRecord(value) ? value[key] : undefined;
  return value;
}

/**
 * What one `valuesFrom` entry sets at `path`, the way helm-controller merges
 * it: the YAML under `valuesKey` of a ConfigMap the tree applies is read; a
 * Secret (sealed), a ConfigMap from elsewhere or a `targetPath` over `path` is
 * not readable offline.
 */
function valuesFromAt(entry: unknown, namespace: string | undefined, path: string, configMaps: TreeConfigMaps): unknown {
  if (!isRecord(entry)) return undefined;
  const targetPath = typeof entry.targetPath === 'string' ? entry.targetPath : undefined;
  if (targetPath !== undefined) return path === targetPath || path.startsWith(`${targetPath}.`) || targetPath.startsWith(`${path}.`) ? UNKNOWN : undefined;
  if (entry.kind !== 'ConfigMap' || namespace === undefined || typeof entry.name !== 'string') return UNKNOWN;
  const data = configMaps.get(`${namespace}/${entry.name}`);
  const text = data?.[typeof entry.valuesKey === 'string' ? entry.valuesKey : 'values.yaml'];
  if (typeof text !== 'string') return UNKNOWN;
  try {
    return valueAt(parse(text), path);
  } catch {
    return UNKNOWN;
  }
}

/**
 * Whether the release's values turn `path` on. Inline `values` win over
 * `valuesFrom`, whose later entries win over earlier ones; an entry that is
 * not readable offline (module doc of valuesFromAt) counts as on.
 */
function enabledIn(release: Record<string, unknown>, namespace: string | undefined, path: string, configMaps: TreeConfigMaps): boolean {
  const spec = specOf(release);
  const inline = valueAt(spec.values, path);
  if (inline !== undefined) return inline === true;
  const sources = Array.isArray(spec.valuesFrom) ? [...spec.valuesFrom].reverse() : [];
  for (const entry of sources) {
    const value = valuesFromAt(entry, namespace, path, configMaps);
    if (value === UNKNOWN) return true;
    if (value !== undefined) return value === true;
  }
  return false;
}

/** The Services `release` (a HelmRelease of `chart` in `namespace`) creates, by the declaration of its chart; none for an undeclared chart. */
export function releaseServicesOf(
  release: Record<string, unknown>,
  chart: string,
  namespace: string | undefined,
  charts: readonly ChartSpec[],
  configMaps: TreeConfigMaps,
): ReleaseService[] {
  const declared = charts.find((c) => c.chart === chart)?.services ?? [];
  return declared
    .filter((service) => service.enabledBy === undefined || enabledIn(release, namespace, service.enabledBy, configMaps))
    .map((service) => ({ name: service.name.replaceAll('{release}', nameOf(release)), labels: service.labels, ports: service.ports }));
}
