/**
 * A bounded memo of pure parses, keyed by the text parsed: the same text
 * gives the same value without parsing it again. A batch run verifies many
 * clusters whose trees and build outputs are mostly the same objects (base/
 * as every cluster builds it), and both passes of one run parse the same
 * documents; parsing YAML was the largest cost left in a run.
 *
 * A value is handed to every caller that parses the same text, so it is
 * frozen, deeply: a caller that tried to change it would change what the
 * next cluster sees, and gets a TypeError instead.
 */
import { LruMap } from '../lru-map.js';

/** Freezes `value` and everything reachable from it; returns it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export class ParseMemo<T> {
  readonly #entries: LruMap<string, T>;

  /** @param limit characters of keys kept at most (the values are of the same order); the least recently used go first. */
  constructor(limit: number) {
    this.#entries = new LruMap<string, T>(limit, (key) => key.length);
  }

  /** `parse(key)`'s value, frozen: computed on the first call with `key`, kept while it fits. */
  get(key: string, parse: (key: string) => T): T {
    return this.#entries.remember(key, () => deepFreeze(parse(key)));
  }

  /** Hits and misses so far. */
  stats(): { readonly hits: number; readonly misses: number; readonly entries: number } {
    const { hits, misses, size } = this.#entries.stats;
    return { hits, misses, entries: size };
  }
}
