import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { parse, stringify } from 'yaml';
import { ValidationError } from '../errors.js';
import { controllerUnseal } from '../../test/support/controller-unseal.js';
import { buildSealedSecret, scopeOfSealedSecret, type SealedSecretObject } from './sealed-secret.js';
import { parseSealingCertificate } from './sealing-certificate.js';
import { createTestCertificate } from './test-certificate.js';

const key = createTestCertificate();
const certificate = parseSealingCertificate(key.certificatePem);

type Schema = Record<string, unknown>;

// The CRD lets unknown fields through (the API server would drop them silently),
// so a misspelt field would pass; close every object that does not opt into
// unknown fields, as `kubectl apply --validate=strict` would.
function closeObjects(schema: Schema): Schema {
  const out: Schema = { ...schema };
  if (out.properties && typeof out.properties === 'object') {
    out.properties = Object.fromEntries(Object.entries(out.properties as Record<string, Schema>).map(([k, v]) => [k, closeObjects(v)]));
    if (out.additionalProperties === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) out.additionalProperties = false;
  }
  if (out.items && typeof out.items === 'object') out.items = closeObjects(out.items as Schema);
  return out;
}

const crd = parse(readFileSync(new URL('../../schemas/crds/bitnami.com_sealedsecrets.yaml', import.meta.url), 'utf8')) as {
  spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: Schema } }> };
};
const v1alpha1 = crd.spec.versions.find((v) => v.name === 'v1alpha1');
assert.ok(v1alpha1, 'the CRD serves v1alpha1');
const crdSchema = closeObjects(v1alpha1.schema.openAPIV3Schema);
// The CRD leaves metadata as a bare object (the API server owns ObjectMeta); check the part we write.
(crdSchema.properties as Record<string, Schema>).metadata = {
  type: 'object',
  required: ['name', 'namespace'],
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
  },
};
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const validateCrd = ajv.compile(crdSchema);

const base = {
  name: 'postgresql-credentials',
  namespace: 'database',
  data: { 'postgres-password': 'pw-0123456789', 'replication-password': Buffer.from([1, 2, 3]), 'a-first': 'x' },
  certificate,
} as const;

describe('buildSealedSecret', () => {
  for (const scope of ['strict', 'namespace-wide', 'cluster-wide'] as const) {
    it(`builds a ${scope} SealedSecret that validates against the CRD and that the controller would unseal`, () => {
      const obj = buildSealedSecret({ ...base, scope });

      assert.ok(validateCrd(obj), ajv.errorsText(validateCrd.errors));
      assert.equal(obj.apiVersion, 'bitnami.com/v1alpha1');
      assert.equal(obj.kind, 'SealedSecret');
      assert.deepEqual(controllerUnseal(obj, key.privateKey), {
        'a-first': Buffer.from('x'),
        'postgres-password': Buffer.from('pw-0123456789'),
        'replication-password': Buffer.from([1, 2, 3]),
      });
      assert.equal(scopeOfSealedSecret(obj), scope);
    });
  }

  it('declares the scope on its own metadata as the string "true", and not at all for strict', () => {
    assert.equal(buildSealedSecret({ ...base, scope: 'strict' }).metadata.annotations, undefined);
    const nsWide = buildSealedSecret({ ...base, scope: 'namespace-wide' });
    assert.deepEqual(nsWide.metadata.annotations, { 'sealedsecrets.bitnami.com/namespace-wide': 'true' });
    const clusterWide = buildSealedSecret({ ...base, scope: 'cluster-wide' });
    assert.deepEqual(clusterWide.metadata.annotations, { 'sealedsecrets.bitnami.com/cluster-wide': 'true' });

    // Serialized, the value stays a quoted string: an unquoted `true` is not honoured by the controller.
    const yaml = stringify(clusterWide);
    assert.match(yaml, /^ {4}sealedsecrets\.bitnami\.com\/cluster-wide: "true"$/m);
    assert.equal(scopeOfSealedSecret(parse(yaml) as SealedSecretObject), 'cluster-wide');
  });

  it('writes sorted keys, the template metadata and type, and drops last-applied and stale scope annotations', () => {
    const obj = buildSealedSecret({
      ...base,
      scope: 'namespace-wide',
      type: 'kubernetes.io/basic-auth',
      immutable: true,
      labels: { 'z.example/tier': 'db', 'app.kubernetes.io/name': 'postgresql' },
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': '{"stringData":{"postgres-password":"pw-0123456789"}}',
        'sealedsecrets.bitnami.com/cluster-wide': 'true',
        'example.com/owner': 'platform',
      },
    });

    assert.deepEqual(Object.keys(obj.spec.encryptedData), ['a-first', 'postgres-password', 'replication-password']);
    assert.deepEqual(obj.spec.template, {
      metadata: {
        name: 'postgresql-credentials',
        namespace: 'database',
        labels: { 'app.kubernetes.io/name': 'postgresql', 'z.example/tier': 'db' },
        annotations: { 'example.com/owner': 'platform', 'sealedsecrets.bitnami.com/namespace-wide': 'true' },
      },
      type: 'kubernetes.io/basic-auth',
      immutable: true,
    });
    assert.deepEqual(Object.keys(obj.spec.template.metadata.labels ?? {}), ['app.kubernetes.io/name', 'z.example/tier']);
    assert.equal(scopeOfSealedSecret(obj), 'namespace-wide');
    assert.ok(!JSON.stringify(obj).includes('pw-0123456789'), 'no plaintext anywhere');
    assert.ok(validateCrd(obj), ajv.errorsText(validateCrd.errors));
  });

  it('is checked by a CRD gate that does catch a misspelt field', () => {
    const obj = buildSealedSecret({ ...base, scope: 'strict' });
    const { template, ...rest } = obj.spec;
    assert.equal(validateCrd({ ...obj, spec: { ...rest, templat: template } }), false);
    assert.equal(validateCrd({ ...obj, spec: { ...obj.spec, template: { ...template, type: 1 } } }), false);
  });

  it('defaults the type to Opaque', () => {
    assert.equal(buildSealedSecret({ ...base, scope: 'strict' }).spec.template.type, 'Opaque');
  });

  it('produces a SealedSecret that stops working when copied under another name or namespace', () => {
    const strict = buildSealedSecret({ ...base, scope: 'strict' });
    const renamed = { ...strict, metadata: { ...strict.metadata, name: 'copy' } };
    assert.throws(() => controllerUnseal(renamed, key.privateKey), /oaep decoding error/);

    const nsWide = buildSealedSecret({ ...base, scope: 'namespace-wide' });
    assert.doesNotThrow(() => controllerUnseal({ ...nsWide, metadata: { ...nsWide.metadata, name: 'copy' } }, key.privateKey));
    assert.throws(() => controllerUnseal({ ...nsWide, metadata: { ...nsWide.metadata, namespace: 'other' } }, key.privateKey), /oaep decoding error/);

    // Dropping the scope annotation turns it into strict, which the value was not sealed for.
    assert.throws(
      () => controllerUnseal({ ...nsWide, metadata: { name: nsWide.metadata.name, namespace: 'database' } }, key.privateKey),
      /oaep decoding error/,
    );
  });

  it('names every bad field', () => {
    assert.throws(
      () =>
        buildSealedSecret({
          name: 'Bad_Name',
          namespace: 'Not A Namespace',
          scope: 'strict',
          data: { 'bad key!': 'x', ok: 'y' },
          certificate,
        }),
      (e: unknown) => {
        assert.ok(e instanceof ValidationError);
        assert.deepEqual(
          e.issues.map((i) => i.field),
          ['metadata.name', 'metadata.namespace', 'data.bad key!'],
        );
        return true;
      },
    );
    assert.throws(
      () => buildSealedSecret({ ...base, data: {}, scope: 'strict' }),
      (e: unknown) => e instanceof ValidationError && e.issues[0]?.field === 'data',
    );
    assert.throws(
      () => buildSealedSecret({ ...base, namespace: '', scope: 'strict' }),
      (e: unknown) => e instanceof ValidationError && e.issues[0]?.field === 'metadata.namespace' && /is required/.test(e.message),
    );
    assert.throws(
      () => buildSealedSecret({ ...base, scope: 'everywhere' as never }),
      (e: unknown) => e instanceof ValidationError && e.issues[0]?.field === 'scope',
    );
  });

  it('accepts a DNS-1123 subdomain name with dots', () => {
    const obj = buildSealedSecret({ ...base, name: 'tls.example.net', scope: 'strict' });
    assert.equal(obj.metadata.name, 'tls.example.net');
  });
});

describe('scopeOfSealedSecret', () => {
  it('reads only the SealedSecret’s own annotations, only the string "true", cluster-wide first', () => {
    assert.equal(scopeOfSealedSecret({ metadata: {} }), 'strict');
    assert.equal(scopeOfSealedSecret({}), 'strict');
    assert.equal(scopeOfSealedSecret({ metadata: { annotations: { 'sealedsecrets.bitnami.com/cluster-wide': true } } }), 'strict');
    assert.equal(scopeOfSealedSecret({ metadata: { annotations: { 'sealedsecrets.bitnami.com/namespace-wide': 'True' } } }), 'strict');
    assert.equal(
      scopeOfSealedSecret({
        metadata: { annotations: { 'sealedsecrets.bitnami.com/namespace-wide': 'true', 'sealedsecrets.bitnami.com/cluster-wide': 'true' } },
      }),
      'cluster-wide',
    );
  });
});
