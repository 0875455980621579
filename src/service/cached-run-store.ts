/**
 * A write-through cache of runs by id in front of another {@link RunStore}, so
 * that the hot read of the API (`GET /api/v1/scaffolds/{id}`, polled by every
 * caller until its run is final) costs no database round trip.
 *
 * ## Why it is correct, and when it is not
 *
 * The cache is valid only because **one service process is the only writer of
 * the runs table**: the deployment runs one replica with the `Recreate`
 * strategy (deploy/base/deployment.yaml; the run monitor assumes the same), and
 * every write of that process — the service's creates and cancels, the
 * monitor's progress and outcome updates — goes through this one instance.
 * Each write leaves the cache holding exactly the row the database returned
 * for it, so a read served from memory is what the database holds. The cache
 * starts empty, so a restart (or a `Recreate` rollout) needs no coordination.
 *
 * It stops being valid as soon as something else writes runs: a second
 * replica, an operator's SQL, a second `CachedRunStore` (or the bare store)
 * used for writes in the same process. Scale out only after removing this
 * cache or replacing it with one that is invalidated (e.g. LISTEN/NOTIFY).
 *
 * ## Rules
 *
 * - `create` and a successful `update` store the run the underlying store
 *   returned (RETURNING, never a re-read).
 * - An `update` whose condition failed (`undefined`) changed nothing: the entry
 *   is kept as it was.
 * - A write that threw may or may not have been applied (a connection lost
 *   after COMMIT): the entry is dropped and the next `get` reads the store.
 * - Writes to one run that overlap in time may complete in another order than
 *   they committed, so when two overlap the entry is dropped instead of set.
 * - A `get` that misses reads the store and keeps the result only if no write
 *   of that run started or ended meanwhile (its row could be older than the
 *   write's). Misses (unknown ids) are not cached.
 * - `list`, `listActive`, `appendLogs` and `ping` go to the store, and so does
 *   `readLogs`, with one exception: for a cached run the cache also knows where
 *   its log ends when it saw that happen — the run was created through it (no
 *   lines yet), every append since went through it, or a read since returned
 *   the end of the log — and a read of the lines after that end answers `[]`
 *   without a query. That is what makes `GET /api/v1/scaffolds/{id}` of a run
 *   without new lines (and each poll of a followed log that has nothing new)
 *   free. An append that threw makes the end unknown again.
 * - Least recently used entries are evicted beyond `maxEntries`.
 *
 * Cached runs are frozen and shared between callers: treat them as the
 * read-only values their type says they are.
 */
import type { LogLine, NewRun, RunFilter, RunGuard, RunPage, RunStore, RunUpdate } from './run-store.js';
import type { RunStatus, RunRecord } from '../run/run-record.js';

/** What a {@link CachedRunStore} needs. */
export interface CachedRunStoreDeps {
  /** The store of record; the cache closes it on `close()`. */
  readonly store: RunStore;
  /**
   * Most runs kept in memory (least recently used evicted first). A run is a
   * few hundred bytes, so the default costs a few MB.
   * @default 10000
   */
  readonly maxEntries?: number;
}

/** A cached run and, when known, the seq of its last stored log line (0: none). */
interface Entry {
  readonly run: RunRecord;
  logEnd: number | undefined;
}

/** Operations on one run in flight, to keep racing reads and writes from caching a stale value. */
interface Activity {
  /** Reads and writes in flight; the record is dropped at 0. */
  ops: number;
  /** Row writes (create, update) in flight. */
  writes: number;
  /** Set when a row write started while another was in flight; cleared when writes reach 0. */
  contended: boolean;
  /** Logical time of the last start or end of a row write. */
  lastWrite: number;
  /** Log appends in flight. */
  appends: number;
  /** Logical time of the last start or end of a log append. */
  lastAppend: number;
}

/** What a finished row write tells the cache. */
type Outcome = { readonly kind: 'run'; readonly run: RunRecord } | { readonly kind: 'unchanged' } | { readonly kind: 'unknown' };

const DEFAULT_MAX_ENTRIES = 10_000;
/** The RunStore contract's default and documented page of `readLogs`: a shorter answer is the end of the log. */
const CONTRACT_LOG_PAGE = 1000;

/**
 * `RunStore` with runs cached by id for `get`. Valid only while this process is
 * the single writer of runs (one replica); see the module documentation.
 */
export class CachedRunStore implements RunStore {
  readonly #store: RunStore;
  readonly #maxEntries: number;
  /** Insertion order is recency order: the first key is the least recently used. */
  readonly #entries = new Map<string, Entry>();
  readonly #activity = new Map<string, Activity>();
  #clock = 0;

  constructor(deps: CachedRunStoreDeps) {
    const maxEntries = deps.maxEntries ?? DEFAULT_MAX_ENTRIES;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`);
    this.#store = deps.store;
    this.#maxEntries = maxEntries;
  }

  /** Runs currently held in memory (for tests and metrics). */
  get size(): number {
    return this.#entries.size;
  }

  async create(run: NewRun): Promise<RunRecord> {
    const activity = this.#beginWrite(run.id);
    const startedAt = this.#clock;
    let created: RunRecord;
    try {
      created = await this.#store.create(run);
    } catch (error) {
      this.#endWrite(run.id, activity, { kind: 'unknown' });
      throw error;
    }
    // A new run has no log lines, unless an append raced the insert (it could
    // only have found the row after it was inserted, but the cache cannot tell).
    const logEnd = activity.appends === 0 && activity.lastAppend <= startedAt ? 0 : undefined;
    this.#endWrite(run.id, activity, { kind: 'run', run: created }, logEnd);
    return created;
  }

  async get(id: string): Promise<RunRecord | undefined> {
    const cached = this.#touch(id);
    if (cached !== undefined) return cached.run;
    const activity = this.#begin(id);
    const startedAt = this.#clock;
    try {
      const run = await this.#store.get(id);
      // Keep the row only if no write of this run started or ended while it
      // was read: such a write's own result is newer, or its outcome unknown.
      if (run !== undefined && activity.writes === 0 && activity.lastWrite <= startedAt && !this.#entries.has(id)) {
        return this.#remember(run).run;
      }
      return run;
    } finally {
      this.#release(id, activity);
    }
  }

  list(filter: RunFilter): Promise<RunPage> {
    return this.#store.list(filter);
  }

  listActive(): Promise<RunRecord[]> {
    return this.#store.listActive();
  }

  async update(id: string, update: RunUpdate, from?: readonly RunStatus[], guard?: RunGuard): Promise<RunRecord | undefined> {
    const activity = this.#beginWrite(id);
    let updated: RunRecord | undefined;
    try {
      updated = await this.#store.update(id, update, from, guard);
    } catch (error) {
      this.#endWrite(id, activity, { kind: 'unknown' });
      throw error;
    }
    this.#endWrite(id, activity, updated === undefined ? { kind: 'unchanged' } : { kind: 'run', run: updated });
    return updated;
  }

  async appendLogs(id: string, lines: readonly { readonly time: Date; readonly line: string }[], options: { readonly afterSeq?: number } = {}): Promise<void> {
    if (lines.length === 0) return this.#store.appendLogs(id, lines, options);
    const activity = this.#begin(id);
    activity.appends++;
    activity.lastAppend = ++this.#clock;
    try {
      await this.#store.appendLogs(id, lines, options);
      const entry = this.#entries.get(id);
      // The end was known before this append began (nothing learns it while an append is in flight).
      // Numbered lines end the log where they say only when they started at its known end.
      if (entry?.logEnd !== undefined)
        entry.logEnd = options.afterSeq === undefined || options.afterSeq === entry.logEnd ? entry.logEnd + lines.length : undefined;
    } catch (error) {
      // Stored or not: the end of the log is unknown now.
      const entry = this.#entries.get(id);
      if (entry !== undefined) entry.logEnd = undefined;
      throw error;
    } finally {
      activity.appends--;
      activity.lastAppend = ++this.#clock;
      this.#release(id, activity);
    }
  }

  async readLogs(id: string, options: { readonly afterSeq?: number; readonly limit?: number } = {}): Promise<LogLine[]> {
    const afterSeq = options.afterSeq ?? 0;
    const limit = options.limit ?? CONTRACT_LOG_PAGE;
    // Anything unusual (the store rejects bad values) goes to the store.
    const plain = Number.isInteger(afterSeq) && afterSeq >= 0 && Number.isInteger(limit) && limit >= 0;
    const known = this.#entries.get(id)?.logEnd;
    if (plain && known !== undefined && afterSeq >= known) return [];

    const activity = this.#begin(id);
    const startedAt = this.#clock;
    try {
      const lines = await this.#store.readLogs(id, options);
      // A page shorter than asked for ends at the end of the log, unless an
      // append ran meanwhile. (Beyond the contract's page the store may cap it.)
      const entry = this.#entries.get(id);
      if (
        plain &&
        entry !== undefined &&
        activity.appends === 0 &&
        activity.lastAppend <= startedAt &&
        limit > 0 &&
        limit <= CONTRACT_LOG_PAGE &&
        lines.length < limit
      ) {
        const last = lines.at(-1);
        if (last !== undefined) entry.logEnd = last.seq;
        else if (afterSeq === 0) entry.logEnd = 0;
      }
      return lines;
    } finally {
      this.#release(id, activity);
    }
  }

  ping(): Promise<void> {
    return this.#store.ping();
  }

  async close(): Promise<void> {
    this.#entries.clear();
    await this.#store.close();
  }

  /** The cached entry, made the most recently used. */
  #touch(id: string): Entry | undefined {
    const entry = this.#entries.get(id);
    if (entry !== undefined) {
      // Re-inserting moves the key to the end of the map's order.
      this.#entries.delete(id);
      this.#entries.set(id, entry);
    }
    return entry;
  }

  #begin(id: string): Activity {
    let activity = this.#activity.get(id);
    if (activity === undefined) {
      activity = { ops: 0, writes: 0, contended: false, lastWrite: 0, appends: 0, lastAppend: 0 };
      this.#activity.set(id, activity);
    }
    activity.ops++;
    return activity;
  }

  #release(id: string, activity: Activity): void {
    activity.ops--;
    if (activity.ops === 0) this.#activity.delete(id);
  }

  #beginWrite(id: string): Activity {
    const activity = this.#begin(id);
    if (activity.writes > 0) activity.contended = true;
    activity.writes++;
    activity.lastWrite = ++this.#clock;
    return activity;
  }

  #endWrite(id: string, activity: Activity, outcome: Outcome, logEnd?: number): void {
    activity.writes--;
    activity.lastWrite = ++this.#clock;
    // Overlapping writes of one run may resolve in another order than they
    // committed: when two overlapped, neither result is trusted.
    if (outcome.kind === 'unknown' || (outcome.kind === 'run' && activity.contended)) {
      this.#entries.delete(id);
    } else if (outcome.kind === 'run') {
      this.#remember(outcome.run, logEnd);
    }
    // 'unchanged': the condition failed, the row is as it was, and so is the entry.
    if (activity.writes === 0) activity.contended = false;
    this.#release(id, activity);
  }

  /** Caches `run`, keeping what is known of its log unless `logEnd` is given. */
  #remember(run: RunRecord, logEnd?: number): Entry {
    const previous = this.#entries.get(run.id);
    const entry: Entry = { run: freezeRun(run), logEnd: logEnd ?? previous?.logEnd };
    this.#entries.delete(run.id);
    this.#entries.set(run.id, entry);
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    return entry;
  }
}

/** Freezes the run and its nested plain objects (Dates stay as they are: they have no freezable state). */
function freezeRun(run: RunRecord): RunRecord {
  if (Object.isFrozen(run)) return run;
  Object.freeze(run.cluster);
  for (const commit of run.commits) Object.freeze(commit);
  Object.freeze(run.commits);
  for (const request of run.reviewRequests ?? []) Object.freeze(request);
  if (run.reviewRequests) Object.freeze(run.reviewRequests);
  return Object.freeze(run);
}
