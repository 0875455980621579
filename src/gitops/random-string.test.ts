import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ALPHANUMERIC, randomString, type RandomBytes } from './random-string.js';

/** A byte source that walks 0, 1, …, 255, 0, 1, … : every byte value equally often. */
function countingBytes(): RandomBytes {
  let next = 0;
  return (size) => Uint8Array.from({ length: size }, () => next++ % 256);
}

function counts(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of text) out.set(c, (out.get(c) ?? 0) + 1);
  return out;
}

describe('randomString', () => {
  it('has the requested length and only letters and digits', () => {
    for (const length of [1, 16, 32, 64, 256]) {
      const value = randomString(randomBytes, length);
      assert.equal(value.length, length);
      assert.match(value, /^[A-Za-z0-9]+$/);
    }
    assert.equal(randomString(randomBytes, 0), '');
  });

  it('uses the 62 letters and digits', () => {
    assert.equal(ALPHANUMERIC.length, 62);
    assert.equal(new Set(ALPHANUMERIC).size, 62);
    assert.match(ALPHANUMERIC, /^[A-Za-z0-9]{62}$/);
  });

  it('gives every character exactly the same share when every byte is equally likely (no modulo bias)', () => {
    // 248 of the 256 byte values are used (4 per character); with each byte
    // value equally often, each character must come out equally often.
    const value = randomString(countingBytes(), 62 * 4 * 50);
    const seen = counts(value);
    assert.equal(seen.size, 62);
    for (const [c, n] of seen) assert.equal(n, 200, `character ${c}`);
  });

  it('rejects the bytes that would favour the first characters', () => {
    // Only bytes 248..255 (which a plain `byte % 62` maps to A..H) at first:
    // none may be used, the characters come from the later bytes.
    let calls = 0;
    const source: RandomBytes = (size) => (calls++ === 0 ? new Uint8Array(size).fill(250) : new Uint8Array(size).fill(62 + 51));
    assert.equal(randomString(source, 8), 'zzzzzzzz');
    assert.ok(calls >= 2);
  });

  it('is close to uniform with the real random source (chi-square)', () => {
    const value = randomString(randomBytes, 62 * 1000);
    const seen = counts(value);
    assert.equal(seen.size, 62);
    const expected = value.length / 62;
    const chi2 = [...seen.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    // 61 degrees of freedom: chi2 > 140 has a probability far below 1e-8 for a
    // uniform source; a modulo-biased one scores in the thousands here.
    assert.ok(chi2 < 140, `chi-square ${chi2.toFixed(1)}`);
  });

  it('draws from a custom alphabet', () => {
    const value = randomString(randomBytes, 500, 'ab');
    assert.match(value, /^[ab]{500}$/);
    assert.ok(value.includes('a') && value.includes('b'));
  });

  it('two values from the real source differ', () => {
    assert.notEqual(randomString(randomBytes, 32), randomString(randomBytes, 32));
  });
});
