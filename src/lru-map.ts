/**
 * A map that keeps at most `limit` of weight (one per entry unless told
 * otherwise), the least recently used entry going first: the bound under the
 * process's caches of parsed things (certificates, YAML texts).
 */
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #weigh: (key: K, value: V) => number;
  #weight = 0;
  #hits = 0;
  #misses = 0;

  /**
   * @param limit - weight kept at most; 0 keeps nothing
   * @param weigh - an entry's weight @default 1
   */
  constructor(
    public limit: number,
    weigh: (key: K, value: V) => number = () => 1,
  ) {
    this.#weigh = weigh;
  }

  /** The value kept for `key`, now the most recently used; undefined when none is. */
  get(key: K): V | undefined {
    const kept = this.#entries.get(key);
    if (kept === undefined) return undefined;
    // Map keeps insertion order: moving a hit to the end makes the first entry the least recently used.
    this.#entries.delete(key);
    this.#entries.set(key, kept);
    return kept;
  }

  /** Keeps `value` for `key` when it fits at all, letting the least recently used go until the rest does. */
  set(key: K, value: V): void {
    const weight = this.#weigh(key, value);
    if (weight > this.limit) return;
    const previous = this.#entries.get(key);
    if (previous !== undefined) this.#weight -= this.#weigh(key, previous);
    this.#entries.delete(key);
    this.#entries.set(key, value);
    this.#weight += weight;
    for (const [oldest, kept] of this.#entries) {
      if (this.#weight <= this.limit) break;
      this.#entries.delete(oldest);
      this.#weight -= this.#weigh(oldest, kept);
    }
  }

  /** The value kept for `key`, else `make()`'s, kept when it fits (a throw keeps nothing); counted as a hit or a miss. */
  remember(key: K, make: () => V): V {
    const kept = this.get(key);
    if (kept !== undefined) {
      this.#hits++;
      return kept;
    }
    this.#misses++;
    const made = make();
    this.set(key, made);
    return made;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** How many {@link remember} calls found their value kept, and how many made it. */
  get stats(): { readonly size: number; readonly hits: number; readonly misses: number } {
    return { size: this.#entries.size, hits: this.#hits, misses: this.#misses };
  }
}
