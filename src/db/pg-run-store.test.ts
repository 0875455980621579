import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startPostgres, type TestPostgres } from '../../test/support/postgres.js';
import { ConflictError, UnavailableError } from '../errors.js';
import { runRunStoreContract } from '../service/run-store.contract.js';
import type { NewRun } from '../service/run-store.js';
import { MIGRATIONS, migrate, type Migration } from './migrate.js';
import { PgRunStore } from './pg-run-store.js';
import { PgSqlClient } from './pg-sql-client.js';
import { PgliteSqlClient } from './pglite-sql-client.js';
import type { SqlClient } from './sql-client.js';
import { closedPort } from '../../test/support/net.js';

runRunStoreContract('PGlite in memory', async () => {
  const store = await PgRunStore.open();
  return { store, cleanup: () => store.close() };
});

runRunStoreContract('PGlite on a data directory', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'gs-pglite-'));
  const store = await PgRunStore.open({ dataDir });
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});

runRunStoreContract('PostgreSQL', async () => {
  const server = await startPostgres();
  try {
    const store = await PgRunStore.open({ databaseUrl: server.url, poolSize: 8 });
    return {
      store,
      async cleanup() {
        await store.close();
        await server.stop();
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
});

describe('PgRunStore on a PGlite data directory', () => {
  let dataDir = '';
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gs-pglite-'));
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps runs, logs and the one-active-run rule across a reopen', async () => {
    const run = newRun();
    const first = await PgRunStore.open({ dataDir });
    let finished;
    let active;
    try {
      await first.create(run);
      finished = await first.update(run.id, { status: 'succeeded', step: 7, commits: [{ pass: 'all', sha: 'c'.repeat(40) }] });
      await first.appendLogs(run.id, [{ time: new Date(), line: 'before reopen' }]);
      active = await first.create(newRun({ cluster: run.cluster.name }));
    } finally {
      await first.close();
    }
    await assert.rejects(first.ping(), UnavailableError, 'a closed PGlite store is unavailable');

    const second = await PgRunStore.open({ dataDir });
    try {
      assert.deepEqual(await second.get(run.id), finished);
      assert.deepEqual(await second.listActive(), [active]);
      await assert.rejects(second.create(newRun({ cluster: run.cluster.name })), ConflictError);
      // Numbering continues where it stopped.
      await second.appendLogs(run.id, [{ time: new Date(), line: 'after reopen' }]);
      assert.deepEqual(
        (await second.readLogs(run.id)).map((l) => [l.seq, l.line]),
        [
          [1, 'before reopen'],
          [2, 'after reopen'],
        ],
      );
    } finally {
      await second.close();
    }
  });
});

describe('PgRunStore specifics', () => {
  // One PostgreSQL server and one PGlite for the tests below: starting PGlite
  // costs a second or two, the store operations milliseconds.
  let server: TestPostgres | undefined;
  let pglite: PgliteSqlClient | undefined;
  before(async () => {
    [server, pglite] = await Promise.all([startPostgres(), PgliteSqlClient.open()]);
  });
  after(async () => {
    await pglite?.close();
    await server?.stop();
  });

  /** A fresh schema in the shared PGlite (its one connection keeps the search_path). */
  const freshPgliteSchema = async (): Promise<SqlClient> => {
    const schema = `s_${randomUUID().replaceAll('-', '')}`;
    await pglite!.query(`CREATE SCHEMA ${schema}`);
    await pglite!.query(`SET search_path TO ${schema}`);
    return pglite!;
  };

  it('stores log lines PostgreSQL text cannot hold, with the offending characters replaced', async () => {
    const client = await freshPgliteSchema();
    await migrate(client);
    const store = new PgRunStore({ client });
    const run = await store.create(newRun());
    await store.appendLogs(run.id, [
      { time: new Date(), line: 'nul\u0000byte' },
      { time: new Date(), line: 'lone \uD800 surrogate, pair \uD83D\uDE00 kept' },
    ]);
    assert.deepEqual(
      (await store.readLogs(run.id)).map((l) => l.line),
      ['nul\uFFFDbyte', 'lone \uFFFD surrogate, pair \uD83D\uDE00 kept'],
    );
  });

  it('never moves the log counter back: a numbered write repeated after later lines leaves room for the next unnumbered one', async () => {
    const client = await freshPgliteSchema();
    await migrate(client);
    const store = new PgRunStore({ client });
    const run = await store.create(newRun());
    const at = new Date();
    const line = (text: string) => ({ time: at, line: text });
    await store.appendLogs(run.id, [line('a'), line('b'), line('c')], { afterSeq: 0 });
    // The first line again (a write repeated after its acknowledgement was lost): stored once.
    await store.appendLogs(run.id, [line('a')], { afterSeq: 0 });
    await store.appendLogs(run.id, [line('d')]);
    assert.deepEqual(
      (await store.readLogs(run.id)).map((l) => [l.seq, l.line]),
      [
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
        [4, 'd'],
      ],
    );
  });

  it('reports a closed store as unavailable', async () => {
    const store = await PgRunStore.open({ databaseUrl: server!.url });
    await store.ping();
    await store.close();
    await assert.rejects(store.ping(), UnavailableError);
    await assert.rejects(store.get('x'), UnavailableError);
  });

  it('reports an unreachable server as unavailable, without the connection string', async () => {
    const port = await closedPort();
    await assert.rejects(PgRunStore.open({ databaseUrl: `postgres://scaffolder:hunter2@127.0.0.1:${port}/runs` }), (error: unknown) => {
      assert.ok(error instanceof UnavailableError, `expected UnavailableError, got ${String(error)}`);
      assert.doesNotMatch(error.message, /hunter2|scaffolder@/);
      return true;
    });
  });

  /** The URL of a fresh schema on the real server, selected through the startup options. */
  const freshPgSchemaUrl = async (): Promise<string> => {
    const schema = `s_${randomUUID().replaceAll('-', '')}`;
    const admin = new PgSqlClient({ databaseUrl: server!.url, poolSize: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`).finally(() => admin.close());
    const url = new URL(server!.url);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return url.toString();
  };

  describe('migrate', () => {
    it('applies every migration once, recording it', async () => {
      const client = await freshPgliteSchema();
      assert.deepEqual(
        await migrate(client),
        MIGRATIONS.map((m) => m.version),
      );
      assert.deepEqual(await migrate(client), []);
      const { rows } = await client.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
      assert.deepEqual(
        rows,
        MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
      );
    });

    it('lets replicas that start together migrate without racing', async () => {
      // Four replicas, each with its own pool, on one fresh schema.
      const databaseUrl = await freshPgSchemaUrl();
      const clients = Array.from({ length: 4 }, () => new PgSqlClient({ databaseUrl, poolSize: 2 }));
      try {
        const applied = await Promise.all(clients.map((c) => migrate(c)));
        // Each migration ran on exactly one replica.
        assert.deepEqual(
          applied.flat().sort((a, b) => a - b),
          MIGRATIONS.map((m) => m.version),
        );
        const { rows } = await clients[0]!.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
        assert.equal(rows[0]?.n, MIGRATIONS.length);
      } finally {
        await Promise.all(clients.map((c) => c.close()));
      }
    });

    it('rolls a failing migration back entirely and applies it once fixed', async () => {
      const client = await freshPgliteSchema();
      const next = MIGRATIONS.at(-1)!.version + 1;
      const broken: Migration = { version: next, name: 'broken', statements: ['CREATE TABLE half_done (a int)', 'SELECT no_such_column FROM half_done'] };
      await assert.rejects(migrate(client, { migrations: [...MIGRATIONS, broken] }), /no_such_column/);
      assert.equal((await client.query(`SELECT to_regclass('half_done') AS t`)).rows[0]?.['t'], null);
      assert.deepEqual(
        (await client.query('SELECT version FROM schema_migrations ORDER BY version')).rows,
        MIGRATIONS.map((m) => ({ version: m.version })),
      );

      const fixed: Migration = { version: next, name: 'fixed', statements: ['CREATE TABLE half_done (a int)'] };
      assert.deepEqual(await migrate(client, { migrations: [...MIGRATIONS, fixed] }), [next]);
    });

    it('refuses migrations out of order', async () => {
      const client = await freshPgliteSchema();
      const same: Migration = { version: 1, name: 'again', statements: [] };
      await assert.rejects(migrate(client, { migrations: [...MIGRATIONS, same] }), /out of order/);
    });
  });

  describe('SqlClient implementations', () => {
    const clients: { name: string; client: SqlClient }[] = [];
    let pg: PgSqlClient | undefined;
    before(async () => {
      pg = new PgSqlClient({ databaseUrl: await freshPgSchemaUrl(), poolSize: 4, statementTimeoutMs: 200 });
      clients.push({ name: 'pg', client: pg }, { name: 'pglite', client: await freshPgliteSchema() });
      for (const { client } of clients) await client.query('CREATE TABLE t (k text PRIMARY KEY, v int)');
    });
    after(async () => {
      await pg?.close();
    });

    it('commits a transaction, rolls one back on error, and scopes a nested one to a savepoint', async () => {
      for (const { name, client } of clients) {
        await client.transaction(async (tx) => {
          await tx.query('INSERT INTO t VALUES ($1, $2)', ['committed', 1]);
        });
        await assert.rejects(
          client.transaction(async (tx) => {
            await tx.query('INSERT INTO t VALUES ($1, $2)', ['rolled-back', 1]);
            throw new Error('boom');
          }),
          /boom/,
        );
        await client.transaction(async (tx) => {
          await tx.query('INSERT INTO t VALUES ($1, $2)', ['outer', 1]);
          await assert.rejects(
            tx.transaction(async (inner) => {
              await inner.query('INSERT INTO t VALUES ($1, $2)', ['inner', 1]);
              throw new Error('inner boom');
            }),
            /inner boom/,
          );
        });
        const { rows, rowCount } = await client.query<{ k: string }>('SELECT k FROM t ORDER BY k');
        assert.deepEqual(
          rows.map((r) => r.k),
          ['committed', 'outer'],
          name,
        );
        assert.equal(rowCount, 2, name);
        const updated = await client.query('UPDATE t SET v = v + 1');
        assert.equal(updated.rowCount, 2, `${name}: rowCount of an UPDATE`);
      }
    });

    it('refuses a transaction handle used after its transaction ended', async () => {
      for (const { client } of clients) {
        let leaked: SqlClient | undefined;
        await client.transaction(async (tx) => {
          leaked = tx;
        });
        await assert.rejects(leaked!.query('SELECT 1'), /transaction is closed/);
      }
    });

    it('runs concurrent transactions without interleaving their effects', async () => {
      for (const { name, client } of clients) {
        await client.query(`INSERT INTO t VALUES ('counter', 0)`);
        await Promise.all(
          Array.from({ length: 20 }, () =>
            client.transaction(async (tx) => {
              const { rows } = await tx.query<{ v: number }>(`SELECT v FROM t WHERE k = 'counter' FOR UPDATE`);
              await tx.query(`UPDATE t SET v = $1 WHERE k = 'counter'`, [rows[0]!.v + 1]);
            }),
          ),
        );
        assert.deepEqual((await client.query(`SELECT v FROM t WHERE k = 'counter'`)).rows, [{ v: 20 }], name);
      }
    });

    it('ends a statement that outlives the statement timeout (pg)', async () => {
      await assert.rejects(pg!.query('SELECT pg_sleep(2)'), (error: { code?: string }) => error.code === '57014');
    });
  });
});

function newRun(overrides: { readonly cluster?: string } = {}): NewRun {
  const id = randomUUID();
  const name = overrides.cluster ?? `c-${id.slice(0, 8)}`;
  return {
    id,
    cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' },
    repositoryUrl: 'https://git.example.net/platform/gitops.git',
    branch: 'main',
    reference: 'development',
    job: `scaffold-${id}`,
    createdBy: 'test',
    sealing: 'certificate',
  };
}

/** A loopback port nothing listens on (bound, then released). */
