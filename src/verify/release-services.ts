/**
 * The Services a HelmRelease of a declared chart creates, as scaffold.yaml
 * `charts[].services` describes them: `{release}` standing for the release's
 * name, and a Service that only some values turn on (`enabledBy`) counted only
 * where this release's values turn it on. Shared by the checks that resolve
 * Services: in-cluster hosts, monitor ports and Gateway API backendRefs.
 */
import type { ChartSpec } from '../gitops/platform-prerequisites.js';
import { nameOf, specOf } from './applied-object.js';
import { isRecord } from '../model/is-record.js';

/** One Service a release creates. */
export interface ReleaseService {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ports: readonly string[];
}

/**
 * Whether the release's values turn `path` on. A release with `valuesFrom`
 * may set it there, which is not readable offline: it counts as on.
 */
function enabledIn(release: Record<string, unknown>, path: string): boolean {
  const spec = specOf(release);
  let value: unknown = spec.values;
  for (const key of path.split('.')) value = isRecord(value) ? value[key] : undefined;
  if (value === true) return true;
  return value === undefined && Array.isArray(spec.valuesFrom) && spec.valuesFrom.length > 0;
}

/** The Services `release` (a HelmRelease of `chart`) creates, by the declaration of its chart; none for an undeclared chart. */
export function releaseServicesOf(release: Record<string, unknown>, chart: string, charts: readonly ChartSpec[]): ReleaseService[] {
  const declared = charts.find((c) => c.chart === chart)?.services ?? [];
  return declared
    .filter((service) => service.enabledBy === undefined || enabledIn(release, service.enabledBy))
    .map((service) => ({ name: service.name.replaceAll('{release}', nameOf(release)), labels: service.labels, ports: service.ports }));
}
