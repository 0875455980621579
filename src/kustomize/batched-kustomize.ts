/**
 * KustomizeBuilder that runs builds asked for at the same time in one
 * `kubectl kustomize` process. Every process pays kubectl's start-up, and the
 * loading of the schemas strategic-merge patches need where it has such
 * patches (about 70 ms of CPU for plain resources, up to 0.3 s with patches,
 * measured with kubectl 1.35); verify asks for a wave of directories at once (verify-repository.ts
 * builds each wave of discovered Kustomization paths with Promise.all), so
 * one process can build them all: a root kustomization in a scratch directory
 * outside the repository lists one wrapper per directory (batch-output.ts),
 * and the output is split back into what each directory's own build prints.
 *
 * Whenever the combined build fails, for whatever reason (one directory does
 * not build, two directories yield the same resource id, a timeout, an output
 * that does not split cleanly), every directory of the batch is built
 * separately, so each caller gets exactly what a build of its directory alone
 * gives, error text included. The engine is the inner builder's: outputs are
 * the same, so a cache keyed by it (build-cache.ts) keeps its keys.
 *
 * A directory whose own kustomization sets `sortOptions` or `buildMetadata`,
 * which kustomize honours only in the kustomization it was asked to build, is
 * built alone.
 *
 * The load restrictor still applies inside each directory: a wrapper may name
 * a directory outside its own root (kustomize loads a directory resource with
 * a loader rooted there), but files that directory's kustomization reads must
 * lie below it, as in a separate build.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { assertRepoPath } from '../gitops/file-tree.js';
import { KUSTOMIZATION_FILES } from '../verify/kustomization-paths.js';
import type { KustomizeBuilder } from '../verify/kustomize-builder.js';
import { rootKustomization, splitBatchOutput, wrapperKustomization } from './batch-output.js';

/** Options of {@link BatchedKustomize}. */
export interface BatchedKustomizeOptions {
  /**
   * How long a batch waits for one more build after the last one came, in ms.
   * Measured on generated trees of both platforms (2 cores under a CI run, the
   * cache on): a wave's builds reach this builder 2.4–5.5 ms apart from first
   * to last (each first reads its directory and hashes its inputs,
   * asynchronously), and a 2 ms window split waves in two; at load average 10
   * a fixed 10 ms window from the first build still split one wave a run, so
   * the wait starts again with every build that joins. The wait costs no CPU
   * and a verify has about four batches, against 70–300 ms of CPU each process
   * saved costs (kubectl's start-up, and the schemas of strategic-merge patches).
   * @default 10
   */
  readonly windowMs?: number;
  /**
   * Longest a batch waits from its first build, in ms, however often the wait starts again.
   * @default 100
   */
  readonly maxWaitMs?: number;
  /**
   * Most directories in one process; more start another batch.
   * @default 32
   */
  readonly maxBatch?: number;
  /** Where the scratch directory of a combined build is made (never the work tree: a run commits it). @default os.tmpdir() */
  readonly scratchRoot?: string;
}

/** How the builds went so far. */
export interface BatchStats {
  /** Combined builds that ran (one process each). */
  readonly combined: number;
  /** Directories those served. */
  readonly combinedDirs: number;
  /** Combined builds that failed, so their directories were built separately. */
  readonly fallbacks: number;
  /** Builds of one directory alone (a batch of one, or a fallback). */
  readonly single: number;
}

interface Waiter {
  readonly resolve: (text: string) => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
}

interface Pending {
  /** Directories in the order first asked for, each with everyone waiting for it. */
  readonly dirs: Map<string, Waiter[]>;
  /** When the first build came (performance.now()). */
  readonly since: number;
  timer: NodeJS.Timeout | undefined;
}

/** Decorates a builder (innermost, below any cache) so that builds of one repository asked for together share one process. */
export class BatchedKustomize implements KustomizeBuilder {
  readonly #inner: KustomizeBuilder;
  readonly #windowMs: number;
  readonly #maxWaitMs: number;
  readonly #maxBatch: number;
  readonly #scratchRoot: string;
  readonly #pending = new Map<string, Pending>();
  #stats = { combined: 0, combinedDirs: 0, fallbacks: 0, single: 0 };

  constructor(inner: KustomizeBuilder, options: BatchedKustomizeOptions = {}) {
    this.#inner = inner;
    this.#windowMs = options.windowMs ?? 10;
    this.#maxWaitMs = options.maxWaitMs ?? 100;
    this.#maxBatch = Math.max(1, options.maxBatch ?? 32);
    this.#scratchRoot = options.scratchRoot ?? tmpdir();
  }

  /** The inner builder's engine: a batched build prints what the inner one does. */
  async engine(): Promise<string | undefined> {
    return this.#inner.engine?.();
  }

  stats(): BatchStats {
    return { ...this.#stats };
  }

  async build(repoRoot: string, dir: string, signal?: AbortSignal): Promise<string> {
    assertRepoPath(dir, 'dir');
    signal?.throwIfAborted();
    return new Promise<string>((resolve, reject) => {
      // One caller's abort ends its own wait only; the batch goes on for the others.
      const onAbort = (): void => reject(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = (): void => signal?.removeEventListener('abort', onAbort);
      this.#enqueue(repoRoot, dir, {
        resolve: (text) => (done(), resolve(text)),
        reject: (error) => (done(), reject(error)),
        signal,
      });
    });
  }

  #enqueue(repoRoot: string, dir: string, waiter: Waiter): void {
    let pending = this.#pending.get(repoRoot);
    if (pending === undefined) {
      pending = { dirs: new Map(), since: performance.now(), timer: undefined };
      this.#pending.set(repoRoot, pending);
    }
    const waiters = pending.dirs.get(dir);
    if (waiters !== undefined) waiters.push(waiter);
    else pending.dirs.set(dir, [waiter]);
    if (pending.dirs.size >= this.#maxBatch) return this.#flush(repoRoot);
    // Wait `windowMs` more for the next build of the wave, never beyond `maxWaitMs` from the first.
    clearTimeout(pending.timer);
    const wait = Math.max(0, Math.min(this.#windowMs, pending.since + this.#maxWaitMs - performance.now()));
    pending.timer = setTimeout(() => this.#flush(repoRoot), wait);
  }

  #flush(repoRoot: string): void {
    const pending = this.#pending.get(repoRoot);
    if (pending === undefined) return;
    clearTimeout(pending.timer);
    this.#pending.delete(repoRoot);
    void this.#run(repoRoot, pending.dirs);
  }

  async #run(repoRoot: string, dirs: Map<string, Waiter[]>): Promise<void> {
    const all = [...dirs];
    const topOnly = all.map(([dir]) => setsTopLevelOnlyFields(repoRoot, dir));
    const alone = all.filter((_, i) => topOnly[i]);
    const entries = all.filter((_, i) => !topOnly[i]);
    if (entries.length > 1) {
      const outputs = await this.#combined(
        repoRoot,
        entries.map(([dir]) => dir),
        entries.flatMap(([, waiters]) => waiters),
      ).catch(() => undefined);
      if (outputs !== undefined) {
        entries.forEach(([, waiters], i) => {
          for (const waiter of waiters) waiter.resolve(outputs[i] as string);
        });
      } else {
        this.#stats.fallbacks += 1;
        alone.push(...entries);
      }
    } else alone.push(...entries);
    await Promise.all(alone.map(([dir, waiters]) => this.#alone(repoRoot, dir, waiters)));
  }

  /** One directory built by itself, for everyone waiting for it; each waiter's signal is its own (an abort there ends only that wait). */
  async #alone(repoRoot: string, dir: string, waiters: readonly Waiter[]): Promise<void> {
    this.#stats.single += 1;
    const shared = sharedSignal(waiters);
    try {
      const text = await this.#inner.build(repoRoot, dir, shared.signal);
      for (const waiter of waiters) waiter.resolve(text);
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    } finally {
      shared.release();
    }
  }

  /** One process for all of `dirs`; the outputs in their order. Rejects on anything but a clean split. */
  async #combined(repoRoot: string, dirs: readonly string[], waiters: readonly Waiter[]): Promise<string[]> {
    const scratch = await mkdtemp(join(this.#scratchRoot, 'gitops-kustomize-batch-'));
    const shared = sharedSignal(waiters);
    try {
      // A few small files in our own scratch directory: blocking writes cost less than the thread pool's hand-offs.
      dirs.forEach((dir, i) => {
        const wrapper = join(scratch, `w${i}`);
        mkdirSync(wrapper);
        const target = relative(wrapper, join(repoRoot, dir));
        // `./` or `../` first: kustomize must not read the path as a remote URL.
        writeFileSync(join(wrapper, 'kustomization.yaml'), wrapperKustomization(i, target.startsWith('../') ? target : `./${target}`), { flag: 'wx' });
      });
      writeFileSync(join(scratch, 'kustomization.yaml'), rootKustomization(dirs.length), { flag: 'wx' });
      this.#stats.combined += 1;
      this.#stats.combinedDirs += dirs.length;
      return splitBatchOutput(await this.#inner.build(scratch, '.', shared.signal), dirs.length);
    } finally {
      shared.release();
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}

/**
 * Whether the kustomization of `dir` itself sets a field kustomize honours only
 * in the kustomization it builds, not in one a wrapper names: `sortOptions`
 * (the combined build would print the legacy order) and `buildMetadata` (the
 * origin annotations would be missing). Such a directory is built alone; so is
 * one whose kustomization cannot be read (kustomize will say why). The text is
 * searched, not parsed: a mention anywhere errs on the side of building alone.
 */
function setsTopLevelOnlyFields(repoRoot: string, dir: string): boolean {
  for (const name of KUSTOMIZATION_FILES) {
    let text: string;
    try {
      text = readFileSync(join(repoRoot, dir, name), 'utf8');
    } catch {
      continue;
    }
    return text.includes('sortOptions') || text.includes('buildMetadata');
  }
  return true;
}

/**
 * A signal that aborts once every waiter's has (nobody is left waiting);
 * undefined while any waiter has none, since that one waits to the end.
 * `release` takes its listeners off the waiters' signals once the build is
 * over: a run's signal outlives every build of the run (a batch verifies many clusters).
 */
function sharedSignal(waiters: readonly Waiter[]): { readonly signal: AbortSignal | undefined; release(): void } {
  const signals = waiters.map((w) => w.signal);
  if (signals.some((s) => s === undefined)) return { signal: undefined, release: () => {} };
  const controller = new AbortController();
  const check = (): void => {
    if (signals.every((s) => s?.aborted === true)) controller.abort(signals[0]?.reason);
  };
  for (const s of signals) s?.addEventListener('abort', check, { once: true });
  check();
  return { signal: controller.signal, release: () => signals.forEach((s) => s?.removeEventListener('abort', check)) };
}
