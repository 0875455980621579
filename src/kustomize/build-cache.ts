/**
 * Kustomize outputs by the content of their inputs (kustomize/build-inputs.ts).
 * A scaffold run verifies twice (pass 1 and pass 2) and pass 2 builds again
 * directories whose inputs pass 1 already built; a verify of many clusters
 * builds the same shared subtree once per cluster. One cache lives as long as
 * its verifier (one runner process, one run), in memory.
 *
 * Only kustomize's own verdicts are kept: an output, or the ValidationError
 * carrying kustomize's message. A timeout, an abort or a missing kubectl is
 * thrown to the caller and not remembered, so the next build tries again.
 */
import { ValidationError } from '../errors.js';

/** How a cache served its builds so far. */
export interface BuildCacheStats {
  /** Builds answered from the cache (no kubectl process). */
  readonly hits: number;
  /** Builds that ran kubectl. */
  readonly misses: number;
  /** Builds whose inputs could not be named (a remote base): always run. */
  readonly uncacheable: number;
}

type Outcome = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly error: ValidationError };

/** Options of {@link KustomizeBuildCache}. */
export interface KustomizeBuildCacheOptions {
  /**
   * Bytes of output kept; the oldest entries go first beyond it.
   * @default 134217728 (128 MiB)
   */
  readonly maxBytes?: number;
}

/** Content-addressed kustomize outputs, shared by every verify of one verifier. */
export class KustomizeBuildCache {
  readonly #entries = new Map<string, { outcome: Promise<Outcome>; dir: string; bytes: number }>();
  readonly #maxBytes: number;
  #bytes = 0;
  #hits = 0;
  #misses = 0;
  #uncacheable = 0;

  constructor(options: KustomizeBuildCacheOptions = {}) {
    this.#maxBytes = options.maxBytes ?? 128 * 1024 * 1024;
  }

  /** Counts so far; take the difference of two readings for one verify. */
  stats(): BuildCacheStats {
    return { hits: this.#hits, misses: this.#misses, uncacheable: this.#uncacheable };
  }

  /** Runs `build` uncached, counting it as such. */
  async bypass(build: () => Promise<string>): Promise<string> {
    this.#uncacheable += 1;
    return build();
  }

  /**
   * The output of the build of `dir` keyed `key`, running `build` when none is
   * kept. A concurrent build of the same key waits for the first one. An
   * output serves every directory with the key; kustomize's error names the
   * directory it failed in, so a failure serves only its own directory.
   */
  async through(key: string, dir: string, build: () => Promise<string>): Promise<string> {
    const kept = this.#entries.get(key);
    if (kept === undefined) return this.#run(key, dir, build);
    const outcome = await kept.outcome;
    if (!outcome.ok && kept.dir !== dir) return this.through(`${key}\0${dir}`, dir, build);
    this.#hits += 1;
    // Most recently used last: eviction takes the oldest first.
    if (this.#entries.get(key) === kept) {
      this.#entries.delete(key);
      this.#entries.set(key, kept);
    }
    return unwrap(outcome);
  }

  async #run(key: string, dir: string, build: () => Promise<string>): Promise<string> {
    this.#misses += 1;
    const outcome = build().then(
      (text): Outcome => ({ ok: true, text }),
      (error: unknown): Outcome => {
        if (error instanceof ValidationError) return { ok: false, error };
        throw error;
      },
    );
    const entry = { outcome, dir, bytes: 0 };
    this.#entries.set(key, entry);
    let settled: Outcome;
    try {
      settled = await outcome;
    } catch (error) {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
      throw error;
    }
    if (this.#entries.get(key) === entry) {
      entry.bytes = settled.ok ? settled.text.length : settled.error.message.length;
      this.#bytes += entry.bytes;
      this.#evict();
    }
    return unwrap(settled);
  }

  #evict(): void {
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) return;
      this.#entries.delete(key);
      this.#bytes -= entry.bytes;
    }
  }
}

function unwrap(outcome: Outcome): string {
  if (outcome.ok) return outcome.text;
  throw outcome.error;
}
