import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse, parseAllDocuments } from 'yaml';
import { ValidationError } from '../errors.js';
import { renderNotifications } from './flux-alerts.js';
import { parsePlatformDescriptor } from './platform-descriptor.js';
import { assertNotificationAddress, assertNotificationProvider } from './notification-schema.js';

const HEADER = 'apiVersion: gitops-scaffolder.io/v1alpha1\nkind: Platform\n';
const ADDRESS_CREDENTIAL = (over: { namespace?: string; layer?: string; key?: string } = {}) =>
  `credentials:\n  - name: flux-notification-address\n    namespace: ${over.namespace ?? 'flux-system'}\n    layer: ${over.layer ?? 'secrets'}\n    keys:\n      ${over.key ?? 'address'}: { supplied: notification-address }\n`;

function refusal(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ValidationError, String(error));
    return error;
  }
  assert.fail('expected a ValidationError');
}

describe('the notification address', () => {
  const SECRET = 'https://hooks.slack.com/services/T0/B0/Zm9vYmFy';

  it('takes an https URL with a host, dropping the newline a file ends with', () => {
    assert.equal(assertNotificationAddress(`${SECRET}\n`), SECRET);
    assert.equal(
      assertNotificationAddress('https://prod-12.westeurope.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?sig=x'),
      'https://prod-12.westeurope.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?sig=x',
    );
  });

  it('refuses anything else, saying what is wrong and never what was given', () => {
    const cases: [string, RegExp][] = [
      [SECRET.replace('https:', 'http:'), /must be an https:\/\/ URL/],
      ['hooks.slack.com/services/T0/B0/Zm9vYmFy', /is not a URL/],
      ['', /is empty/],
      [`${SECRET} ${SECRET}`, /one URL, without spaces/],
      ['https://user:Zm9vYmFy@hooks.example.net/x', /must not carry user info/],
    ];
    for (const [value, message] of cases) {
      const error = refusal(() => assertNotificationAddress(value, '--notification-address-file'));
      assert.match(error.message, message);
      assert.match(error.message, /^--notification-address-file: /);
      assert.doesNotMatch(error.message, /Zm9vYmFy/);
    }
  });
});

describe('the notification provider type', () => {
  it('is one of slack, msteams, generic, or the fewer the platform offers', () => {
    assert.equal(assertNotificationProvider('msteams'), 'msteams');
    assert.match(
      refusal(() => assertNotificationProvider('teams', '--notification-provider')).message,
      /--notification-provider: "teams" is not a notification provider this platform offers \(one of slack, msteams, generic\)/,
    );
    assert.match(refusal(() => assertNotificationProvider('generic', 'x', ['slack'])).message, /one of slack\)/);
  });
});

describe('scaffold.yaml notifications', () => {
  it('reads a section with its defaults', () => {
    const descriptor = parsePlatformDescriptor(`${HEADER}${ADDRESS_CREDENTIAL()}notifications: {}\n`);
    assert.deepEqual(descriptor.notifications, {
      providers: ['slack', 'msteams', 'generic'],
      required: false,
      name: 'flux-failures',
      helmReleaseNamespaces: [],
    });
  });

  it('refuses a section without an address credential, and an address the Provider could not read', () => {
    assert.match(
      refusal(() => parsePlatformDescriptor(`${HEADER}notifications: {}\n`)).message,
      /scaffold\.yaml\.notifications: needs a credential for the webhook address/,
    );
    assert.match(
      refusal(() => parsePlatformDescriptor(`${HEADER}${ADDRESS_CREDENTIAL({ namespace: 'monitoring' })}notifications: {}\n`)).message,
      /must be in flux-system/,
    );
    assert.match(
      refusal(() => parsePlatformDescriptor(`${HEADER}${ADDRESS_CREDENTIAL({ key: 'url' })}notifications: {}\n`)).message,
      /its one key must be address/,
    );
    assert.match(
      refusal(() => parsePlatformDescriptor(`${HEADER}${ADDRESS_CREDENTIAL({ layer: 'flux' })}notifications: {}\n`)).message,
      /SealedSecret in the root sync/,
    );
    assert.match(
      refusal(() => parsePlatformDescriptor(`${HEADER}notifications: { providers: [teams] }\n`)).message,
      /scaffold\.yaml\.notifications\.providers/,
    );
  });
});

describe('renderNotifications', () => {
  it('writes a Provider reading its address from the sealed Secret, and an Alert on error events of every Kustomization and of the HelmReleases of each namespace', () => {
    const [provider, alert] = parseAllDocuments(
      renderNotifications('eu-prod-1', 'slack', 'flux-failures', 'flux-notification-address', ['monitoring', 'cert-manager']),
    ).map((d) => d.toJS());
    assert.deepEqual(provider.spec, { type: 'slack', secretRef: { name: 'flux-notification-address' } });
    assert.equal(alert.spec.eventSeverity, 'error');
    assert.deepEqual(alert.spec.providerRef, { name: 'flux-failures' });
    assert.deepEqual(alert.spec.eventMetadata, { cluster: 'eu-prod-1' });
    assert.deepEqual(alert.spec.eventSources, [
      { kind: 'Kustomization', name: '*' },
      { kind: 'HelmRelease', name: '*', namespace: 'cert-manager' },
      { kind: 'HelmRelease', name: '*' },
      { kind: 'HelmRelease', name: '*', namespace: 'monitoring' },
    ]);
    assert.equal(parse(renderNotifications('a', 'generic', 'n', 's', []).split('---\n')[0]!).metadata.namespace, 'flux-system');
  });
});
