/**
 * `SqlClient` on embedded PGlite: PostgreSQL compiled to WebAssembly, running in
 * this process. The same SQL as on a server; the embedded default when no
 * DATABASE_URL is configured.
 */
import { mkdir } from 'node:fs/promises';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { SqlClient, SqlResult } from './sql-client.js';

/** Where PGlite keeps its data. */
export interface PgliteSqlClientOptions {
  /**
   * Data directory on disk; created when missing. Only one process may open a
   * directory at a time (PGlite has no postmaster to arbitrate).
   * @default undefined: in memory, gone when closed
   */
  readonly dataDir?: string;
}

/**
 * One PGlite instance. PGlite is a single connection: a statement sent while a
 * transaction is open would run inside that transaction. So every top-level
 * statement and transaction here waits its turn in one queue, and concurrent
 * callers see transactions as if they were serialisable.
 */
export class PgliteSqlClient implements SqlClient {
  readonly #db: PGlite;
  // Tail of the queue of top-level operations. PGlite 0.5 has an internal mutex
  // with the same effect; ours makes the guarantee independent of its version.
  #tail: Promise<unknown> = Promise.resolve();
  #closed: Promise<void> | undefined;

  private constructor(db: PGlite) {
    this.#db = db;
  }

  /** Starts PGlite (initialising the data directory on first use) and waits until it is ready. */
  static async open(options: PgliteSqlClientOptions = {}): Promise<PgliteSqlClient> {
    if (options.dataDir !== undefined) await mkdir(options.dataDir, { recursive: true });
    const db = options.dataDir === undefined ? await PGlite.create() : await PGlite.create(options.dataDir);
    return new PgliteSqlClient(db);
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
    const run = this.#tail.then(operation, operation);
    // The queue continues whether this operation failed or not.
    this.#tail = run.catch(() => undefined);
    return run;
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
    const name = `sp_${this.#depth + 1}`;
    await this.query(`SAVEPOINT ${name}`);
    const inner = new PgliteTransaction(this.#tx, this.#depth + 1);
    try {
      const result = await fn(inner);
      await this.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (error) {
      await this.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw error;
    } finally {
      inner.end();
    }
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
