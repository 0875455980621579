import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { ValidationError } from '../errors.js';
import { controllerUnseal } from '../../test/support/controller-unseal.js';
import { scopeOfSealedSecret, type SealedSecretObject } from './sealed-secret.js';
import { sealSecretManifest } from './seal-secret-manifest.js';
import { parseSealingCertificate } from './sealing-certificate.js';
import { createTestCertificate } from './test-certificate.js';

const key = createTestCertificate();
const certificate = parseSealingCertificate(key.certificatePem);

/** Parses the output and unseals it as the controller would (independent code: label from the SealedSecret's own metadata). */
function unsealOutput(yamlText: string): { obj: SealedSecretObject; values: Record<string, string> } {
  const obj = parse(yamlText) as SealedSecretObject;
  const values = Object.fromEntries(Object.entries(controllerUnseal(obj, key.privateKey)).map(([k, v]) => [k, v.toString('utf8')]));
  return { obj, values };
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

function issuesOf(fn: () => unknown): Array<{ field: string; message: string }> {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ValidationError, `expected a ValidationError, got ${String(e)}`);
    return [...e.issues];
  }
  assert.fail('expected a ValidationError');
}

describe('sealSecretManifest', () => {
  it('seals data (base64-decoded) and stringData (UTF-8), keeping type, labels and annotations', () => {
    const manifest = [
      'apiVersion: v1',
      'kind: Secret',
      'metadata:',
      '  name: app-credentials',
      '  namespace: tcr',
      '  labels: {app: web}',
      '  annotations:',
      '    example.com/owner: platform',
      '    kubectl.kubernetes.io/last-applied-configuration: |',
      `      {"apiVersion":"v1","kind":"Secret","stringData":{"api-token":"tok-SECRET-1"}}`,
      '  uid: 0b1c',
      '  resourceVersion: "42"',
      'type: kubernetes.io/basic-auth',
      'data:',
      `  username: ${b64('admin-SECRET-2')}`,
      // A literal block keeps the line breaks, which Kubernetes' base64 decoder skips.
      '  password: |',
      ...(b64('wrapped-and-long-SECRET-3'.repeat(4)).match(/.{1,20}/g) ?? []).map((l) => `    ${l}`),
      'stringData:',
      '  api-token: tok-SECRET-1',
      '  username: admin-from-stringData',
      '',
    ].join('\n');

    const out = sealSecretManifest(manifest, { certificate });
    const { obj, values } = unsealOutput(out);

    assert.deepEqual(values, {
      'api-token': 'tok-SECRET-1',
      password: 'wrapped-and-long-SECRET-3'.repeat(4),
      username: 'admin-from-stringData', // stringData wins, as the API server merges it
    });
    assert.deepEqual(obj.metadata, { name: 'app-credentials', namespace: 'tcr' });
    assert.deepEqual(obj.spec.template, {
      metadata: {
        name: 'app-credentials',
        namespace: 'tcr',
        labels: { app: 'web' },
        annotations: { 'example.com/owner': 'platform' },
      },
      type: 'kubernetes.io/basic-auth',
    });
    assert.ok(!/SECRET/.test(out), 'no plaintext value, not even through last-applied');
    assert.ok(!out.includes(b64('admin-SECRET-2')), 'no base64 of a value either');
  });

  it('reads JSON, with flags filling in name and namespace', () => {
    const json = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: {}, data: { token: b64('t0k') } });

    const { obj, values } = unsealOutput(sealSecretManifest(json, { certificate, name: 'registry-token', namespace: 'tcr' }));

    assert.equal(obj.metadata.name, 'registry-token');
    assert.equal(obj.metadata.namespace, 'tcr');
    assert.deepEqual(values, { token: 't0k' });
    assert.equal(obj.spec.template.type, 'Opaque');
  });

  it('lets flags override the manifest’s name and namespace, sealing for the new ones', () => {
    const manifest = 'apiVersion: v1\nkind: Secret\nmetadata: {name: old, namespace: old-ns}\nstringData: {k: v}\n';
    const { obj, values } = unsealOutput(sealSecretManifest(manifest, { certificate, name: 'new', namespace: 'new-ns' }));
    assert.deepEqual([obj.metadata.name, obj.metadata.namespace, obj.spec.template.metadata.name], ['new', 'new-ns', 'new']);
    assert.deepEqual(values, { k: 'v' });
  });

  it('seals for the requested scope, or the one the Secret’s annotations declare', () => {
    const manifest = 'apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\nstringData: {k: v}\n';
    const nsWide = sealSecretManifest(manifest, { certificate, scope: 'namespace-wide' });
    assert.match(nsWide, /^ {4}sealedsecrets\.bitnami\.com\/namespace-wide: "true"$/m);
    assert.deepEqual(unsealOutput(nsWide).values, { k: 'v' });

    const annotated = manifest.replace('namespace: n}', 'namespace: n, annotations: {sealedsecrets.bitnami.com/cluster-wide: "true"}}');
    const clusterWide = unsealOutput(sealSecretManifest(annotated, { certificate }));
    assert.equal(scopeOfSealedSecret(clusterWide.obj), 'cluster-wide');
    assert.deepEqual(clusterWide.values, { k: 'v' });

    assert.equal(scopeOfSealedSecret(unsealOutput(sealSecretManifest(annotated, { certificate, scope: 'strict' })).obj), 'strict');
  });

  it('keeps immutable and writes each sealed value on one line', () => {
    const manifest = `apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\nimmutable: true\ndata: {big: ${b64('x'.repeat(5000))}}\n`;
    const out = sealSecretManifest(manifest, { certificate });
    assert.equal((parse(out) as SealedSecretObject).spec.template.immutable, true);
    assert.match(out, /^ {4}big: [A-Za-z0-9+/]{6000,}={0,2}$/m);
  });

  it('rejects what is not one v1 Secret', () => {
    assert.deepEqual(
      issuesOf(() => sealSecretManifest('apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n', { certificate })).map((i) => i.field),
      ['kind'],
    );
    assert.deepEqual(
      issuesOf(() => sealSecretManifest('apiVersion: v2\nkind: Secret\n', { certificate })).map((i) => i.field),
      ['apiVersion'],
    );
    assert.match(issuesOf(() => sealSecretManifest('', { certificate }))[0]?.message ?? '', /exactly one Secret manifest, found 0/);
    const two = 'apiVersion: v1\nkind: Secret\n---\napiVersion: v1\nkind: Secret\n';
    assert.match(issuesOf(() => sealSecretManifest(two, { certificate }))[0]?.message ?? '', /found 2 documents/);
    assert.match(issuesOf(() => sealSecretManifest('- a\n- b\n', { certificate }))[0]?.message ?? '', /must be a Secret manifest/);
  });

  it('reports a YAML syntax error by position, without echoing the line', () => {
    const broken = 'apiVersion: v1\nkind: Secret\nstringData:\n  password: [hunter2-SECRET\n';
    const issues = issuesOf(() => sealSecretManifest(broken, { certificate }));
    assert.match(issues[0]?.message ?? '', /not valid YAML or JSON \(\w+ at line \d+, column \d+\)/);
    assert.ok(!JSON.stringify(issues).includes('SECRET'));
  });

  it('names the key whose data is not base64, without echoing the value', () => {
    const manifest = 'apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\ndata:\n  good: aGk=\n  bad: not*base64-SECRET\n  number: 1234\n';
    const issues = issuesOf(() => sealSecretManifest(manifest, { certificate }));
    assert.deepEqual(
      issues.map((i) => i.field),
      ['data.bad', 'data.number'],
    );
    assert.match(issues[0]?.message ?? '', /base64/);
    assert.ok(!JSON.stringify(issues).includes('SECRET'));
  });

  it('rejects a Secret with no data, and non-string stringData or annotations', () => {
    const empty = 'apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\ndata: {}\n';
    assert.deepEqual(
      issuesOf(() => sealSecretManifest(empty, { certificate })).map((i) => i.field),
      ['data'],
    );

    const typed =
      'apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n, annotations: {sealedsecrets.bitnami.com/cluster-wide: true}}\nstringData: {port: 5432}\n';
    assert.deepEqual(
      issuesOf(() => sealSecretManifest(typed, { certificate })).map((i) => i.field),
      ['metadata.annotations.sealedsecrets.bitnami.com/cluster-wide', 'stringData.port'],
    );
  });

  it('requires a DNS-1123 name and namespace, from the manifest or the flags', () => {
    const nameless = 'apiVersion: v1\nkind: Secret\nstringData: {k: v}\n';
    const issues = issuesOf(() => sealSecretManifest(nameless, { certificate }));
    assert.deepEqual(
      issues.map((i) => i.field),
      ['metadata.name', 'metadata.namespace'],
    );
    assert.match(issues[0]?.message ?? '', /--name/);
    assert.match(issues[1]?.message ?? '', /--namespace/);

    const bad = issuesOf(() => sealSecretManifest(nameless, { certificate, name: 'Has Space', namespace: 'UPPER' }));
    assert.deepEqual(
      bad.map((i) => i.field),
      ['metadata.name', 'metadata.namespace'],
    );
    assert.match(bad[0]?.message ?? '', /DNS-1123/);
  });
});
