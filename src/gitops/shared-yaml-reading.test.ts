import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { parseYamlDocuments, sharedYamlDocuments } from './yaml.js';
import { sharedYamlReading } from './shared-yaml-reading.js';

/** What a reader gives for `text`: its values, or the error it throws (class and issues). */
function outcome(read: () => readonly unknown[]): unknown {
  try {
    return { values: read() };
  } catch (error) {
    return { thrown: error instanceof Error ? error.name : typeof error, detail: (error as { issues?: unknown }).issues ?? String(error) };
  }
}

/** YAML streams of plain data, with the indicators that make readers differ: anchors, aliases, merge keys, tags, bad lines. */
const yamlStreams = fc
  .array(
    fc.oneof(
      fc.jsonValue().map((value) => stringify(value)),
      fc.constantFrom(
        'a: &x [1, 2]\nb: *x\n',
        'a: *missing\n',
        'base: &b {k: v}\nmerged:\n  <<: *b\n',
        'v: !!int "12"\n',
        'a: [&a [x], *a, *a]\n',
        'key: "unclosed\n',
        'a: b: c\n',
        '',
        '# only a comment\n',
      ),
      fc.string(),
    ),
    { maxLength: 4 },
  )
  .map((documents) => documents.join('---\n'));

describe('sharedYamlDocuments', () => {
  it('gives what parseYamlDocuments gives, values and errors alike, for any stream', () => {
    fc.assert(
      fc.property(yamlStreams, (text) => {
        assert.deepEqual(
          outcome(() => sharedYamlDocuments(text, 'base/file.yaml')),
          outcome(() => parseYamlDocuments(text, 'base/file.yaml')),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('refuses an alias bomb as an alias bomb, naming the file', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...'bcdefgh'.split('').map((k, i) => `${k}: &${k} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(', ')}]`),
    ].join('\n');
    assert.throws(() => sharedYamlDocuments(bomb, 'base/bomb.yaml'), /alias bomb|aliases/);
  });

  it('reads each text once: the same frozen documents for every reader', () => {
    const text = 'kind: Kustomization\nresources: [a.yaml]\n';
    assert.equal(sharedYamlReading(text), sharedYamlReading(text));
    assert.ok(Object.isFrozen(sharedYamlReading(text)[0]?.value));
  });
});
