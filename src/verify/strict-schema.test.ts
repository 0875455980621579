import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { strictSchemaOf } from './strict-schema.js';

describe('strictSchemaOf', () => {
  const schema = strictSchemaOf({
    type: 'object',
    description: 'dropped',
    properties: {
      spec: {
        type: 'object',
        properties: {
          port: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
          note: { type: 'string', nullable: true, default: 'x' },
          mode: { type: 'string', enum: ['a', 'b'], nullable: true },
          values: { 'x-kubernetes-preserve-unknown-fields': true, type: 'object', properties: { known: { type: 'string' } } },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          when: { type: 'string', format: 'go-duration' },
        },
        'x-kubernetes-validations': [{ rule: 'has(self.port)' }],
      },
    },
  });
  const spec = (schema.properties as Record<string, Record<string, unknown>>).spec!;
  const field = (name: string) => (spec.properties as Record<string, Record<string, unknown>>)[name]!;

  it('closes objects that list properties, and only those', () => {
    assert.equal(schema.additionalProperties, false);
    assert.equal(spec.additionalProperties, false);
    assert.equal(field('values').additionalProperties, undefined, 'preserve-unknown-fields stays open');
    assert.deepEqual(field('labels').additionalProperties, { type: 'string' }, 'a map keeps its value schema');
  });

  it('spells int-or-string and nullable for ajv and drops what only the API server reads', () => {
    assert.deepEqual(field('port'), { type: ['integer', 'string'], 'x-kubernetes-int-or-string': true });
    assert.deepEqual(field('note'), { type: ['string', 'null'] });
    assert.deepEqual(field('mode'), { type: ['string', 'null'], enum: ['a', 'b', null] });
    assert.equal(field('when').format, undefined, 'an unknown format is dropped, not half-checked');
    assert.equal(schema.description, undefined);
    assert.equal(spec['x-kubernetes-validations'], undefined);
  });

  it('checks ObjectMeta strictly and requires metadata', () => {
    const metadata = (schema.properties as Record<string, Record<string, unknown>>).metadata!;
    assert.equal(metadata.additionalProperties, false);
    assert.deepEqual(metadata.required, ['name']);
    assert.deepEqual(schema.required, ['metadata']);
  });
});
