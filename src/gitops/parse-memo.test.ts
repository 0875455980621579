/**
 * The parse memo answers the same text with the same value, parses a text
 * again once it has been pushed out by newer ones, and hands out values no
 * caller can change under the next one.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ParseMemo } from './parse-memo.js';

describe('ParseMemo', () => {
  it('parses each text once while it fits, the least recently used going first', () => {
    const parsed: string[] = [];
    const memo = new ParseMemo<{ text: string }>(6);
    const get = (text: string) => memo.get(text, (t) => (parsed.push(t), { text: t }));
    const first = get('aa');
    get('bb');
    assert.equal(get('aa'), first, 'a hit is the very value parsed first');
    get('cc');
    get('dd'); // 8 characters: bb, used least recently, goes
    get('aa');
    get('bb');
    assert.deepEqual(parsed, ['aa', 'bb', 'cc', 'dd', 'bb']);
    assert.deepEqual(memo.stats(), { hits: 2, misses: 5, entries: 3 });
  });

  it('keeps nothing larger than its limit, and nothing that failed to parse', () => {
    let calls = 0;
    const memo = new ParseMemo<number>(3);
    memo.get('long text', () => ++calls);
    memo.get('long text', () => ++calls);
    assert.equal(calls, 2);
    assert.throws(
      () =>
        memo.get('x', () => {
          throw new Error('bad');
        }),
      /bad/,
    );
    assert.equal(
      memo.get('x', () => 7),
      7,
    );
  });

  it('hands out values frozen all the way down', () => {
    const memo = new ParseMemo<{ spec: { items: { name: string }[] } }>(100);
    const value = memo.get('k', () => ({ spec: { items: [{ name: 'a' }] } }));
    assert.throws(() => {
      value.spec.items[0]!.name = 'b';
    }, TypeError);
    assert.throws(() => value.spec.items.push({ name: 'c' }), TypeError);
    assert.equal(memo.get('k', () => ({ spec: { items: [] } })).spec.items[0]!.name, 'a');
  });
});
