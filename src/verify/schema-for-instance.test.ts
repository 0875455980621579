import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import fc from 'fast-check';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import { isRecord } from '../model/is-record.js';
import { schemaForInstance } from './schema-for-instance.js';
import { strictSchemaOf } from './strict-schema.js';

/** The strict schema of one served version of a shipped CRD. */
function strictSchema(file: string, version: string): Record<string, unknown> {
  const [crd] = loadAll(readFileSync(join(defaultCrdSchemaDir(), file), 'utf8'), undefined, { schema: CORE_SCHEMA }) as {
    spec: { versions: { name: string; schema: { openAPIV3Schema: unknown } }[] };
  }[];
  const found = crd!.spec.versions.find((v) => v.name === version);
  assert.ok(found, `${file} has no ${version}`);
  return strictSchemaOf(found.schema.openAPIV3Schema);
}

/**
 * Objects shaped by the schema, and often not: at each level a few of its
 * fields, now and then a field it does not have, a value of the wrong type,
 * or a value from outside an enum.
 */
function objectsOf(schema: unknown): fc.Arbitrary<unknown> {
  const memo = new Map<unknown, fc.Arbitrary<unknown>>();
  const wrong = fc.oneof(
    fc.string({ maxLength: 4 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
    fc.constant({}),
  );
  const of = (node: unknown, depth: number): fc.Arbitrary<unknown> => {
    if (!isRecord(node) || depth > 12) return fc.jsonValue({ maxDepth: 1 });
    const known = memo.get(node);
    if (known !== undefined) return known;
    const type = Array.isArray(node.type) ? node.type.find((t) => t !== 'null') : node.type;
    let typed: fc.Arbitrary<unknown>;
    if (Array.isArray(node.enum)) typed = fc.oneof(fc.constantFrom(...node.enum), fc.string({ maxLength: 3 }));
    else if (isRecord(node.properties) || type === 'object') {
      const properties = isRecord(node.properties) ? node.properties : {};
      const names = Object.keys(properties);
      const extra = isRecord(node.additionalProperties) ? ['k1', 'k2'] : [];
      typed = fc
        .tuple(
          fc.subarray([...names, ...extra], { maxLength: Math.min(4, names.length + extra.length) }),
          fc.option(fc.constantFrom('unknownField', 'spec', 'dependOn'), { freq: 5 }),
        )
        .chain(([chosen, stray]) =>
          fc.record(
            Object.fromEntries([
              ...chosen.map((name) => [name, fc.constant(null).chain(() => of(properties[name] ?? node.additionalProperties, depth + 1))]),
              ...(stray !== null && !chosen.includes(stray) ? [[stray, fc.string({ maxLength: 3 })]] : []),
            ]),
          ),
        );
    } else if (type === 'array')
      typed = fc.array(
        fc.constant(null).chain(() => of(node.items, depth + 1)),
        { maxLength: 2 },
      );
    else if (type === 'string') typed = fc.string({ maxLength: 6 });
    else if (type === 'integer') typed = fc.integer({ min: -3, max: 70000 });
    else if (type === 'number') typed = fc.double({ noNaN: true });
    else if (type === 'boolean') typed = fc.boolean();
    else typed = fc.jsonValue({ maxDepth: 2 });
    const arbitrary = fc.oneof({ weight: 8, arbitrary: typed }, { weight: 1, arbitrary: wrong });
    memo.set(node, arbitrary);
    return arbitrary;
  };
  return of(schema, 0);
}

/** What a finding is made of: the same errors, and the same field names for a suggestion. */
function findings(errors: readonly ErrorObject[] | null | undefined): unknown[] {
  return (errors ?? []).map((error) => ({
    instancePath: error.instancePath,
    schemaPath: error.schemaPath,
    keyword: error.keyword,
    params: error.params,
    message: error.message,
    data: error.data,
    fields: isRecord(error.parentSchema) && isRecord(error.parentSchema.properties) ? Object.keys(error.parentSchema.properties) : undefined,
  }));
}

function newAjv(): Ajv {
  // As SchemaValidator configures it, minus the Go pattern dialect these CRDs do not need.
  const ajv = new Ajv({ strict: false, allErrors: true, verbose: true, unicodeRegExp: false, logger: false, code: { optimize: false } });
  addFormatsPlugin.default(ajv);
  return ajv;
}

const KINDS: readonly [string, string, string][] = [
  ['ClusterIssuer', 'cert-manager.io_clusterissuers.yaml', 'v1'],
  ['Certificate', 'cert-manager.io_certificates.yaml', 'v1'],
  ['HelmRelease', 'helm.toolkit.fluxcd.io_helmreleases.yaml', 'v2'],
  ['Kustomization', 'kustomize.toolkit.fluxcd.io_kustomizations.yaml', 'v1'],
];

/**
 * What the shipped CRDs have little or none of: maps of objects
 * (`additionalProperties` with properties) and branches that constrain fields
 * (`anyOf`, `oneOf`, `allOf`, `not` with properties), as structural schemas allow.
 */
const BRANCHES_AND_MAPS = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        mode: { type: 'string' },
        a: { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'string' } }, additionalProperties: false },
        b: { type: 'string' },
      },
      additionalProperties: false,
      anyOf: [{ properties: { a: { properties: { x: { minimum: 5 } } } } }, { required: ['b'] }],
      oneOf: [{ properties: { mode: { enum: ['one'] } } }, { properties: { mode: { enum: ['two'] } }, required: ['mode'] }],
      allOf: [{ properties: { b: { maxLength: 2 } } }],
      not: { properties: { b: { enum: ['no'] } }, required: ['b'] },
    },
    ports: {
      type: 'object',
      additionalProperties: { type: 'object', properties: { port: { type: 'integer', maximum: 10 }, name: { type: 'string' } }, additionalProperties: false },
    },
  },
  additionalProperties: false,
};

describe('schemaForInstance', () => {
  const cases: [string, () => Record<string, unknown>][] = [
    ...KINDS.map(([kind, file, version]): [string, () => Record<string, unknown>] => [kind, () => strictSchema(file, version)]),
    ['object of a schema with branches and maps of objects', () => BRANCHES_AND_MAPS],
  ];
  for (const [kind, schemaOf] of cases) {
    it(`gives every generated ${kind}, valid or not, exactly the findings of the whole schema`, () => {
      const schema = schemaOf();
      const ajv = newAjv();
      const whole = ajv.compile(schema);
      let invalid = 0;
      fc.assert(
        fc.property(objectsOf(schema), (object) => {
          whole(object);
          const expected = findings(whole.errors);
          if (expected.length > 0) invalid++;
          const cut = ajv.compile(schemaForInstance(schema, object) as Record<string, unknown>);
          cut(object);
          assert.deepEqual(findings(cut.errors), expected);
        }),
        { numRuns: 150 },
      );
      assert.ok(invalid > 20, `only ${invalid} of the generated objects were invalid: the property would prove little`);
    });
  }

  it('compiles a real issuer in a fraction of the whole schema, and keeps the names of the fields it cut', () => {
    const schema = strictSchema('cert-manager.io_clusterissuers.yaml', 'v1');
    const issuer = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name: 'letsencrypt' },
      spec: {
        acme: {
          email: 'ops@example.net',
          server: 'https://acme-v02.api.letsencrypt.org/directory',
          privateKeySecretRef: { name: 'letsencrypt' },
          solvers: [{ http01: { ingress: { ingressClassName: 'nginx' } } }],
        },
      },
    };
    const cut = schemaForInstance(schema, issuer);
    assert.ok(JSON.stringify(cut).length * 4 < JSON.stringify(schema).length, 'the cut schema is much smaller');
    const spec = (cut as { properties: { spec: { properties: Record<string, unknown> } } }).properties.spec;
    assert.deepEqual(
      Object.keys(spec.properties),
      Object.keys((schema as { properties: { spec: { properties: Record<string, unknown> } } }).properties.spec.properties),
    );
    assert.deepEqual(spec.properties['vault'], {}, 'a field the issuer does not have is cut to {}');
  });
});
