import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appliedLayer } from './test-applied-layer.js';
import { checkAlertProviders } from './alert-providers.js';
import { formatFinding } from './finding.js';

const layer = (name: string, objects: Record<string, unknown>[], targetNamespace?: string) =>
  appliedLayer(name, objects, targetNamespace ? { targetNamespace } : {});
const alert = (provider: string) => ({
  apiVersion: 'notification.toolkit.fluxcd.io/v1beta3',
  kind: 'Alert',
  metadata: { name: 'errors', namespace: 'flux-system' },
  spec: { providerRef: { name: provider }, eventSeverity: 'error', eventSources: [{ kind: 'Kustomization', name: '*' }] },
});
const provider = (secret: string, namespace = 'flux-system') => ({
  apiVersion: 'notification.toolkit.fluxcd.io/v1beta3',
  kind: 'Provider',
  metadata: { name: 'slack', namespace },
  spec: { type: 'slack', secretRef: { name: secret } },
});
const sealed = (name: string) => ({
  apiVersion: 'bitnami.com/v1alpha1',
  kind: 'SealedSecret',
  metadata: { name, namespace: 'flux-system' },
  spec: { encryptedData: { address: 'AgB…' } },
});

describe('Alerts that can send nothing', () => {
  it('passes an Alert whose Provider and sealed address the cluster applies, in any of its layers', () => {
    assert.deepEqual(
      checkAlertProviders([layer('notifications', [alert('slack'), provider('slack-address')]), layer('secrets', [sealed('slack-address')])]),
      [],
    );
  });

  it('refuses an Alert naming a Provider that exists only in another namespace, and a Provider without its Secret', () => {
    const lines = checkAlertProviders([layer('notifications', [alert('slack'), provider('slack-address', 'monitoring')])]).map(formatFinding);
    assert.deepEqual(lines, [
      'notifications: Alert flux-system/errors: spec.providerRef names Provider flux-system/slack, which nothing on this cluster applies: the Alert is never Ready and sends nothing. Add the Provider in namespace flux-system, or name one that exists',
      'notifications: Provider monitoring/slack: spec.secretRef names Secret monitoring/slack-address (the address or token), which nothing on this cluster applies, sealed or not: the Provider sends nothing. Seal it into namespace monitoring',
    ]);
  });

  it('reads the Alert and the Provider the root sync applies (a generated flux/flux-alerts.yaml), with the address sealed in a layer', () => {
    const root = (objects: Record<string, unknown>[]) => ({ clusterDir: 'clusters/c', objects });
    assert.deepEqual(checkAlertProviders([layer('secrets', [sealed('slack-address')])], root([alert('slack'), provider('slack-address')])), []);
    assert.deepEqual(checkAlertProviders([layer('secrets', [sealed('other')])], root([alert('teams'), provider('slack-address')])).map(formatFinding), [
      'clusters/c: Alert flux-system/errors: spec.providerRef names Provider flux-system/teams, which nothing on this cluster applies: the Alert is never Ready and sends nothing. Add the Provider in namespace flux-system, or name one that exists',
      'clusters/c: Provider flux-system/slack: spec.secretRef names Secret flux-system/slack-address (the address or token), which nothing on this cluster applies, sealed or not: the Provider sends nothing. Seal it into namespace flux-system',
    ]);
  });

  it('reads the namespace the Kustomization puts the objects in', () => {
    const unnamespaced = (o: Record<string, unknown>) => ({ ...o, metadata: { name: (o.metadata as { name: string }).name } });
    assert.deepEqual(checkAlertProviders([layer('n', [unnamespaced(alert('slack')), unnamespaced(provider('a')), unnamespaced(sealed('a'))], 'team-a')]), []);
  });
});
