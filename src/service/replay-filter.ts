/**
 * Replaying a run's output after a restart or an earlier pump: which lines
 * the store already has. Split out of the run monitor, which uses it for every
 * pump.
 */
import { parseOutputSource } from './output-source.js';
import type { RunStore } from './run-store.js';

/**
 * Tells, line by line, which lines of a replayed output the store does not
 * have yet. How it counts is fixed by the first stored line:
 *
 * - a source line (`output-source.ts`), or nothing stored yet: lines are
 *   counted per source, each source line included. A replay that lacks a source
 *   (a deleted pod) or has a new one (a Job retry in a new pod) still lines up:
 *   of each source, exactly the lines not stored yet are new.
 * - any other line: the output is one unnamed source, replayed whole (the local
 *   executor; a Job run whose log was stored before executors wrote source
 *   lines): the first `stored` lines are old, and source lines are dropped so
 *   that such a log keeps its shape.
 */
export class ReplayFilter {
  readonly #perSource: boolean;
  /** Stored lines per source (per-source mode; `''` is the unnamed one), or of the whole log. */
  readonly #stored: ReadonlyMap<string, number>;
  #left: number;
  /** The seq of the last stored line (0: none): new lines are numbered after it. */
  readonly lastSeq: number;

  private constructor(perSource: boolean, stored: ReadonlyMap<string, number>, lastSeq: number) {
    this.#perSource = perSource;
    this.#stored = stored;
    this.#left = stored.get('') ?? 0;
    this.lastSeq = lastSeq;
  }

  /** Reads what the store holds of run `id`. */
  static async load(store: RunStore, id: string): Promise<ReplayFilter> {
    const stored = new Map<string, number>();
    let perSource: boolean | undefined;
    let source = '';
    let after = 0;
    let lastSeq = 0;
    for (;;) {
      const page = await store.readLogs(id, { afterSeq: after, limit: 1000 });
      lastSeq = page.at(-1)?.seq ?? lastSeq;
      for (const { line } of page) {
        const announced = parseOutputSource(line);
        perSource ??= announced !== undefined;
        if (perSource && announced !== undefined) source = announced.source;
        stored.set(source, (stored.get(source) ?? 0) + 1);
      }
      const last = page.at(-1);
      if (last === undefined || page.length < 1000) break;
      after = last.seq;
    }
    return new ReplayFilter(perSource ?? true, stored, lastSeq);
  }

  /** Whether `line`, the next line of the replay, is one the store does not have. */
  isNew(line: string): boolean {
    const announced = parseOutputSource(line);
    if (announced !== undefined) {
      if (!this.#perSource) return false;
      this.#left = this.#stored.get(announced.source) ?? 0;
    }
    if (this.#left > 0) {
      this.#left--;
      return false;
    }
    return true;
  }
}
