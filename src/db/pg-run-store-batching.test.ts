/**
 * Concurrent creates share INSERT statements (group commit). What a caller
 * sees must not change: every create resolves or fails as it would alone, on
 * PostgreSQL and on PGlite.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startPostgres, type TestPostgres } from '../../test/support/postgres.js';
import { ConflictError, UnavailableError, ValidationError } from '../errors.js';
import type { NewRun } from '../service/run-store.js';
import { newRun } from '../service/run-store.contract.js';
import { migrate } from './migrate.js';
import { PgRunStore } from './pg-run-store.js';
import { PgSqlClient } from './pg-sql-client.js';
import { PgliteSqlClient } from './pglite-sql-client.js';
import type { SqlClient, SqlResult } from './sql-client.js';

/** Counts the run inserts that reach the database, and can make the next multi-row one fail. */
class CountingClient implements SqlClient {
  inserts = 0;
  failNextBatch: Error | undefined;
  readonly #inner: SqlClient;

  constructor(inner: SqlClient) {
    this.#inner = inner;
  }

  async query<T>(sql: string, params?: readonly unknown[]): Promise<SqlResult<T>> {
    if (sql.startsWith('INSERT INTO scaffold_runs')) {
      this.inserts++;
      if (this.failNextBatch && sql.includes('ON CONFLICT')) {
        const error = this.failNextBatch;
        this.failNextBatch = undefined;
        throw error;
      }
    }
    return this.#inner.query<T>(sql, params);
  }
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    return this.#inner.transaction(fn);
  }
  close(): Promise<void> {
    return this.#inner.close();
  }
}

const rejectionOf = (result: PromiseSettledResult<unknown>): unknown => (result.status === 'rejected' ? result.reason : undefined);

for (const backend of ['PGlite', 'PostgreSQL'] as const) {
  describe(`PgRunStore creates under concurrency (${backend})`, () => {
    let server: TestPostgres | undefined;
    let client: CountingClient;
    let store: PgRunStore;

    before(async () => {
      let inner: SqlClient;
      if (backend === 'PostgreSQL') {
        server = await startPostgres();
        inner = new PgSqlClient({ databaseUrl: server.url, poolSize: 8 });
      } else {
        inner = await PgliteSqlClient.open();
      }
      await migrate(inner);
      client = new CountingClient(inner);
      store = new PgRunStore({ client });
    });
    after(async () => {
      await store?.close();
      await server?.stop();
    });

    it('stores many concurrent creates in a few statements, each run as its create returned it', async () => {
      const runs = Array.from({ length: 60 }, () => newRun());
      const before = client.inserts;
      const created = await Promise.all(runs.map((run) => store.create(run)));
      const statements = client.inserts - before;
      assert.ok(statements <= 10, `60 creates took ${statements} INSERT statements`);
      for (const record of created) assert.deepEqual(await store.get(record.id), record);
      assert.deepEqual(
        created.map((record) => record.cluster.name),
        runs.map((run) => run.cluster.name),
      );
    });

    it('reports each conflict inside a batch as it would alone, and stores the rest', async () => {
      const active = await store.create(newRun());
      const twin = newRun();
      const fresh = Array.from({ length: 6 }, () => newRun());
      // The first two calls go alone (two batches in flight); everything after waits and goes together.
      const ahead = [newRun(), newRun()];
      const sameCluster = [newRun({ cluster: 'twin-cluster' }), newRun({ cluster: 'twin-cluster' })];
      const calls = [
        ...ahead,
        ...fresh.slice(0, 3),
        newRun({ cluster: active.cluster.name }),
        newRun({ id: active.id }),
        ...sameCluster,
        twin,
        { ...newRun(), id: twin.id },
        ...fresh.slice(3),
      ];
      const before = client.inserts;
      const results = await Promise.allSettled(calls.map((run) => store.create(run)));
      assert.ok(client.inserts - before < calls.length, 'the waiting creates shared a statement');

      const byIndex = (index: number) => results[index]!;
      for (const index of [0, 1, 2, 3, 4, 11, 12, 13]) assert.equal(byIndex(index).status, 'fulfilled', `call ${index}`);
      const activeConflict = rejectionOf(byIndex(5));
      assert.ok(activeConflict instanceof ConflictError);
      assert.match(activeConflict.message, new RegExp(`${active.cluster.name} already has an active run .*\\(${active.id}\\)`));
      const idConflict = rejectionOf(byIndex(6));
      assert.ok(idConflict instanceof ConflictError);
      assert.match(idConflict.message, new RegExp(`run ${active.id} already exists`));

      // Of two runs of one cluster in one batch, the first is stored and the second conflicts with it.
      assert.equal(byIndex(7).status, 'fulfilled');
      assert.match(String((rejectionOf(byIndex(8)) as Error | undefined)?.message), /twin-cluster already has an active run/);
      // Of two runs with one id, the first is stored and the second is told it exists.
      assert.equal(byIndex(9).status, 'fulfilled');
      assert.match(String((rejectionOf(byIndex(10)) as Error | undefined)?.message), new RegExp(`run ${twin.id} already exists`));
      assert.equal((await store.get(twin.id))?.cluster.name, twin.cluster.name, 'the stored run with that id is the first');

      const active2 = await store.listActive();
      assert.equal(active2.filter((run) => run.cluster.name === 'twin-cluster').length, 1);
    });

    it('fails only the run the database refuses for its data, and stores the others of its batch', async () => {
      const runs = Array.from({ length: 8 }, () => newRun());
      const refused = { ...newRun(), rotation: 'sideways' } as unknown as NewRun;
      const calls = [...runs.slice(0, 4), refused, ...runs.slice(4)];
      const results = await Promise.allSettled(calls.map((run) => store.create(run)));
      assert.ok(rejectionOf(results[4]!) instanceof ValidationError);
      assert.deepEqual(results.filter((result) => result.status === 'fulfilled').length, 8);
      assert.equal(await store.get(refused.id), undefined);
      for (const run of runs) assert.equal((await store.get(run.id))?.id, run.id);
    });

    it('fails every waiting create when the batch itself fails, without sending them again one by one', async () => {
      const runs = Array.from({ length: 8 }, () => newRun());
      client.failNextBatch = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
      const before = client.inserts;
      const results = await Promise.allSettled(runs.map((run) => store.create(run)));
      const failed = results.filter((result) => rejectionOf(result) instanceof UnavailableError).length;
      assert.equal(failed, 6, 'the six that waited together failed together');
      assert.equal(client.inserts - before, 3, 'two alone and one batch: nothing sent again');
      for (const [index, run] of runs.entries()) {
        assert.equal((await store.get(run.id)) !== undefined, results[index]!.status === 'fulfilled', `run ${index} stored iff its create resolved`);
      }
    });
  });
}

describe('PgRunStore creates when PostgreSQL drops the connections under them', () => {
  let server: TestPostgres | undefined;
  let store: PgRunStore | undefined;
  let admin: PgSqlClient | undefined;
  before(async () => {
    server = await startPostgres();
    const client = new PgSqlClient({ databaseUrl: server.url, poolSize: 8 });
    await migrate(client);
    store = new PgRunStore({ client });
    admin = new PgSqlClient({ databaseUrl: server.url, poolSize: 1 });
  });
  after(async () => {
    await store?.close();
    await admin?.close();
    await server?.stop();
  });

  it('settles every create, keeps every run it reported stored, and serves the next creates', async () => {
    for (let round = 0; round < 5; round++) {
      const runs = Array.from({ length: 40 }, () => newRun());
      const creating = Promise.allSettled(runs.map((run) => store!.create(run)));
      // Every session of the database but the admin's own: the pool's, with their INSERTs in flight.
      await admin!.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
      const results = await creating;
      // Read on the admin's session: the pool may still hold sessions that have just been ended.
      const { rows } = await admin!.query<{ id: string; created_at: Date }>(`SELECT id, created_at FROM scaffold_runs WHERE id = ANY($1)`, [
        runs.map((run) => run.id),
      ]);
      const stored = new Map(rows.map((row) => [row.id, row.created_at.getTime()]));
      for (const [index, result] of results.entries()) {
        if (result.status === 'fulfilled')
          assert.equal(stored.get(runs[index]!.id), result.value.createdAt.getTime(), 'a run its create reported is stored as reported');
        // A refused create may have committed before its connection went: as before batching, the
        // caller hears 503 and the run monitor fails the stored run, which no executor knows, as lost.
        else assert.ok(result.reason instanceof UnavailableError, String(result.reason));
      }
    }
    // A session ended while idle in the pool fails the one statement that draws it, then is gone.
    const createSoon = async (run: NewRun, attempts = 10): Promise<unknown> =>
      store!.create(run).catch((error: unknown) => (attempts > 1 && error instanceof UnavailableError ? createSoon(run, attempts - 1) : Promise.reject(error)));
    const after = await Promise.all(Array.from({ length: 10 }, () => createSoon(newRun())));
    assert.equal(after.length, 10, 'the pool reconnected');
  });
});
