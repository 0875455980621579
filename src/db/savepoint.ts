/**
 * Nested transactions on both SQL clients: `transaction()` called on a
 * transaction handle runs inside a savepoint of the open transaction, so an
 * inner failure rolls back only the inner work.
 */
import type { SqlClient } from './sql-client.js';

/**
 * Runs `fn` with `inner` (a handle one level deeper) inside savepoint
 * `sp_<depth>` of `outer`'s transaction; `inner` is closed afterwards either way.
 */
export async function runInSavepoint<T>(
  outer: Pick<SqlClient, 'query'>,
  depth: number,
  inner: SqlClient & { end(): void },
  fn: (tx: SqlClient) => Promise<T>,
): Promise<T> {
  const name = `sp_${depth}`;
  await outer.query(`SAVEPOINT ${name}`);
  try {
    const result = await fn(inner);
    await outer.query(`RELEASE SAVEPOINT ${name}`);
    return result;
  } catch (error) {
    await outer.query(`ROLLBACK TO SAVEPOINT ${name}`);
    throw error;
  } finally {
    inner.end();
  }
}
