/**
 * A route from Cilium's Gateway to a flux-system Service (a webhook Receiver)
 * that the operator's NetworkPolicies drop. With `cluster.networkPolicy` (the
 * CRD's default) flux-system admits ingress from its own Pods (allow-egress)
 * and, on the receiver and metrics ports, from Pods of any namespace. Cilium's
 * Gateway API is an Envoy L7 load balancer whose connections reach the backend
 * as the reserved `ingress` identity, which is no Pod: none of those rules
 * admits it, and the webhook times out. The FluxInstance patch of
 * `fluxInstance.networkPolicy.allowGatewayIngress` (gitops/flux-network-policy.ts)
 * opens the receiver port to it.
 *
 * A Gateway is Cilium's when its class is a GatewayClass of the tree whose
 * controllerName is Cilium's, or, the class not being in the tree (the Cilium
 * chart creates it), when the class is named `cilium` as the chart names it.
 */
import { ALLOW_EGRESS_POLICY } from '../gitops/flux-network-policy.js';
import { FLUX_NAMESPACE } from '../gitops/platform-descriptor.js';
import { isRecord } from '../model/is-record.js';
import { groupOf, nameOf, specOf } from './applied-object.js';
import { clusterFluxInstanceSpec, placedObjects, type ClusterObjects } from './cluster-flux-instance.js';
import type { Finding } from './finding.js';
import { objectLabel } from './object-label.js';

const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const CILIUM_CONTROLLER = 'io.cilium/gateway-controller';
const CILIUM_CLASS = 'cilium';

function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** Whether the FluxInstance patches allow-egress (the widening is the only NetworkPolicy patch it is given). */
function widensAllowEgress(spec: Record<string, unknown>): boolean {
  const kustomize = isRecord(spec.kustomize) ? spec.kustomize : {};
  return records(kustomize.patches).some((p) => isRecord(p.target) && p.target.kind === 'NetworkPolicy' && p.target.name === ALLOW_EGRESS_POLICY);
}

/** One finding per HTTPRoute or GRPCRoute sending a Cilium Gateway's traffic to a flux-system Service the policies drop it at. */
export function checkGatewayFluxIngress(input: ClusterObjects): Finding[] {
  const spec = clusterFluxInstanceSpec(input);
  if (spec === undefined) return [];
  const cluster = isRecord(spec.cluster) ? spec.cluster : {};
  if (cluster.networkPolicy === false || widensAllowEgress(spec)) return [];
  const placed = [...placedObjects(input)];
  const ciliumClasses = new Set([CILIUM_CLASS]);
  for (const { object } of placed) {
    if (groupOf(object.apiVersion) !== GATEWAY_GROUP || object.kind !== 'GatewayClass') continue;
    if (specOf(object).controllerName === CILIUM_CONTROLLER) ciliumClasses.add(nameOf(object));
    else ciliumClasses.delete(nameOf(object));
  }
  const ciliumGateways = new Set(
    placed
      .filter(
        ({ object }) => groupOf(object.apiVersion) === GATEWAY_GROUP && object.kind === 'Gateway' && ciliumClasses.has(String(specOf(object).gatewayClassName)),
      )
      .map(({ object, namespace }) => `${namespace ?? ''}/${nameOf(object)}`),
  );
  const findings: Finding[] = [];
  for (const { object, dir, namespace } of placed) {
    if (groupOf(object.apiVersion) !== GATEWAY_GROUP || (object.kind !== 'HTTPRoute' && object.kind !== 'GRPCRoute')) continue;
    const route = specOf(object);
    const gateway = records(route.parentRefs)
      .filter((p) => (p.kind ?? 'Gateway') === 'Gateway')
      .map((p) => `${typeof p.namespace === 'string' ? p.namespace : (namespace ?? '')}/${String(p.name)}`)
      .find((key) => ciliumGateways.has(key));
    if (gateway === undefined) continue;
    const backends = records(route.rules)
      .flatMap((rule) => records(rule.backendRefs))
      .filter((b) => (b.kind ?? 'Service') === 'Service' && (typeof b.namespace === 'string' ? b.namespace : namespace) === FLUX_NAMESPACE)
      .map((b) => `${FLUX_NAMESPACE}/${String(b.name)}`);
    for (const backend of [...new Set(backends)]) {
      findings.push({
        file: dir,
        object: objectLabel(object),
        message: `routes Cilium Gateway ${gateway} to Service ${backend}, but the FluxInstance's network policies admit only Pods there and Cilium's Gateway proxy reaches the backend as its ingress identity, which is no Pod: every request is dropped. Set fluxInstance.networkPolicy.allowGatewayIngress: true in scaffold.yaml`,
      });
    }
  }
  return findings;
}
