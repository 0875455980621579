/**
 * Gateway API routes sending traffic to nothing. Each backendRef of an
 * HTTPRoute, GRPCRoute, TLSRoute, TCPRoute or UDPRoute names a Service (the
 * default kind) in the route's namespace unless it says another; one that no
 * Service answers to leaves the route with ResolvedRefs False and every
 * request failing with 500. A Service resolves when the cluster's tree holds
 * it, a HelmRelease of a declared chart creates it (`charts[].services`, with
 * `enabledBy` for one only some values turn on), or the operator of a declared
 * chart creates it for a custom resource (`charts[].operands`). A backend in
 * another namespace also needs a ReferenceGrant there allowing the route's
 * kind and namespace (RefNotPermitted otherwise).
 */
import type { ChartSpec } from '../gitops/platform-prerequisites.js';
import { appliedNamespace, groupOf, metadataOf, specOf, type AppliedKustomization } from './applied-object.js';
import { fieldPath } from './field-path.js';
import type { Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';
import { objectLabel } from './object-label.js';
import { servicesOf } from './service-hosts.js';

const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const ROUTE_KINDS = new Set(['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute']);

function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** Whether a ReferenceGrant among `grants` (in the backend's namespace) lets `from` reach Service `name`. */
function granted(grants: readonly Record<string, unknown>[], from: { kind: string; namespace: string }, name: string): boolean {
  return grants.some((grant) => {
    const spec = specOf(grant);
    const fromOk = records(spec.from).some((f) => f.group === GATEWAY_GROUP && f.kind === from.kind && f.namespace === from.namespace);
    const toOk = records(spec.to).some((t) => (t.group ?? '') === '' && t.kind === 'Service' && (t.name === undefined || t.name === name));
    return fromOk && toOk;
  });
}

/** Findings for backendRefs no Service answers (notes when the platform declares no charts). */
export function checkRouteBackends(
  kustomizations: readonly AppliedKustomization[],
  charts: readonly ChartSpec[] | undefined,
): { findings: Finding[]; notes: string[] } {
  const services = servicesOf(kustomizations, charts ?? []);
  /** ReferenceGrants by namespace. */
  const grants = new Map<string, Record<string, unknown>[]>();
  for (const k of kustomizations) {
    for (const object of k.objects) {
      const namespace = appliedNamespace(object, k.object);
      if (namespace === undefined) continue;
      if (object.kind === 'ReferenceGrant' && groupOf(object.apiVersion) === GATEWAY_GROUP) grants.set(namespace, [...(grants.get(namespace) ?? []), object]);
    }
  }

  const findings: Finding[] = [];
  const notes: string[] = [];
  for (const k of kustomizations) {
    for (const route of k.objects) {
      if (!ROUTE_KINDS.has(String(route.kind)) || groupOf(route.apiVersion) !== GATEWAY_GROUP) continue;
      const namespace = appliedNamespace(route, k.object);
      if (namespace === undefined) continue;
      const where = { file: k.dir, object: objectLabel({ ...route, metadata: { ...metadataOf(route), namespace } }) };
      records(specOf(route).rules).forEach((rule, i) => {
        records(rule.backendRefs).forEach((ref, j) => {
          if ((ref.group ?? '') !== '' || (ref.kind ?? 'Service') !== 'Service' || typeof ref.name !== 'string') return;
          const target = typeof ref.namespace === 'string' ? ref.namespace : namespace;
          const id = `${target}/${ref.name}`;
          // A value still holding ${var} is resolved on the cluster; nothing to compare offline.
          if (id.includes('${')) return;
          const field = fieldPath(['spec', 'rules', i, 'backendRefs', j]);
          if (!services.has(id)) {
            const sameName = [...services.keys()].filter((s) => s.endsWith(`/${ref.name}`)).sort();
            const message = `${field}: Service ${id} is created by nothing in the cluster's tree nor by a release of a chart scaffold.yaml declares${sameName.length > 0 ? ` (only ${sameName.join(', ')})` : ''}: the route resolves to nothing and answers 500. Point it at a Service this cluster runs, add the layer that runs it, or declare the Service under its chart in scaffold.yaml charts[].services (with enabledBy when only some values create it)`;
            if (charts === undefined)
              notes.push(
                `${where.file}: ${where.object}: ${field}: Service ${id} is not in the tree (it may come from a chart: declare its services in scaffold.yaml charts to check)`,
              );
            else findings.push({ ...where, message });
            return;
          }
          if (target !== namespace && !granted(grants.get(target) ?? [], { kind: String(route.kind), namespace }, ref.name)) {
            findings.push({
              ...where,
              message: `${field}: Service ${id} is in another namespace and no ReferenceGrant in ${target} allows ${String(route.kind)}s from ${namespace}: the reference is refused (RefNotPermitted). Add one to ${target}, or move the route next to the Service`,
            });
          }
        });
      });
    }
  }
  return { findings, notes };
}
