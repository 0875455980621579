/**
 * js-yaml's reading of kustomize's output is the yaml package's, or no
 * answer: checked on texts the yaml package writes in every style, on plain
 * scalars at the edges of YAML 1.2's core schema (as values, keys and items),
 * and on what is not plain data (anchors, aliases, tags, null keys).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseAllDocuments, stringify, type ToStringOptions } from 'yaml';
import { plainDataDocuments } from './plain-data-yaml.js';

/** The yaml package's values for `text`, or undefined when it reports an error. */
function yamlPackageDocuments(text: string): unknown[] | undefined {
  const documents: unknown[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) return undefined;
    const value: unknown = document.toJS({ maxAliasCount: 100 });
    if (value !== null && value !== undefined) documents.push(value);
  }
  return documents;
}

/** The property: no answer, or the yaml package's answer (and never one where it reports an error). */
function agrees(text: string): boolean {
  const fast = plainDataDocuments(text);
  if (fast === undefined) return false;
  assert.deepStrictEqual(fast, yamlPackageDocuments(text), JSON.stringify(text));
  return true;
}

const styles = fc.record({
  defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE', 'BLOCK_LITERAL', 'BLOCK_FOLDED'),
  defaultKeyType: fc.constantFrom(null, 'PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE'),
  collectionStyle: fc.constantFrom('any', 'block', 'flow'),
  lineWidth: fc.constantFrom(0, 20, 80),
  indent: fc.constantFrom(2, 4),
  indentSeq: fc.boolean(),
}) as fc.Arbitrary<ToStringOptions>;

/** Plain scalars at the edges of the core schema and of the YAML 1.1 one kustomize's Go parser knows. */
const edgeScalar = fc.constantFrom(
  ...['0o17', '0o8', '0x1F', '0x', '0b11', '-0', '+12', '012', '1_000', '12345678901234567890', '0.0', '-0.0', '1.', '.5', '-.5', '+.5'],
  ...['1e3', '1E+3', '-1.5e-3', '.5e1', '1e', '.inf', '-.Inf', '+.INF', '.nan', '.NaN', '.NAN', 'nan', 'inf'],
  ...['true', 'True', 'TRUE', 'tRue', 'false', 'yes', 'No', 'on', 'OFF', 'y', 'n'],
  ...['~', 'null', 'Null', 'NULL', 'nULL', ''],
  ...['2001-12-14', '2001-12-14t21:59:43.10-05:00', '12:30:45', '=', '<<', 'a b', '-', 'foo#bar', 'v1.2.3', '1.2.3', '0777', '1:20'],
);

const edgeDocument = fc
  .array(fc.tuple(edgeScalar, edgeScalar, fc.constantFrom('value', 'key', 'item', 'flow')), { minLength: 1, maxLength: 6 })
  .map((entries) =>
    entries
      .map(([a, b, place], i) => {
        if (place === 'key') return `${a}: k${i}\n`;
        if (place === 'item') return `l${i}:\n  - ${a}\n  - ${b}\n`;
        if (place === 'flow') return `f${i}: {x: ${a}, y: [${b}]}\n`;
        return `v${i}: ${a}\n`;
      })
      .join(''),
  );

/** Objects of any JSON values, strings of any Unicode among them. */
const manifestLike = fc.dictionary(fc.string({ unit: 'grapheme' }), fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' }));

describe('plainDataDocuments', () => {
  it('reads what the yaml package writes, in every style, as the yaml package reads it, and answers for most of it', () => {
    let answered = 0;
    fc.assert(
      fc.property(fc.array(manifestLike, { minLength: 1, maxLength: 3 }), styles, (values, options) => {
        if (agrees(values.map((value) => stringify(value, options)).join('---\n'))) answered++;
      }),
      { numRuns: 500 },
    );
    assert.ok(answered > 250, `answered ${answered} of 500`);
  });

  it('resolves plain scalars at the edges of the core schema as the yaml package does, as values, keys and items', () => {
    fc.assert(
      fc.property(edgeDocument, (text) => {
        agrees(text);
      }),
      { numRuns: 1000 },
    );
    assert.equal(agrees('a: 0x1F\nb: -.5\nc: 0b11\nd: .NaN\ne: yes\nf: 2001-12-14\n1: one\n'), true);
  });

  it('answers for kustomize-shaped output, multi-line strings and escapes included', () => {
    const text = [
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    app.kubernetes.io/name: web\n  name: web\n  namespace: apps\n',
      'data:\n  config.json: |\n    {"url": "/d/x?var-a=$${a}&var-b=*b", "ok": !true}\n  motd: "caf\\u00e9\\tbar"\n  empty: ""\n',
    ].join('');
    assert.equal(agrees(`${text}---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n`), true);
  });

  it('leaves anchors, aliases and an alias bomb to the yaml package, and never expands one', () => {
    assert.equal(plainDataDocuments('a: &x {b: 1}\nc: *x\n'), undefined);
    assert.equal(plainDataDocuments('- &x 1\n'), undefined);
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 12; i++)
      bomb.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    assert.equal(plainDataDocuments(`${bomb.join('\n')}\n`), undefined);
  });

  it('leaves tags it does not know, null and explicit keys, directives, duplicate keys and documents that are no mapping to the yaml package', () => {
    for (const text of [
      '|1-\n ;\n---\n{}\n',
      'e: |\n  inside\n\t\n',
      'l:\n  - -\n  - 1\n',
      '- a\n',
      'a: !!binary aGk=\n',
      'a: !Foo x\n',
      'a: ! 12\n',
      '~: x\n',
      'null: x\n',
      ': x\n',
      '{: x}\n',
      '? a\n: b\n',
      '%YAML 1.2\n---\na: 1\n',
      'a: 1\na: 2\n',
    ]) {
      assert.equal(plainDataDocuments(text), undefined, text);
    }
  });

  it('answers for known tags as the yaml package resolves them', () => {
    for (const text of ['a: !!str 12\n', 'a: !!int "12"\n', 'a: !!float 1.5\n', 'a: !!null ""\n', 'a: !!bool true\n']) assert.equal(agrees(text), true, text);
  });
});
