/**
 * The one FluxInstance patch of a NetworkPolicy (spec 004: it "widens the
 * operator-generated allow-egress NetworkPolicy, whose default same-namespace
 * ingress rule blocks Cilium's Gateway API L7 proxy").
 *
 * With `cluster.networkPolicy` (the CRD's default) the operator installs
 * Flux's manifests/policies: allow-egress (every flux-system Pod; ingress only
 * `from: [podSelector: {}]`, the namespace itself), allow-scraping (port 8080
 * from any namespace) and allow-webhooks (notification-controller's receiver
 * port 9292 from any namespace) — read in fluxcd/flux2 v2.9.4. Every rule
 * selects Pods. Cilium's Gateway API is an Envoy L7 load balancer; the
 * backend sees the proxied connection as coming from the reserved `ingress`
 * identity, which is no Pod in any namespace, so none of the three admits it
 * and a Receiver routed through a Cilium Gateway times out. A rule that names
 * only the port admits every source on it, the ingress identity included:
 * that is the patch, on the receiver port only.
 *
 * Off by default, because no tree this generator writes routes a Gateway to a
 * flux-system Service: it is for a platform that adds an HTTPRoute to
 * notification-controller's webhook-receiver behind a Cilium Gateway.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { toYaml } from './yaml.js';

/** notification-controller's receiver port (its `http-webhook` container port; the port allow-webhooks opens). */
export const RECEIVER_PORT = 9292;

/** The operator-generated policy the patch widens. */
export const ALLOW_EGRESS_POLICY = 'allow-egress';

/** scaffold.yaml `fluxInstance.networkPolicy`. */
export const fluxNetworkPolicySchema = z
  .object({
    /**
     * Admit Cilium's Gateway API proxy to notification-controller's receiver
     * port: for a Receiver (webhook) routed through a Cilium Gateway.
     */
    allowGatewayIngress: z.boolean({ error: 'must be true or false' }).default(false),
  })
  .strict();

export type FluxNetworkPolicy = z.infer<typeof fluxNetworkPolicySchema>;

/** The FluxInstance patch widening allow-egress, or none. */
export function fluxNetworkPolicyPatches(
  policy: FluxNetworkPolicy,
  components: readonly string[],
  clusterNetworkPolicy: boolean | undefined,
): { readonly target: { readonly kind: 'NetworkPolicy'; readonly name: string }; readonly patch: string }[] {
  if (!policy.allowGatewayIngress) return [];
  // Without the policies there is nothing to widen, and a patch matching nothing would say the opposite.
  if (clusterNetworkPolicy === false) {
    throw new ValidationError([
      {
        field: 'fluxInstance.networkPolicy.allowGatewayIngress',
        message: `fluxInstance.cluster.networkPolicy is false, so the operator installs no ${ALLOW_EGRESS_POLICY} NetworkPolicy and nothing blocks the Gateway: drop the setting`,
      },
    ]);
  }
  if (!components.includes('notification-controller')) {
    throw new ValidationError([
      {
        field: 'fluxInstance.networkPolicy.allowGatewayIngress',
        message: `opens notification-controller's receiver port ${RECEIVER_PORT} to the Gateway, but fluxInstance.components has no notification-controller: add it, or drop the setting`,
      },
    ]);
  }
  const operations = [{ op: 'add', path: '/spec/ingress/-', value: { ports: [{ protocol: 'TCP', port: RECEIVER_PORT }] } }];
  return [{ target: { kind: 'NetworkPolicy', name: ALLOW_EGRESS_POLICY }, patch: toYaml(operations) }];
}
