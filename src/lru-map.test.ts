/**
 * The bound under the caches: what is used least recently goes first, by
 * weight; an entry heavier than the whole limit is never kept; a limit of 0
 * keeps nothing; setting a key again counts its weight once.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LruMap } from './lru-map.js';

describe('LruMap', () => {
  it('lets the least recently used go first, by weight', () => {
    const map = new LruMap<string, string>(5, (key) => key.length);
    map.set('aa', 'A');
    map.set('bb', 'B');
    assert.equal(map.get('aa'), 'A'); // bb is now the least recently used
    map.set('cc', 'C');
    assert.equal(map.get('bb'), undefined);
    assert.equal(map.get('aa'), 'A');
    assert.equal(map.get('cc'), 'C');
    map.set('dddddd', 'D'); // heavier than the limit: not kept, nothing pushed out
    assert.equal(map.get('dddddd'), undefined);
    assert.equal(map.size, 2);
  });

  it('counts a key set again once, and keeps nothing at limit 0', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    map.set('a', 2);
    map.set('b', 3);
    assert.deepEqual([map.get('a'), map.get('b'), map.size], [2, 3, 2]);
    map.limit = 0;
    map.set('c', 4);
    assert.equal(map.get('c'), undefined);
  });
});
