/**
 * API groups a cluster serves before anything is applied: Kubernetes' own,
 * and Flux's, which `flux bootstrap` or the Flux Operator installs before the
 * root sync runs. `gateway.networking.k8s.io` and `snapshot.storage.k8s.io`
 * end in k8s.io but are CRDs, hence an explicit list.
 */

const KUBERNETES_GROUPS = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'networking.k8s.io',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'apiextensions.k8s.io',
  'admissionregistration.k8s.io',
  'scheduling.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'node.k8s.io',
  'certificates.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'apiregistration.k8s.io',
  'resource.k8s.io',
  'events.k8s.io',
]);

/** Whether a kind of this group exists on any cluster. */
export function isKubernetesGroup(group: string): boolean {
  return KUBERNETES_GROUPS.has(group);
}

/** Whether the group is Flux's own (toolkit controllers, Flux Operator): there before the root sync. */
export function isFluxGroup(group: string): boolean {
  return group.endsWith('.toolkit.fluxcd.io') || group === 'fluxcd.controlplane.io';
}
