/**
 * The local executor's run queue in the store, at the queue's own interface:
 * what a claim, a drop and a cancellation leave behind. The executor-level
 * tests (`local/durable-run-queue.test.ts`) did not notice these protections
 * removed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startPostgres, type TestPostgres } from '../../test/support/postgres.js';
import type { RunSecrets } from '../run/run-record.js';
import { newRun } from '../service/run-store.contract.js';
import { migrate } from './migrate.js';
import { PgRunQueue } from './pg-run-queue.js';
import { PgRunStore } from './pg-run-store.js';
import { PgSqlClient } from './pg-sql-client.js';
import { PgliteSqlClient } from './pglite-sql-client.js';
import type { SqlClient } from './sql-client.js';

const QUEUE_KEY = 'q'.repeat(64);
const secretsOf = (id: string): RunSecrets => ({ repositoryCredentials: { token: `token-of-${id}` } });

describe('PgRunQueue (PGlite)', () => {
  let client: PgliteSqlClient;
  let store: PgRunStore;
  let queue: PgRunQueue;
  before(async () => {
    client = await PgliteSqlClient.open();
    await migrate(client);
    store = new PgRunStore({ client });
    queue = store.localRunQueue(QUEUE_KEY);
  });
  after(async () => {
    await store?.close();
  });

  /** Claims until the queue is empty, so each test starts on an empty queue. */
  const drain = async (): Promise<void> => {
    while ((await queue.claim('drain')) !== undefined);
  };
  const sealedOf = async (id: string): Promise<string | null | undefined> =>
    (await client.query<{ secrets: string | null }>('SELECT secrets FROM local_run_queue WHERE run_id = $1', [id])).rows[0]?.secrets;

  it('hands runs out oldest first, each with its own secrets', async () => {
    await drain();
    const runs = [await store.create(newRun()), await store.create(newRun()), await store.create(newRun())];
    for (const run of runs) await queue.enqueue(run, secretsOf(run.id));
    for (const run of runs) {
      const claimed = await queue.claim('executor-1');
      assert.equal(claimed?.run.id, run.id);
      assert.deepEqual(claimed && 'secrets' in claimed ? claimed.secrets : undefined, secretsOf(run.id));
    }
    assert.equal(await queue.claim('executor-1'), undefined);
  });

  it('drops only a run that still waits: one already claimed is running somewhere and is not reported dropped', async () => {
    await drain();
    const claimedRun = await store.create(newRun());
    const waiting = await store.create(newRun());
    await queue.enqueue(claimedRun, secretsOf(claimedRun.id));
    assert.equal((await queue.claim('executor-1'))?.run.id, claimedRun.id);
    assert.equal(await queue.drop(claimedRun.id), false, 'a claimed run is the claimer’s to stop');

    await queue.enqueue(waiting, secretsOf(waiting.id));
    assert.equal(await queue.isQueued(waiting.id), true);
    assert.equal(await queue.drop(waiting.id), true);
    assert.equal(await queue.isQueued(waiting.id), false);
    assert.equal(await sealedOf(waiting.id), null, 'its secrets are gone with it');
    assert.equal(await queue.claim('executor-1'), undefined);
  });

  it('never hands out a run cancelled while it waited, and its secrets leave the store at the next claim', async () => {
    await drain();
    const cancelled = await store.create(newRun());
    const next = await store.create(newRun());
    await queue.enqueue(cancelled, secretsOf(cancelled.id));
    await queue.enqueue(next, secretsOf(next.id));
    // Cancelled while no executor was up to drop it from the queue.
    assert.ok(await store.update(cancelled.id, { status: 'cancelled' }, ['pending']));
    assert.equal((await queue.claim('executor-1'))?.run.id, next.id);
    assert.equal(await sealedOf(cancelled.id), null, 'no secret of a run that will never start stays in the store');
    assert.equal(await queue.isQueued(cancelled.id), false);
  });

  it('holds secrets sealed: a value copied onto another run does not open, nor does one sealed under another key', async () => {
    await drain();
    const [a, b] = [await store.create(newRun()), await store.create(newRun())];
    await queue.enqueue(a, secretsOf(a.id));
    await queue.enqueue(b, secretsOf(b.id));
    const sealedA = await sealedOf(a.id);
    assert.ok(sealedA && !sealedA.includes(`token-of-${a.id}`), 'sealed, never in the clear');
    await client.query('UPDATE local_run_queue SET secrets = $1 WHERE run_id = $2', [sealedA, b.id]);
    assert.ok(await store.update(a.id, { status: 'cancelled' }, ['pending']));
    const copied = await queue.claim('executor-1');
    assert.equal(copied?.run.id, b.id);
    assert.ok(copied && 'unreadable' in copied, 'the copy onto another run does not open');

    const c = await store.create(newRun());
    await store.localRunQueue('another key'.padEnd(64, 'x')).enqueue(c, secretsOf(c.id));
    const foreign = await queue.claim('executor-1');
    assert.equal(foreign?.run.id, c.id);
    assert.ok(foreign && 'unreadable' in foreign, 'sealed under another key: unreadable');
  });
});

describe('PgRunQueue on PostgreSQL', () => {
  let server: TestPostgres | undefined;
  const clients: SqlClient[] = [];
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server?.stop();
  });

  it('gives each of as many concurrent claims as runs wait a run of its own: none comes back empty-handed', async () => {
    for (let i = 0; i < 4; i++) clients.push(new PgSqlClient({ databaseUrl: server!.url, poolSize: 4 }));
    await migrate(clients[0]!);
    const store = new PgRunStore({ client: clients[0]! });
    const queues = clients.map((c) => new PgRunQueue(c, QUEUE_KEY));
    for (let round = 0; round < 5; round++) {
      const runs = await Promise.all(Array.from({ length: 12 }, () => store.create(newRun())));
      for (const run of runs) await queues[0]!.enqueue(run, secretsOf(run.id));
      const claims = await Promise.all(runs.map((_, i) => queues[i % queues.length]!.claim(`executor-${i}`)));
      assert.deepEqual(
        claims.map((c) => c?.run.id ?? 'nothing').sort(),
        runs.map((r) => r.id).sort(),
        `round ${round}: every claim took a waiting run, and no run twice`,
      );
    }
  });
});
