/**
 * In-cluster host names (`name.namespace.svc`) that resolve to nothing, or to
 * a Service applied after its client. A Keycloak pointed at
 * `mysql-haproxy.data.svc` on a cluster whose tree has no such Service (a
 * managed cloud, where the in-cluster database layer is skipped) never
 * starts; a Deployment whose database comes from a Kustomization it does not
 * depend on starts against nothing and crash-loops until it happens to be up.
 * A host resolves to a Service in the tree, a Service scaffold.yaml declares
 * for a chart of a HelmRelease in the tree, or one the operator of a declared
 * chart creates for a custom resource in the tree.
 */
import type { ChartSpec } from '../gitops/platform-prerequisites.js';
import { appliedNamespace, dependencyClosure, groupKindOf, groupOf, helmReleasesOf, nameOf, type AppliedKustomization } from './applied-object.js';
import type { Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';
import { objectLabel } from './object-label.js';
import { configMapsOf, releaseServicesOf } from './release-services.js';

/** Flux's own Services, there since its installation, before the root sync applies anything. */
const FLUX_SERVICES = new Set([
  'source-controller',
  'notification-controller',
  'webhook-receiver',
  'kustomize-controller',
  'helm-controller',
  'image-reflector-controller',
  'image-automation-controller',
  'source-watcher',
]);

const HOST = /\b([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)\.([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)\.svc(?:\.cluster\.local)?\b/g;

function eachString(value: unknown, visit: (text: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) for (const item of value) eachString(item, visit);
  else if (isRecord(value)) for (const child of Object.values(value)) eachString(child, visit);
}

/** `namespace/name` of every Service → the Kustomizations applying it (or the release/operand creating it). */
export function servicesOf(kustomizations: readonly AppliedKustomization[], charts: readonly ChartSpec[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (namespace: string | undefined, name: string, key: string): void => {
    if (namespace === undefined) return;
    const id = `${namespace}/${name}`;
    if (!out.has(id)) out.set(id, new Set());
    out.get(id)!.add(key);
  };
  const operands = charts.flatMap((c) => c.operands);
  const configMaps = configMapsOf(kustomizations);
  for (const k of kustomizations) {
    for (const object of k.objects) {
      if (object.kind === 'Service' && groupOf(object.apiVersion) === '') add(appliedNamespace(object, k.object), nameOf(object), k.key);
      for (const operand of operands.filter((o) => o.kind === groupKindOf(object))) {
        for (const service of operand.services) add(appliedNamespace(object, k.object), service.name.replaceAll('{name}', nameOf(object)), k.key);
      }
    }
    for (const release of helmReleasesOf(k.objects, k.object)) {
      for (const service of releaseServicesOf(release.object, release.chart, release.namespace, charts, configMaps))
        add(release.namespace, service.name, k.key);
    }
  }
  return out;
}

/** Findings for hosts nothing serves (notes when the platform declares no charts) and for Services applied after their clients. */
export function checkServiceHosts(
  kustomizations: readonly AppliedKustomization[],
  charts: readonly ChartSpec[] | undefined,
): { findings: Finding[]; notes: string[] } {
  const services = servicesOf(kustomizations, charts ?? []);
  const byKey = new Map(kustomizations.map((k) => [k.key, k]));
  const findings: Finding[] = [];
  const notes: string[] = [];
  for (const k of kustomizations) {
    const closure = dependencyClosure(k.key, byKey);
    const seen = new Set<string>();
    for (const object of k.objects) {
      if (object.kind === 'Service' || object.kind === 'CustomResourceDefinition') continue;
      eachString(object, (text) => {
        for (const [host, name, namespace] of text.matchAll(HOST)) {
          const id = `${namespace}/${name}`;
          if (namespace === 'default' || namespace === 'kube-system' || seen.has(id)) continue;
          if (namespace === 'flux-system' && FLUX_SERVICES.has(name!)) continue;
          seen.add(id);
          const providers = services.get(id);
          const where = {
            file: k.dir,
            object: objectLabel({
              ...object,
              metadata: { ...(isRecord(object.metadata) ? object.metadata : {}), namespace: appliedNamespace(object, k.object) },
            }),
          };
          if (providers === undefined) {
            const message = `${host} names Service ${id}, which nothing in the cluster's tree creates: it resolves to nothing on this cluster. Point it at a cluster-config variable (e.g. a managed service's endpoint per provider), or add the layer that runs it`;
            if (charts === undefined)
              notes.push(
                `${where.file}: ${where.object}: ${host} names Service ${id}, not in the tree (it may come from a chart: declare its services in scaffold.yaml charts to check)`,
              );
            else findings.push({ ...where, message });
            continue;
          }
          if (providers.has(k.key) || [...providers].some((p) => closure.has(p))) continue;
          findings.push({
            ...where,
            message: `${host} is Service ${id}, applied by Kustomization ${[...providers].sort().join(', ')}, which Kustomization ${k.key} does not depend on: it would start against nothing. Add dependsOn ${[...providers].sort()[0]} to Kustomization ${k.key}`,
          });
        }
      });
    }
  }
  return { findings, notes };
}
