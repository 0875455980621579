/**
 * Substituting on the object must give exactly what the text route gives
 * (print, substitute the text, parse) wherever the yaml package reads an
 * object back as it printed it: checked on generated objects whose
 * strings and variable values are full of YAML's traps (values that retype,
 * open structure, bring spaces, colons, quotes or comments; references left
 * open; escapes; `$` in keys). Where it is not certain it answers nothing,
 * and the text route decides.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { substituteScalars } from './substitute-scalars.js';
import { substituteVariables } from './substitute-variables.js';

const textRoute = (object: unknown, values: ReadonlyMap<string, string>): unknown => parse(substituteVariables(stringify(object, { lineWidth: 0 }), values));

/**
 * Whether the yaml package reads the object back as it printed it. Where it
 * does not (`" \n"` comes back as `"\n"`), the text route's answer is the
 * package's defect, not Flux's substitution: no route is held to it.
 */
const roundTrips = (object: unknown): boolean => {
  try {
    assert.deepStrictEqual(parse(stringify(object, { lineWidth: 0 })), object);
    return true;
  } catch {
    return false;
  }
};

const traps = [
  'true',
  'True',
  'no',
  '3',
  '-3',
  '+3',
  '0x1F',
  '0o17',
  '1e3',
  '1_000',
  '.inf',
  '-.inf',
  '.nan',
  '~',
  'null',
  'Null',
  '',
  'x y',
  'a: b',
  'a:',
  ':a',
  '#c',
  'a #c',
  '- a',
  '-',
  '[1]',
  '{a: 1}',
  '"q"',
  "it's",
  '@x',
  '`x',
  '!x',
  '&x',
  '*x',
  '|',
  '>',
  'x\ny',
  ' x',
  'x ',
  'v1.2.3',
  'repo/img',
  'a,b',
  '%x',
  '?x',
  '${a}',
  '$${a}',
  '}',
  '{',
  '$',
];
const name = fc.constantFrom('a', 'b', 'c');
const template = fc.oneof(
  fc.constantFrom(
    '${a}',
    '${b:=3}',
    '${c:-x y}',
    '$${a}',
    'img:${a}',
    '${a}-${b}',
    'p${a}s',
    'a b ${c}',
    '${a}:',
    '${a',
    '${a}}',
    '${1x}',
    '$${a',
    'x$y',
    '${a}#',
    '"${a}"',
    '${a:- #}',
    '${a:-: x}',
    "${a:-'q'}",
    '${a:-[x]}',
    '- ${a}',
    '${a:-x}:',
  ),
  fc.array(fc.constantFrom('${a}', '${b}', '$', '{', '}', ':', ' ', 'x', '-', '.', '#', '\n', '1'), { maxLength: 6 }).map((p) => p.join('')),
);
const scalar = fc.oneof(template, fc.constantFrom(...traps), fc.integer(), fc.boolean(), fc.constant(null));
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, scalar, tie('map'), fc.array(tie('node'), { maxLength: 3 })),
  map: fc.dictionary(fc.oneof(fc.constantFrom('k', 'image', 'replicas'), template), tie('node'), { maxKeys: 3, noNullPrototype: true }),
})).map;

describe('substituteScalars', () => {
  it('answers only what the text route answers', () => {
    let answered = 0;
    fc.assert(
      fc.property(value, fc.dictionary(name, fc.constantFrom(...traps), { maxKeys: 3 }), (object, defined) => {
        const values = new Map(Object.entries(defined));
        const inPlace = substituteScalars(object, values);
        if (inPlace === undefined || !roundTrips(object)) return;
        answered++;
        assert.deepStrictEqual(inPlace.value, textRoute(object, values));
      }),
      { numRuns: 6000 },
    );
    assert.ok(answered > 300, `answered ${answered} of 6000: the generator must reach the path it checks`);
  });

  it('substitutes a workload’s image, replicas and flags on the object, retyped as Flux retypes them', () => {
    const deployment = {
      kind: 'Deployment',
      metadata: { name: '${cluster}-web', labels: { tier: 'web' } },
      spec: { replicas: '${replicas}', paused: '${paused:=false}', template: { spec: { containers: [{ image: 'repo/web:${tag}', args: ['--x'] }] } } },
    };
    const values = new Map([
      ['cluster', 'eu1'],
      ['replicas', '3'],
      ['tag', 'v1.2'],
    ]);
    const inPlace = substituteScalars(deployment, values);
    assert.ok(inPlace !== undefined);
    assert.deepStrictEqual(inPlace.value, textRoute(deployment, values));
    assert.deepStrictEqual(inPlace.value, {
      kind: 'Deployment',
      metadata: { name: 'eu1-web', labels: { tier: 'web' } },
      spec: { replicas: 3, paused: false, template: { spec: { containers: [{ image: 'repo/web:v1.2', args: ['--x'] }] } } },
    });
    assert.equal((inPlace.value as { metadata: { labels: unknown } }).metadata.labels, deployment.metadata.labels, 'what does not change is shared');
  });

  it('leaves to the text route a value that brings structure, and a key with $', () => {
    assert.equal(substituteScalars({ k: '${a}' }, new Map([['a', 'x: y']])), undefined);
    assert.equal(substituteScalars({ k: 'a ${a}' }, new Map([['a', 'x']])), undefined);
    assert.equal(substituteScalars({ '${a}': 'v' }, new Map([['a', 'x']])), undefined);
  });
});
