/**
 * The SQL port the database edge is written against. Two implementations speak
 * the same PostgreSQL dialect: `PgSqlClient` (a real server through `pg`) and
 * `PgliteSqlClient` (embedded PGlite), so the store and its migrations are one
 * code path whichever database the service runs on.
 */

/** The result of one statement. */
export interface SqlResult<T> {
  readonly rows: T[];
  /** Rows the statement returned or changed (the count of its command tag). */
  readonly rowCount: number;
}

/** A connection (or a transaction on one) that runs parameterised SQL. */
export interface SqlClient {
  /**
   * Runs one statement with `$1…$n` placeholders. Values are sent as parameters,
   * never spliced into the text.
   */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<SqlResult<T>>;
  /**
   * Runs `fn` in a transaction: committed when it resolves, rolled back when it
   * throws (the error is rethrown). Inside `fn` use only `tx`; calling a
   * transaction's own `transaction` opens a savepoint.
   */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
  /** Releases the connection(s). Calling it on a transaction handle is a no-op. */
  close(): Promise<void>;
}
