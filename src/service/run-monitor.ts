/**
 * Keeps the run store in line with the executor: copies each active run's
 * runner output into the store, turns the runner's JSON events into progress
 * (step, status running, commits), records the outcome when the executor
 * reports one, and after a restart decides what happened to runs that were
 * active when the service went down.
 *
 * One monitor per service process is assumed: two replicas pumping the same
 * run would store its lines twice.
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, UnavailableError, failureOf, type Failure } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import { isStepEvent, parseRunEvent } from '../run-contract/run-events.js';
import { ReplayFilter } from './replay-filter.js';
import type { RunStore, RunUpdate } from './run-store.js';
import type { ExecutionState, RunExecutor } from './run-executor.js';
import {
  ACTIVE_STATUSES,
  isFinal,
  withReviewRequest,
  type BatchClusterOutcome,
  type BatchClusterStatus,
  type RunCommit,
  type RunResult,
  type RunReviewRequest,
  type RunRecord,
} from '../run/run-record.js';
import type { RunTracker } from './run-service.js';

/** The message a run gets when the executor has no trace of it. */
export const LOST_RUN_MESSAGE = 'the executor has no trace of this run; it was lost while the service was down — retry it';
/** A lost run's runner went away with its host or Job, not for anything in its request: a retry may succeed. */
const LOST_RUN_FAILURE: Failure = failureOf(new UnavailableError(LOST_RUN_MESSAGE));

/**
 * The failure a failed result reports. A runner that died before writing its
 * result (killed, crashed) reported none: unknown, so `internal` and permanent,
 * as any error that is not the product's own.
 */
/** A batch run's outcomes at its end: the result's statuses, each with the words and counts its event gave when they agree. */
function finalOutcomes(
  statuses: Readonly<Record<string, BatchClusterStatus>>,
  reported: Readonly<Record<string, BatchClusterOutcome>> | undefined,
): Record<string, BatchClusterOutcome> {
  return Object.fromEntries(
    Object.entries(statuses).map(([name, status]) => {
      const told = reported?.[name];
      return [name, told !== undefined && told.status === status ? told : { status }];
    }),
  );
}

function failureOfResult(result: RunResult): Failure {
  return result.error_code === undefined ? failureOf(undefined) : { code: result.error_code, transient: result.transient ?? false };
}

/** Tuning of the monitor. */
export interface RunMonitorOptions {
  /** Period of the full reconcile pass. @default 30000 */
  readonly reconcileIntervalMs?: number;
  /** Lines per store write. @default 200 */
  readonly logBatchSize?: number;
  /** Longest a line waits in the buffer before it is written. @default 250 */
  readonly logFlushMs?: number;
  /**
   * A run younger than this that the executor reports `missing` is left alone:
   * the service stores the row before it starts the executor, and a reconcile
   * pass may fall in between. The age is measured by the database. @default 120000
   */
  readonly missingGraceMs?: number;
  /** First delay before re-checking a run whose log stream ended while it was still active; doubles up to the reconcile interval. @default 1000 */
  readonly recheckDelayMs?: number;
  /**
   * Most lines kept in memory, over all runs, while the store cannot take
   * them. Beyond it the monitor stops reading runners' output (the executors
   * keep it) until the store answers again: nothing is dropped. @default 50000
   */
  readonly maxPendingLines?: number;
  /** Longest wait between two attempts to store what the store refused. @default 5000 */
  readonly maxRetryDelayMs?: number;
}

/** A store write a pump keeps, in order, until the store has taken it. */
type PendingWrite =
  | { readonly kind: 'lines'; readonly afterSeq: number; readonly lines: readonly { time: Date; line: string }[] }
  | { readonly kind: 'update'; readonly update: RunUpdate };

/** What the monitor needs. */
export interface RunMonitorDeps {
  readonly store: RunStore;
  readonly executor: RunExecutor;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  readonly options?: RunMonitorOptions;
}

/** What a pump knows of its run between store writes. */
interface PumpState {
  running: boolean;
  startedAt: Date | undefined;
  commits: RunCommit[];
  reviewRequests: readonly RunReviewRequest[];
  step: number;
  /** A batch run: each cluster's outcome reported so far. */
  batchOutcomes: Record<string, BatchClusterOutcome> | undefined;
}

/** Follows runs: implements the service's RunTracker. */
export class RunMonitor implements RunTracker {
  readonly #store: RunStore;
  readonly #executor: RunExecutor;
  readonly #logger: Logger;
  readonly #clock: () => Date;
  readonly #reconcileIntervalMs: number;
  readonly #logBatchSize: number;
  readonly #logFlushMs: number;
  readonly #missingGraceMs: number;
  readonly #recheckDelayMs: number;
  readonly #maxPendingLines: number;
  readonly #maxRetryDelayMs: number;
  /** Lines and updates not stored yet, over all pumps (the pending-writes gauge). */
  #pendingWrites = 0;
  #pendingLines = 0;
  /** Pumps waiting for the pending lines to drop below the bound. */
  #roomWaiters: (() => void)[] = [];
  /** Runs with a log pump attached, and the promise of that pump. */
  readonly #pumps = new Map<string, Promise<void>>();
  readonly #stop = new AbortController();
  #reconciling: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(deps: RunMonitorDeps) {
    // Every followed run's back-off wait listens to the stop signal, one listener
    // a run, removed when its wait ends: a fleet rollout follows dozens at once,
    // and Node's warning at 11 ("possible memory leak") would point at nothing.
    setMaxListeners(0, this.#stop.signal);
    this.#store = deps.store;
    this.#executor = deps.executor;
    this.#logger = deps.logger ?? silentLogger;
    this.#clock = deps.clock ?? (() => new Date());
    const o = deps.options ?? {};
    this.#reconcileIntervalMs = o.reconcileIntervalMs ?? 30_000;
    this.#logBatchSize = o.logBatchSize ?? 200;
    this.#logFlushMs = o.logFlushMs ?? 250;
    this.#missingGraceMs = o.missingGraceMs ?? 120_000;
    this.#recheckDelayMs = o.recheckDelayMs ?? 1000;
    this.#maxPendingLines = Math.max(1, o.maxPendingLines ?? 50_000);
    this.#maxRetryDelayMs = o.maxRetryDelayMs ?? 5000;
  }

  /** Runner output lines and progress updates read but not stored yet (the store is failing), for the metrics. */
  pendingWrites(): number {
    return this.#pendingWrites;
  }

  /**
   * Reconciles every active run once (the restart case), then again every
   * `reconcileIntervalMs` until `signal` aborts. Resolves after the first pass.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) {
      this.#stop.abort();
      return;
    }
    signal.addEventListener('abort', () => this.#shutdown(), { once: true });
    await this.reconcile();
    if (this.#stop.signal.aborted) return;
    this.#timer = setInterval(() => {
      void this.reconcile();
    }, this.#reconcileIntervalMs);
    this.#timer.unref();
  }

  /** Resolves when no log pump and no reconcile pass is running (after shutdown: when everything has wound down). */
  async idle(): Promise<void> {
    for (;;) {
      const pending = [...this.#pumps.values(), ...(this.#reconciling ? [this.#reconciling] : [])];
      if (pending.length === 0) return;
      await Promise.allSettled(pending);
    }
  }

  /** Starts following a run the service has just started. Idempotent. */
  track(run: RunRecord): void {
    if (this.#stop.signal.aborted || isFinal(run.status) || this.#pumps.has(run.id)) return;
    const task = this.#follow(run)
      .catch((error: unknown) => {
        this.#logger.warn({ run: run.id, err: messageOf(error) }, 'run monitor: following the run failed');
      })
      .finally(() => this.#pumps.delete(run.id));
    this.#pumps.set(run.id, task);
  }

  /**
   * One pass over every active run that has no pump attached: `missing` → failed
   * with LOST_RUN_MESSAGE; succeeded/failed → result recorded; pending/running →
   * log pump (re-)attached. Concurrent calls share one pass.
   */
  reconcile(): Promise<void> {
    this.#reconciling ??= this.#reconcilePass().finally(() => {
      this.#reconciling = undefined;
    });
    return this.#reconciling;
  }

  #shutdown(): void {
    this.#stop.abort();
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }

  async #reconcilePass(): Promise<void> {
    let active: RunRecord[];
    try {
      active = await this.#store.listActive();
    } catch (error) {
      this.#logger.warn({ err: messageOf(error) }, 'reconcile: could not list active runs');
      return;
    }
    for (const run of active) {
      if (this.#stop.signal.aborted) return;
      if (this.#pumps.has(run.id)) continue;
      try {
        await this.#reconcileRun(run);
      } catch (error) {
        this.#logger.warn({ run: run.id, err: messageOf(error) }, 'reconcile: could not inspect run');
      }
    }
  }

  async #reconcileRun(run: RunRecord): Promise<void> {
    const state = await this.#executor.inspect(run);
    switch (state.state) {
      case 'missing':
        await this.#failLost(run);
        return;
      case 'succeeded':
      case 'failed':
        // Pick up any lines the executor still has, then record the outcome.
        this.track(run);
        return;
      case 'running':
        if (run.status === 'pending') {
          await this.#store.update(run.id, { status: 'running', startedAt: run.startedAt ?? this.#clock() }, ACTIVE_STATUSES);
        }
        this.track(run);
        return;
      case 'pending':
        this.track(run);
        return;
    }
  }

  /**
   * Pumps a run's output until it is settled. When the log stream ends while the
   * run is still active (e.g. the Job's pod is not up yet), looks again after a
   * back-off that doubles up to the reconcile interval, rather than waiting for
   * the next full pass.
   */
  async #follow(run: RunRecord): Promise<void> {
    let current = run;
    let delay = this.#recheckDelayMs;
    for (;;) {
      const { received, outcome } = await this.#pumpOnce(current);
      if (outcome !== 'active' || this.#stop.signal.aborted) return;
      if (received > 0) delay = this.#recheckDelayMs;
      try {
        await sleep(delay, undefined, { signal: this.#stop.signal });
      } catch {
        return; // shutting down
      }
      delay = Math.min(delay * 2, this.#reconcileIntervalMs);
      const fresh = await this.#store.get(run.id);
      if (fresh === undefined || isFinal(fresh.status)) return;
      current = fresh;
    }
  }

  /**
   * Copies the executor's output of `run` into the store, then settles the run.
   * Executors replay a run's output from its start, source by source; lines
   * already stored (from before a restart or an earlier pump) are skipped by
   * {@link ReplayFilter}.
   */
  async #pumpOnce(initial: RunRecord): Promise<{ received: number; outcome: 'settled' | 'active' | 'aborted' }> {
    const id = initial.id;
    const signal = this.#stop.signal;
    const state: PumpState = {
      running: initial.status === 'running',
      startedAt: initial.startedAt,
      commits: [...initial.commits],
      // Kept across restarts: a request's later events update what the store already has.
      reviewRequests: initial.reviewRequests ?? [],
      step: initial.step,
      batchOutcomes: initial.batchOutcomes === undefined ? undefined : { ...initial.batchOutcomes },
    };
    const replay = await ReplayFilter.load(this.#store, id);
    // Each line gets its number when read, so a write repeated after a failure stores it once.
    let nextSeq = replay.lastSeq;
    let buffer: { time: Date; line: string }[] = [];
    let bufferAfterSeq = nextSeq;
    let received = 0;
    // Store writes of one run, in order; each stays here until the store took it.
    const queue: PendingWrite[] = [];
    let draining: Promise<void> | undefined;
    const drain = (): Promise<void> => {
      draining ??= this.#drain(id, queue).finally(() => {
        draining = undefined;
      });
      return draining;
    };
    const keep = (write: PendingWrite): void => {
      queue.push(write);
      this.#pendingWrites += write.kind === 'lines' ? write.lines.length : 1;
      if (write.kind === 'lines') this.#pendingLines += write.lines.length;
      void drain();
    };
    const flush = (): void => {
      if (buffer.length === 0) return;
      keep({ kind: 'lines', afterSeq: bufferAfterSeq, lines: buffer });
      buffer = [];
      bufferAfterSeq = nextSeq;
    };
    const timer = setInterval(flush, this.#logFlushMs);
    timer.unref();
    try {
      for await (const line of this.#executor.logs(initial, { follow: true, signal })) {
        if (!replay.isNew(line)) continue;
        received++;
        buffer.push({ time: this.#clock(), line });
        nextSeq++;
        const update = this.#progressOf(line, state);
        if (update !== undefined) {
          // Lines before an event are stored before the progress it reports.
          flush();
          keep({ kind: 'update', update });
        } else if (buffer.length >= this.#logBatchSize) {
          flush();
        }
        // Bounded: while the store is failing, stop reading once the bound is reached (the executor keeps the output).
        if (this.#pendingLines >= this.#maxPendingLines) await this.#room();
      }
    } catch (error) {
      if (!signal.aborted) this.#logger.warn({ run: id, err: messageOf(error) }, 'run log stream failed');
    } finally {
      clearInterval(timer);
      flush();
      // Everything read is stored before the outcome, however long the store is away.
      while (queue.length > 0 && !signal.aborted) await drain();
      if (queue.length > 0) this.#forget(queue.splice(0));
    }
    if (signal.aborted) return { received, outcome: 'aborted' };
    return { received, outcome: await this.#settle(initial, state) };
  }

  /**
   * Stores a run's kept writes in order. A write the store refuses for now
   * (unavailable) is kept and tried again after a back-off, so an outage
   * delays progress and loses none of it; a write the store can never take
   * (the run is gone, a value it rejects) is dropped with a warning.
   */
  async #drain(id: string, queue: PendingWrite[]): Promise<void> {
    let delay = this.#recheckDelayMs;
    let failing = false;
    while (queue.length > 0) {
      const head = queue[0] as PendingWrite;
      try {
        if (head.kind === 'lines') await this.#store.appendLogs(id, head.lines, { afterSeq: head.afterSeq });
        else await this.#store.update(id, head.update, ACTIVE_STATUSES);
      } catch (error) {
        if (isLasting(error)) {
          this.#logger.warn({ run: id, err: messageOf(error) }, 'could not store run progress; dropped');
          this.#forget([queue.shift() as PendingWrite]);
          continue;
        }
        if (!failing)
          this.#logger.warn({ run: id, pending: this.#pendingWrites, err: messageOf(error) }, 'could not store run progress; kept to store it again');
        failing = true;
        try {
          await sleep(delay, undefined, { signal: this.#stop.signal });
        } catch {
          return; // shutting down: a restart reads the output again
        }
        delay = Math.min(delay * 2, this.#maxRetryDelayMs);
        continue;
      }
      this.#forget([queue.shift() as PendingWrite]);
      if (failing) this.#logger.info({ run: id, pending: this.#pendingWrites }, 'storing run progress again');
      failing = false;
      delay = this.#recheckDelayMs;
    }
  }

  /**
   * Runs `write` until the store takes it: again after a back-off while the
   * store is unavailable, rethrowing what trying again will not cure.
   * @returns false when the monitor stopped first
   */
  async #retrying(id: string, write: () => Promise<void>): Promise<boolean> {
    let delay = this.#recheckDelayMs;
    for (;;) {
      try {
        await write();
        return true;
      } catch (error) {
        if (isLasting(error)) throw error;
        this.#logger.warn({ run: id, err: messageOf(error) }, 'could not store the run outcome; trying again');
      }
      try {
        await sleep(delay, undefined, { signal: this.#stop.signal });
      } catch {
        return false;
      }
      delay = Math.min(delay * 2, this.#maxRetryDelayMs);
    }
  }

  /** Takes writes off the pending count (stored, dropped, or left to a restart). */
  #forget(writes: readonly PendingWrite[]): void {
    for (const write of writes) {
      this.#pendingWrites -= write.kind === 'lines' ? write.lines.length : 1;
      if (write.kind === 'lines') this.#pendingLines -= write.lines.length;
    }
    if (this.#pendingLines < this.#maxPendingLines) {
      const waiters = this.#roomWaiters;
      this.#roomWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Resolves once the pending lines are below the bound, or the monitor stops. */
  #room(): Promise<void> {
    if (this.#pendingLines < this.#maxPendingLines || this.#stop.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.#roomWaiters.push(resolve);
      this.#stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  /** After the log stream ended: records the outcome when there is one. */
  async #settle(run: RunRecord, state: PumpState): Promise<'settled' | 'active'> {
    let execution: ExecutionState;
    try {
      execution = await this.#executor.inspect(run);
    } catch (error) {
      this.#logger.warn({ run: run.id, err: messageOf(error) }, 'could not inspect run');
      return 'active';
    }
    switch (execution.state) {
      case 'succeeded':
      case 'failed': {
        const { result } = execution;
        // The outcome waits out a store outage like the lines before it.
        return (await this.#retrying(run.id, () => this.#recordResult(run, result, state))) ? 'settled' : 'active';
      }
      case 'missing':
        return (await this.#failLost(run)) ? 'settled' : 'active';
      default:
        return 'active';
    }
  }

  /**
   * Fails a run the executor has no trace of, once it is older than the grace.
   * Its age is the database's (`now() - created_at`, in the update itself):
   * the service's clock may be minutes off the server's, and comparing the two
   * would keep lost runs pending (blocking their cluster) or skip the grace.
   * @returns whether the run is final now (failed here, or already)
   */
  async #failLost(run: RunRecord): Promise<boolean> {
    const failed = await this.#store.update(
      run.id,
      { status: 'failed', message: LOST_RUN_MESSAGE, failure: LOST_RUN_FAILURE, finishedAt: this.#clock() },
      ACTIVE_STATUSES,
      {
        createdAtLeastMsAgo: this.#missingGraceMs,
      },
    );
    if (failed !== undefined) {
      this.#logger.warn({ run: run.id, cluster: run.cluster.name }, 'run lost: the executor has no trace of it');
      return true;
    }
    const now = await this.#store.get(run.id);
    return now === undefined || isFinal(now.status);
  }

  async #recordResult(run: RunRecord, result: RunResult, state: PumpState): Promise<void> {
    const now = this.#clock();
    const update: RunUpdate = {
      status: result.status,
      message: result.message,
      commits: result.commits ?? state.commits,
      step: result.step ?? state.step,
      finishedAt: now,
      ...(result.gitops_path === undefined ? {} : { gitopsPath: result.gitops_path }),
      ...(result.changes === undefined ? {} : { changes: result.changes }),
      ...(result.batch === undefined ? {} : { batchOutcomes: finalOutcomes(result.batch, state.batchOutcomes) }),
      ...(result.status === 'failed' ? { failure: failureOfResult(result) } : {}),
      // A run that never reported progress still gets a start time; one that did keeps it.
      ...(state.startedAt === undefined ? { startedAt: now } : {}),
    };
    const recorded = await this.#store.update(run.id, update, ACTIVE_STATUSES);
    if (recorded !== undefined) this.#logger.info({ run: run.id, cluster: run.cluster.name, status: result.status }, 'scaffold run finished');
  }

  /** Turns one runner line into a store update, or undefined when it reports no progress. */
  #progressOf(line: string, state: PumpState): RunUpdate | undefined {
    const event = parseRunEvent(line);
    let update: { -readonly [K in keyof RunUpdate]: RunUpdate[K] } = {};
    if (!state.running) {
      // Any output means the runner is up.
      state.running = true;
      state.startedAt ??= this.#clock();
      update = { status: 'running', startedAt: state.startedAt };
    }
    if (event === undefined) return Object.keys(update).length > 0 ? update : undefined;
    if (isStepEvent(event)) {
      if (event.step !== undefined) {
        state.step = event.step;
        update.step = event.step;
      }
      if (event.step_name !== undefined) update.stepName = event.step_name;
      if (event.msg !== undefined) update.message = event.msg;
    } else if (event.event === 'commit') {
      const { pass, sha } = event;
      if (sha !== undefined && pass !== undefined && !state.commits.some((c) => c.sha === sha)) {
        state.commits.push({ pass, sha });
        update.commits = [...state.commits];
      }
    } else if (event.event === 'batch_cluster') {
      const { batch_cluster: cluster, status, sha, message, changes } = event;
      state.batchOutcomes = {
        ...state.batchOutcomes,
        [cluster]: { status, ...(message !== undefined ? { message } : {}), ...(changes !== undefined ? { changes } : {}) },
      };
      update.batchOutcomes = state.batchOutcomes;
      // The commit event came first, from a logger bound to the run's own cluster: this says whose it is.
      if (sha !== undefined && state.commits.some((c) => c.sha === sha && c.cluster !== cluster)) {
        state.commits = state.commits.map((c) => (c.sha === sha ? { ...c, cluster } : c));
        update.commits = [...state.commits];
      }
      if (event.msg !== undefined) update.message = event.msg;
    } else if (event.event === 'review_request') {
      const { forge, pass, number, url, state: requestState, branch } = event;
      const next = withReviewRequest(state.reviewRequests, {
        pass,
        forge,
        number,
        url,
        state: requestState,
        ...(branch === undefined ? {} : { branch }),
        updatedAt: event.time ?? this.#clock(),
      });
      if (next !== state.reviewRequests) {
        state.reviewRequests = next;
        update.reviewRequests = next;
      }
      // "waiting for request #3 to be merged: …" is what the run is doing now.
      if (event.msg !== undefined) update.message = event.msg;
    } else if (event.msg !== undefined) {
      // run_finished, a warning, or (with --wait-ready) each Kustomization's progress: the dashboard shows it.
      update.message = event.msg;
    }
    return Object.keys(update).length > 0 ? update : undefined;
  }
}

/** A store error that trying again will not cure (the run is gone, a value it rejects); anything else may pass. */
function isLasting(error: unknown): boolean {
  return error instanceof AppError && !(error instanceof UnavailableError);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
