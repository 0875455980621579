/**
 * A stream is parsed document by document (each document's values kept for
 * the next text that holds it), and the answer is the one a parse of the
 * whole stream gives: the same values, the same first error, directives
 * honoured. Checked on generated streams of hostile documents against the
 * yaml package parsing the stream whole (parseStream).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { stringify, type ToStringOptions } from 'yaml';
import { manifestDocuments, parseStream } from './manifest-documents.js';

const piece = fc.oneof(
  fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean())).map((o) => stringify(o)),
  fc.constantFrom(
    'a: yes\n',
    '%YAML 1.1\n',
    '%TAG ! tag:example.com,2000:\n',
    '--- |\n  text\n',
    '--- !!str\n',
    '...\n',
    '# only a comment\n',
    'a: [1, 2\n',
    'k: "open\n',
    'b: &x {c: 1}\nd: *x\n',
    '- 1\n- 2\n',
    'e: |\n  ---\n  inside\n',
    '---   \n',
    'f: 1\r\n---\r\ng: 2\r\n',
    '\t\n',
    '',
  ),
);

describe('manifestDocuments', () => {
  it('answers a stream as a parse of it whole does, documents kept or not', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), fc.array(fc.constantFrom('---\n', '--- \n', ''), { maxLength: 6 }), (pieces, markers) => {
        const text = pieces.map((p, i) => `${markers[i] ?? ''}${p}`).join('');
        // Twice: the second answer comes from the kept documents.
        assert.deepEqual(manifestDocuments(text), parseStream(text), JSON.stringify(text));
        assert.deepEqual(manifestDocuments(text), parseStream(text), JSON.stringify(text));
      }),
      { numRuns: 800 },
    );
  });

  it("reads kustomize's output as the yaml package reads it, whichever parser answers", () => {
    const styles = fc.record({
      defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE', 'BLOCK_LITERAL', 'BLOCK_FOLDED'),
      collectionStyle: fc.constantFrom('any', 'block', 'flow'),
      lineWidth: fc.constantFrom(0, 20, 80),
    }) as fc.Arbitrary<ToStringOptions>;
    const object = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(object, styles), { maxLength: 5 }), (documents) => {
        const text = documents.map(([value, options]) => stringify(value, options)).join('---\n');
        assert.deepEqual(manifestDocuments(text, 'kustomize-output'), parseStream(text), JSON.stringify(text));
      }),
      { numRuns: 300 },
    );
  });

  it('honours a directive for the document after it', () => {
    const text = 'a: 1\n...\n%YAML 1.1\n---\nb: yes\n';
    assert.deepEqual(manifestDocuments(text).documents, [{ a: 1 }, { b: true }]);
  });

  it('hands every caller the same frozen objects for the same document', () => {
    const first = manifestDocuments('kind: A\n---\nkind: B\n').documents;
    const again = manifestDocuments('kind: C\n---\nkind: B\n').documents;
    assert.equal(first[1], again[1]);
    assert.ok(Object.isFrozen(first[1]));
  });
});
