/**
 * `SqlClient` on a real PostgreSQL server through a `pg` connection pool.
 */
import pg from 'pg';
import { silentLogger, type Logger } from '../logger.js';
import type { SqlClient, SqlResult } from './sql-client.js';
import { runInSavepoint } from './savepoint.js';

/** How to reach the server and how to bound the work sent to it. */
export interface PgSqlClientOptions {
  /** A libpq connection URI, `postgres://user:password@host:port/database?sslmode=…`. */
  readonly databaseUrl: string;
  /** Most connections the pool keeps open. @default 10 */
  readonly poolSize?: number;
  /**
   * Server-side `statement_timeout` of every connection, in milliseconds, so a
   * stuck query frees its connection instead of starving the pool. 0 disables it.
   * @default 30000
   */
  readonly statementTimeoutMs?: number;
  /** How long to wait for a connection (new or from the pool). @default 10000 */
  readonly connectionTimeoutMs?: number;
  /** Shown in `pg_stat_activity`. @default 'gitops-scaffolder' */
  readonly applicationName?: string;
  /** Receives pool errors of idle connections. @default silentLogger */
  readonly logger?: Logger;
}

/** A pool of connections to one PostgreSQL database. */
export class PgSqlClient implements SqlClient {
  readonly #pool: pg.Pool;
  #closed: Promise<void> | undefined;

  constructor(options: PgSqlClientOptions) {
    const logger = options.logger ?? silentLogger;
    const statementTimeout = options.statementTimeoutMs ?? 30_000;
    this.#pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
      statement_timeout: statementTimeout > 0 ? statementTimeout : false,
      // A transaction left open by a crashed request would hold row locks (and the
      // one-active-run index entry) forever; the server ends such sessions.
      idle_in_transaction_session_timeout: statementTimeout > 0 ? statementTimeout * 2 : 0,
      application_name: options.applicationName ?? 'gitops-scaffolder',
    });
    // An idle pooled connection that dies (server restart, network cut) emits
    // 'error' on the pool; unhandled, that would crash the process. The pool
    // drops the connection and the next query opens a new one.
    this.#pool.on('error', (error: Error & { code?: string }) => {
      logger.warn({ code: error.code, error: error.message }, 'idle PostgreSQL connection failed');
    });
  }

  async query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<SqlResult<T>> {
    const result = await this.#pool.query(sql, params as unknown[]);
    return { rows: result.rows as T[], rowCount: result.rowCount ?? result.rows.length };
  }

  async transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    const connection = await this.#pool.connect();
    // Set when ROLLBACK itself failed: the connection's state is unknown, so it
    // is destroyed rather than returned to the pool.
    let broken: Error | undefined;
    const tx = new PgTransaction(connection);
    try {
      await connection.query('BEGIN');
      const result = await fn(tx);
      await connection.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await connection.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      }
      throw error;
    } finally {
      tx.end();
      connection.release(broken);
    }
  }

  /** Ends the pool once; waits for checked-out connections to be released. */
  close(): Promise<void> {
    this.#closed ??= this.#pool.end();
    return this.#closed;
  }
}

/** The handle `fn` gets inside `PgSqlClient.transaction`: one checked-out connection. */
class PgTransaction implements SqlClient {
  readonly #connection: pg.PoolClient;
  readonly #depth: number;
  #ended = false;

  constructor(connection: pg.PoolClient, depth = 0) {
    this.#connection = connection;
    this.#depth = depth;
  }

  async query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<SqlResult<T>> {
    // A statement after COMMIT would run outside the transaction, on a connection
    // that may already serve someone else.
    if (this.#ended) throw new Error('transaction is closed');
    const result = await this.#connection.query(sql, params as unknown[]);
    return { rows: result.rows as T[], rowCount: result.rowCount ?? result.rows.length };
  }

  async transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    return runInSavepoint(this, this.#depth + 1, new PgTransaction(this.#connection, this.#depth + 1), fn);
  }

  async close(): Promise<void> {}

  end(): void {
    this.#ended = true;
  }
}
