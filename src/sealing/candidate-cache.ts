/**
 * Parsed certificates by the SHA-256 of their PEM block: the service parses
 * the same controller certificate on every request that carries it (the
 * validation of the request, the run, the sealing check), and an X.509 parse
 * of a 4096-bit certificate is the largest cost of a POST inside the app.
 * Only a parse that succeeded is kept (a refusal is parsed again, and so says
 * the same thing); what depends on the moment, the validity window against
 * `now`, is checked by the caller on every use. Bounded: the least recently
 * used entry goes first.
 */
import { createHash } from 'node:crypto';
import { LruMap } from '../lru-map.js';

/** Entries kept: a service talks to a few hundred clusters' controllers at most at once. */
export const CANDIDATE_CACHE_LIMIT = 256;

export class ContentCache<T> {
  readonly #entries: LruMap<string, T>;

  /** @param limit - entries kept; 0 keeps none (every get parses) */
  constructor(limit: number) {
    this.#entries = new LruMap<string, T>(limit);
  }

  /** Entries kept at most; 0 keeps none. */
  get limit(): number {
    return this.#entries.limit;
  }

  set limit(limit: number) {
    this.#entries.limit = limit;
  }

  /** The value for `text`, made by `make` when none is kept (a throw keeps nothing). */
  get(text: string, make: () => T): T {
    const key = createHash('sha256').update(text, 'utf8').digest('hex');
    return this.#entries.remember(key, make);
  }

  get stats(): { readonly size: number; readonly hits: number; readonly misses: number } {
    return this.#entries.stats;
  }
}
