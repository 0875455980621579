import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ValidationError } from '../errors.js';
import { platformDir } from '../package-paths.js';
import { scopeLabel } from '../sealing/seal.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { unsealValue } from '../sealing/unseal.js';
import { parsePlatformDescriptor } from './platform-descriptor.js';
import { renderSealedCredentials, sealedFileOf, type SealedCredentialsOptions } from './sealed-credentials.js';
import { sealedWithOtherCertificate } from './sealed-with.js';

const controller = createTestCertificate();
const certificate = parseSealingCertificate(controller.certificatePem);
const { credentials } = parsePlatformDescriptor(readFileSync(join(platformDir(), 'scaffold.yaml'), 'utf8'));

interface Sealed {
  kind: string;
  metadata: { name: string; namespace: string; annotations?: Record<string, string> };
  spec: { encryptedData: Record<string, string>; template: { type: string; metadata: { name: string; namespace: string } } };
}

const REGISTRY_AUTH = '{"auths":{"ghcr.io":{"username":"robot","password":"issued-by-the-registry"}}}';
const NOTIFICATION_ADDRESS = 'https://hooks.slack.com/services/T0/B0/issued-by-slack';

function render(overrides: Partial<SealedCredentialsOptions> = {}) {
  return renderSealedCredentials({
    credentials,
    existing: new Map(),
    certificate,
    random: randomBytes,
    registryAuth: REGISTRY_AUTH,
    notificationAddress: NOTIFICATION_ADDRESS,
    ...overrides,
  });
}

/** Every value of every sealed file, decrypted with the controller's key under the strict scope. */
function unsealAll(files: ReadonlyMap<string, string>): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const [file, text] of files) {
    if (!/\/sealed-[^/]+\.yaml$/.test(file)) continue;
    const sealed = parse(text) as Sealed;
    const { name, namespace } = sealed.metadata;
    const data: Record<string, string> = {};
    for (const [key, ciphertext] of Object.entries(sealed.spec.encryptedData)) {
      data[key] = unsealValue({ privateKey: controller.privateKey, label: scopeLabel('strict', namespace, name), ciphertext }).toString('utf8');
    }
    out.set(`${namespace}/${name}`, data);
  }
  return out;
}

describe('renderSealedCredentials', () => {
  it('seals every credential of the descriptor into <layer>/sealed/, listed by a kustomization per layer', () => {
    const { files, outcomes } = render();
    assert.deepEqual([...files.keys()].sort(), [
      'apps/sealed/kustomization.yaml',
      'apps/sealed/sealed-registry-pull-secret.yaml',
      'apps/sealed/sealed-tcr-database.yaml',
      'cert-manager-config/sealed/kustomization.yaml',
      'cert-manager-config/sealed/sealed-flux-notification-address.yaml',
      'database/sealed/kustomization.yaml',
      'database/sealed/sealed-postgresql-credentials.yaml',
      'database/sealed/sealed-rabbitmq-credentials.yaml',
    ]);
    assert.deepEqual((parse(files.get('apps/sealed/kustomization.yaml')!) as { resources: string[] }).resources, [
      'sealed-registry-pull-secret.yaml',
      'sealed-tcr-database.yaml',
    ]);
    assert.deepEqual(
      outcomes.map((o) => `${o.namespace}/${o.name}:${o.action}`),
      [
        'tcr/registry-pull-secret:supplied',
        'tcr/tcr-database:generated',
        'flux-system/flux-notification-address:supplied',
        'database/postgresql-credentials:generated',
        'database/rabbitmq-credentials:generated',
      ],
    );
  });

  it('writes SealedSecrets in strict scope, with the Secret type and the scaffolder label in the template', () => {
    const { files } = render();
    const sealed = parse(files.get('apps/sealed/sealed-registry-pull-secret.yaml')!) as Sealed & { apiVersion: string };
    assert.equal(sealed.apiVersion, 'bitnami.com/v1alpha1');
    assert.equal(sealed.kind, 'SealedSecret');
    // The certificate it was sealed with, on the SealedSecret only: the template (the Secret) does not carry it.
    assert.deepEqual(sealed.metadata, {
      name: 'registry-pull-secret',
      namespace: 'tcr',
      annotations: { 'gitops-scaffolder.io/sealed-with': `sha256:${certificate.fingerprint}` },
    });
    assert.equal(sealed.spec.template.type, 'kubernetes.io/dockerconfigjson');
    assert.deepEqual(sealed.spec.template.metadata, {
      name: 'registry-pull-secret',
      namespace: 'tcr',
      labels: { 'app.kubernetes.io/managed-by': 'gitops-scaffolder' },
    });
    // Strict scope: the value does not decrypt as any other Secret.
    assert.throws(
      () =>
        unsealValue({
          privateKey: controller.privateKey,
          label: scopeLabel('strict', 'tcr', 'other'),
          ciphertext: sealed.spec.encryptedData['.dockerconfigjson']!,
        }),
      ValidationError,
    );
    assert.throws(
      () =>
        unsealValue({
          privateKey: controller.privateKey,
          label: scopeLabel('namespace-wide', 'tcr', 'registry-pull-secret'),
          ciphertext: sealed.spec.encryptedData['.dockerconfigjson']!,
        }),
      ValidationError,
    );
  });

  it("generates credentials of the declared length and charset; the app password equals PostgreSQL's", () => {
    const values = unsealAll(render().files);
    const pg = values.get('database/postgresql-credentials')!;
    const rabbit = values.get('database/rabbitmq-credentials')!;
    assert.match(pg['postgres-password']!, /^[A-Za-z0-9]{32}$/);
    assert.match(pg.password!, /^[A-Za-z0-9]{32}$/);
    assert.match(rabbit['rabbitmq-password']!, /^[A-Za-z0-9]{32}$/);
    assert.match(rabbit['rabbitmq-erlang-cookie']!, /^[A-Za-z0-9]{64}$/);
    assert.deepEqual(values.get('tcr/tcr-database'), { DATABASE_PASSWORD: pg.password });
    const distinct = new Set([pg['postgres-password'], pg.password, rabbit['rabbitmq-password'], rabbit['rabbitmq-erlang-cookie']]);
    assert.equal(distinct.size, 4);

    assert.equal(values.get('tcr/registry-pull-secret')!['.dockerconfigjson'], REGISTRY_AUTH, 'the supplied pull secret, never a generated one');
  });

  it('writes no plaintext value into any file', () => {
    const { files } = render();
    const everything = [...files.values()].join('\n');
    for (const data of unsealAll(files).values()) {
      for (const value of Object.values(data)) {
        assert.ok(!everything.includes(value));
        assert.ok(!everything.includes(Buffer.from(value).toString('base64')));
      }
    }
  });

  it('keeps existing sealed files byte for byte, and seals fresh ones when rotation is asked for', () => {
    const first = render();
    const existing = new Map(first.files);
    const again = render({ existing, certificate: undefined });
    assert.deepEqual(again.files, first.files);
    assert.ok(again.outcomes.every((o) => o.action === 'kept'));

    const rotated = render({ existing, rotate: true });
    for (const c of credentials) assert.notEqual(rotated.files.get(sealedFileOf(c)), first.files.get(sealedFileOf(c)), c.name);
    const before = unsealAll(first.files);
    const after = unsealAll(rotated.files);
    assert.notEqual(after.get('database/postgresql-credentials')!.password, before.get('database/postgresql-credentials')!.password);
    assert.equal(after.get('tcr/tcr-database')!.DATABASE_PASSWORD, after.get('database/postgresql-credentials')!.password);
  });

  it('re-seals both sides of a sameAs when one is missing, so they stay equal', () => {
    const first = render();
    const existing = new Map(first.files);
    existing.delete('apps/sealed/sealed-tcr-database.yaml');
    const { files, outcomes } = render({ existing });
    assert.deepEqual(outcomes.map((o) => `${o.name}:${o.action}`).sort(), [
      'flux-notification-address:kept',
      'postgresql-credentials:generated',
      'rabbitmq-credentials:kept',
      'registry-pull-secret:kept',
      'tcr-database:generated',
    ]);
    const values = unsealAll(files);
    assert.equal(values.get('tcr/tcr-database')!.DATABASE_PASSWORD, values.get('database/postgresql-credentials')!.password);
  });

  it('seals a file anew when it is no longer the same Secret with the same keys', () => {
    const first = render();
    const existing = new Map(first.files);
    const file = 'database/sealed/sealed-rabbitmq-credentials.yaml';
    existing.set(file, existing.get(file)!.replace(/^ {4}rabbitmq-erlang-cookie: .*$/m, ''));
    const { outcomes } = render({ existing });
    assert.equal(outcomes.find((o) => o.name === 'rabbitmq-credentials')!.action, 'generated');
    assert.equal(outcomes.find((o) => o.name === 'postgresql-credentials')!.action, 'kept');
  });

  it('rotates only the credentials named, with their sameAs partners, and records the new certificate', () => {
    const first = render();
    const renewed = parseSealingCertificate(createTestCertificate().certificatePem);
    const { files, outcomes } = render({ existing: new Map(first.files), certificate: renewed, rotate: ['tcr/tcr-database', 'rabbitmq-credentials'] });
    assert.deepEqual(outcomes.map((o) => `${o.name}:${o.action}`).sort(), [
      'flux-notification-address:kept',
      'postgresql-credentials:generated',
      'rabbitmq-credentials:generated',
      'registry-pull-secret:kept',
      'tcr-database:generated',
    ]);
    assert.equal(
      files.get('apps/sealed/sealed-registry-pull-secret.yaml'),
      first.files.get('apps/sealed/sealed-registry-pull-secret.yaml'),
      'kept byte for byte',
    );
    // Only the kept one is still sealed with the old key.
    assert.deepEqual(
      sealedWithOtherCertificate(files, renewed).map((s) => [s.file, s.sealedWith]),
      [
        ['apps/sealed/sealed-registry-pull-secret.yaml', `sha256:${certificate.fingerprint}`],
        ['cert-manager-config/sealed/sealed-flux-notification-address.yaml', `sha256:${certificate.fingerprint}`],
      ],
    );
    assert.deepEqual(sealedWithOtherCertificate(first.files, certificate), [], 'all sealed with the first one');
  });

  it('refuses to rotate a credential the descriptor does not declare, listing the ones it does', () => {
    assert.throws(
      () => render({ existing: new Map(render().files), rotate: ['nope'] }),
      (error: unknown) =>
        error instanceof ValidationError && /nope: no such credential in scaffold\.yaml \(known: database\/postgresql-credentials, /.test(error.message),
    );
  });

  it('never invents a registry credential: without registry auth no pull secret is written, nor listed', () => {
    const { files, outcomes } = render({ registryAuth: undefined });
    assert.equal(files.get('apps/sealed/sealed-registry-pull-secret.yaml'), undefined);
    assert.deepEqual((parse(files.get('apps/sealed/kustomization.yaml')!) as { resources: string[] }).resources, ['sealed-tcr-database.yaml']);
    assert.equal(outcomes.find((o) => o.name === 'registry-pull-secret')!.action, 'omitted');
    // Not on rotation either, and not by name.
    for (const rotate of [true, ['registry-pull-secret']]) {
      const again = render({ registryAuth: undefined, existing: new Map(files), rotate });
      assert.equal(again.files.get('apps/sealed/sealed-registry-pull-secret.yaml'), undefined);
    }
    // One sealed before (supplied then) is kept as it is, never replaced by an invented one.
    const supplied = render();
    const kept = render({ registryAuth: undefined, existing: new Map(supplied.files), rotate: true });
    assert.equal(kept.files.get('apps/sealed/sealed-registry-pull-secret.yaml'), supplied.files.get('apps/sealed/sealed-registry-pull-secret.yaml'));
    assert.equal(unsealAll(kept.files).get('tcr/registry-pull-secret')!['.dockerconfigjson'], REGISTRY_AUTH);
  });

  it('uses a supplied registry pull secret exactly as given', () => {
    const supplied = '{"auths":{"registry.eu-prod-1.example.net":{"auth":"dXNlcjpzZWNyZXQ="}}}\n';
    const { files, outcomes } = render({ registryAuth: supplied });
    assert.equal(unsealAll(files).get('tcr/registry-pull-secret')!['.dockerconfigjson'], supplied);
    assert.equal(outcomes.find((o) => o.name === 'registry-pull-secret')!.action, 'supplied');
  });

  it('refuses a registry pull secret that is not a docker config, without echoing it', () => {
    for (const bad of ['not json at all: hunter2', '{"hunter2": true}', '{"auths": {}}']) {
      assert.throws(
        () => render({ registryAuth: bad }),
        (error: unknown) => error instanceof ValidationError && error.issues[0]!.field === 'registry-auth' && !error.message.includes('hunter2'),
      );
    }
  });

  it("refuses to generate credentials without the cluster's certificate, naming the field", () => {
    assert.throws(
      () => render({ certificate: undefined }),
      (error: unknown) =>
        error instanceof ValidationError && error.issues[0]!.field === 'cert' && /needs the cluster's Sealed Secrets certificate/.test(error.message),
    );
  });
});
