import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { parseStrictYaml, parseStrictYamlDocuments } from './strict-yaml.js';

function messages(text: string): string[] {
  const read = parseStrictYaml(text, 'input');
  return read.ok ? [] : read.issues.map((i) => `${i.field}: ${i.message}`);
}

describe('strict YAML', () => {
  it('returns plain data for plain YAML and JSON, core tags included', () => {
    assert.deepEqual(parseStrictYaml('a: 1\nb: [x, "y"]\nc: !!str 2\nd: null\n', 'input'), { ok: true, value: { a: 1, b: ['x', 'y'], c: '2', d: null } });
    assert.deepEqual(parseStrictYaml('{"a": {"b": true}}', 'input'), { ok: true, value: { a: { b: true } } });
  });

  it('refuses aliases, anchors, merge keys, custom tags, complex keys, duplicate keys and YAML 1.1, naming path and line', () => {
    assert.match(
      messages('a: &x 1\nb: *x\n').join('\n'),
      /input: a YAML anchor \(&name\) at a \(line 1, column \d+\)[^\n]*\ninput: a YAML alias \(\*name\) at b \(line 2, column 4\)/,
    );
    assert.match(messages('a:\n  "<<": {b: 1}\n').join(), /YAML merge key \(<<\) at a \(line 2/);
    assert.match(messages('a: !secret x\n').join(), /YAML tag outside the core schema at a/);
    assert.match(messages('? [a]\n: 1\n').join(), /a key that is not a plain string/);
    assert.match(messages('a: 1\na: 2\n').join(), /invalid YAML at line 2/);
    assert.match(messages('%YAML 1.1\n---\na: yes\n').join(), /YAML version other than 1\.2/);
    assert.match(messages('a: 1\n---\nb: 2\n').join(), /invalid YAML/);
  });

  it('never quotes the text it refuses', () => {
    for (const text of ['token: SECRET-value\n  bad: [', 'token: &SECRET-anchor SECRET-value\n', 'token: !SECRET-tag SECRET-value\n']) {
      assert.ok(messages(text).length > 0 && messages(text).every((m) => !m.includes('SECRET')), messages(text).join());
    }
  });

  it('answers an alias bomb with a bounded list of issues', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...Array.from({ length: 60 }, (_, i) => `b${i}: &b${i} [*${i === 0 ? 'a' : `b${i - 1}`}, *${i === 0 ? 'a' : `b${i - 1}`}]`),
    ].join('\n');
    const issues = messages(bomb);
    assert.ok(issues.length > 0 && issues.length <= 10);
  });

  it('reads a stream document by document, with lines of the whole text', () => {
    assert.deepEqual(parseStrictYamlDocuments('a: 1\n---\n---\nb: 2\n', 'f'), { ok: true, values: [{ a: 1 }, { b: 2 }] });
    const read = parseStrictYamlDocuments('a: 1\n---\nb: &x 2\n', 'f');
    assert.ok(!read.ok);
    assert.match(read.issues[0]?.message ?? '', /at b \(line 3, column \d+\)/);
  });

  it('round-trips any plain data, and refuses it once an anchor and alias are spliced in', () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/).filter((k) => k !== '<<');
    const plain = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(key, tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(fc.dictionary(key, plain, { minKeys: 1, maxKeys: 5 }), (generated) => {
        const value = JSON.parse(JSON.stringify(generated)) as Record<string, unknown>;
        const text = stringify(value, { aliasDuplicateObjects: false });
        assert.deepEqual(parseStrictYaml(text, 'input'), { ok: true, value });
        const [first] = Object.keys(value);
        const spliced = `anchored: &z ${JSON.stringify(value[first!])}\n${text}used: *z\n`;
        assert.equal(parseStrictYaml(spliced, 'input').ok, false);
      }),
      { numRuns: 200 },
    );
  });
});
