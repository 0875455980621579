/**
 * Flux Alerts that can send nothing. notification-controller looks up an
 * Alert's `providerRef` in the Alert's own namespace; a Provider the cluster
 * never gets leaves the Alert not Ready, and the failures it was meant to
 * report arrive as surprises. A Provider's `secretRef` (the webhook address or
 * token) must exist there too: a SealedSecret of that name counts, since the
 * controller unseals it into the Secret.
 */
import { appliedNamespace, nameOf, specOf, type AppliedKustomization } from './applied-object.js';
import type { Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';
import { objectLabel } from './object-label.js';

const NOTIFICATION_GROUP = 'notification.toolkit.fluxcd.io/';

/**
 * One finding per Alert whose Provider, and per Provider whose Secret, no Kustomization of the cluster applies.
 * @param root - what the root sync applies (`clusterDir` builds it): a generated tree's Alert and Provider are there (flux/flux-alerts.yaml)
 */
export function checkAlertProviders(
  kustomizations: readonly AppliedKustomization[],
  root?: { readonly clusterDir: string; readonly objects: readonly Record<string, unknown>[] },
): Finding[] {
  if (root !== undefined) {
    // The root sync as one more applier: it sets no targetNamespace, so each object keeps its own.
    kustomizations = [
      ...kustomizations,
      { key: 'flux-system/flux-system', file: root.clusterDir, dir: root.clusterDir, object: {}, dependsOn: [], objects: root.objects },
    ];
  }
  const providers = new Set<string>();
  const secrets = new Set<string>();
  for (const k of kustomizations) {
    for (const object of k.objects) {
      const at = `${appliedNamespace(object, k.object) ?? ''}/${nameOf(object)}`;
      if (object.kind === 'Provider' && String(object.apiVersion).startsWith(NOTIFICATION_GROUP)) providers.add(at);
      if ((object.kind === 'Secret' && object.apiVersion === 'v1') || (object.kind === 'SealedSecret' && String(object.apiVersion).startsWith('bitnami.com/')))
        secrets.add(at);
    }
  }
  const findings: Finding[] = [];
  for (const k of kustomizations) {
    for (const object of k.objects) {
      if (!String(object.apiVersion).startsWith(NOTIFICATION_GROUP)) continue;
      const namespace = appliedNamespace(object, k.object) ?? '';
      const spec = specOf(object);
      const wanted =
        object.kind === 'Alert'
          ? { ref: spec.providerRef, what: 'Provider', set: providers, field: 'spec.providerRef' }
          : object.kind === 'Provider'
            ? { ref: spec.secretRef, what: 'Secret', set: secrets, field: 'spec.secretRef' }
            : undefined;
      if (wanted === undefined || !isRecord(wanted.ref) || typeof wanted.ref.name !== 'string' || wanted.ref.name.includes('${')) continue;
      if (wanted.set.has(`${namespace}/${wanted.ref.name}`)) continue;
      findings.push({
        file: k.dir,
        object: objectLabel(object),
        message:
          object.kind === 'Alert'
            ? `${wanted.field} names Provider ${namespace}/${wanted.ref.name}, which nothing on this cluster applies: the Alert is never Ready and sends nothing. Add the Provider in namespace ${namespace}, or name one that exists`
            : `${wanted.field} names Secret ${namespace}/${wanted.ref.name} (the address or token), which nothing on this cluster applies, sealed or not: the Provider sends nothing. Seal it into namespace ${namespace}`,
      });
    }
  }
  return findings;
}
