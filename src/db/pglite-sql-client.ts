/**
 * `SqlClient` on embedded PGlite: PostgreSQL compiled to WebAssembly, running in
 * this process. The same SQL as on a server; the embedded default when no
 * DATABASE_URL is configured.
 */
import { mkdir } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { SqlClient, SqlResult } from './sql-client.js';
import { runInSavepoint } from './savepoint.js';

/** Where PGlite keeps its data. */
export interface PgliteSqlClientOptions {
  /**
   * Data directory on disk; created when missing. Only one process may open a
   * directory at a time (PGlite has no postmaster to arbitrate).
   * @default undefined: in memory, gone when closed
   */
  readonly dataDir?: string;
  /**
   * Longest run of queued operations (with their callers' continuations)
   * between two event-loop turns, in ms; 0 yields after every operation. A
   * short slice keeps loop turns short (connections accepted, other sockets
   * served); a long one gives the database a larger share of the thread when
   * other work competes. Under the API benchmark's 200 connections, 10 kept
   * every client answered within seconds while POSTs kept pace with GETs;
   * 100 let clients starve again.
   * @default 10
   */
  readonly sliceMs?: number;
}

const DEFAULT_SLICE_MS = 10;

/**
 * One PGlite instance. PGlite is a single connection: a statement sent while a
 * transaction is open would run inside that transaction. So every top-level
 * statement and transaction here waits its turn in one FIFO queue, and
 * concurrent callers see transactions as if they were serialisable.
 *
 * PGlite executes on this thread, synchronously inside each call, so the
 * queue is drained in slices between event-loop turns (from `setImmediate`,
 * at most {@link PgliteSqlClientOptions.sliceMs} of work per turn) instead of
 * back to back. Without that, a server under load spends whole seconds per
 * loop turn in the database, and since libuv accepts one connection per turn
 * (libuv >= 1.45, Node 20), new connections wait in the kernel's accept queue
 * for as long as established ones keep it busy: at 200 connections most
 * requests took ~0.1 s and some clients got no answer within 10 s.
 */
export class PgliteSqlClient implements SqlClient {
  readonly #db: PGlite;
  readonly #sliceMs: number;
  // Top-level operations waiting their turn, oldest first. PGlite 0.5 has an
  // internal mutex too; ours makes the guarantee independent of its version
  // and decides when the work runs.
  readonly #queue: (() => Promise<void>)[] = [];
  #draining = false;
  #closed: Promise<void> | undefined;

  private constructor(db: PGlite, sliceMs: number) {
    this.#db = db;
    this.#sliceMs = sliceMs;
  }

  /** Starts PGlite (initialising the data directory on first use) and waits until it is ready. */
  static async open(options: PgliteSqlClientOptions = {}): Promise<PgliteSqlClient> {
    const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
    if (!Number.isFinite(sliceMs) || sliceMs < 0) throw new RangeError(`sliceMs must be a non-negative number, got ${sliceMs}`);
    if (options.dataDir !== undefined) await mkdir(options.dataDir, { recursive: true });
    const db = options.dataDir === undefined ? await PGlite.create() : await PGlite.create(options.dataDir);
    return new PgliteSqlClient(db, sliceMs);
  }

  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<SqlResult<T>> {
    return this.#exclusive(async () => resultOf(await this.#db.query<T>(sql, [...params])));
  }

  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    return this.#exclusive(() =>
      this.#db.transaction(async (raw) => {
        const tx = new PgliteTransaction(raw);
        try {
          return await fn(tx);
        } finally {
          tx.end();
        }
      }),
    );
  }

  /** Waits for queued work, then shuts PGlite down (flushing a data directory). Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.#exclusive(() => this.#db.close());
    return this.#closed;
  }

  #exclusive<T>(operation: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('PGlite client is closed'));
    return new Promise<T>((resolve, reject) => {
      // The queue continues whether this operation failed or not.
      this.#queue.push(async () => {
        try {
          resolve(await operation());
        } catch (error) {
          reject(error);
        }
      });
      if (!this.#draining) {
        this.#draining = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  /** Runs queued operations in order, one at a time, yielding to the event loop every `sliceMs`. */
  async #drain(): Promise<void> {
    let sliceStart = performance.now();
    for (;;) {
      const next = this.#queue.shift();
      if (next === undefined) break;
      await next();
      if (this.#queue.length > 0 && performance.now() - sliceStart >= this.#sliceMs) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    }
    this.#draining = false;
  }
}

/** The handle `fn` gets inside `PgliteSqlClient.transaction`. */
class PgliteTransaction implements SqlClient {
  readonly #tx: Transaction;
  readonly #depth: number;
  #ended = false;

  constructor(tx: Transaction, depth = 0) {
    this.#tx = tx;
    this.#depth = depth;
  }

  async query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<SqlResult<T>> {
    if (this.#ended) throw new Error('transaction is closed');
    return resultOf(await this.#tx.query<T>(sql, [...params]));
  }

  async transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    return runInSavepoint(this, this.#depth + 1, new PgliteTransaction(this.#tx, this.#depth + 1), fn);
  }

  async close(): Promise<void> {}

  end(): void {
    this.#ended = true;
  }
}

function resultOf<T>(result: { rows: T[]; affectedRows?: number }): SqlResult<T> {
  // PGlite reports affectedRows for INSERT/UPDATE/DELETE and 0 for SELECT.
  return { rows: result.rows, rowCount: Math.max(result.affectedRows ?? 0, result.rows.length) };
}
