/**
 * Protections of the PostgreSQL run store that a mutation campaign removed
 * without any test failing. Each test here fails when its protection is gone.
 * PGlite is the real engine: the same SQL, constraints and error codes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConflictError, ValidationError } from '../errors.js';
import { newRun } from '../service/run-store.contract.js';
import { migrate } from './migrate.js';
import { PgRunStore } from './pg-run-store.js';
import { PgliteSqlClient } from './pglite-sql-client.js';

describe('PgRunStore protections (PGlite)', () => {
  let client: PgliteSqlClient;
  let store: PgRunStore;
  before(async () => {
    client = await PgliteSqlClient.open();
    await migrate(client);
    store = new PgRunStore({ client });
  });
  after(async () => {
    await store?.close();
  });

  it("names the cluster's active run in a conflict, not an earlier run of the cluster that has ended", async () => {
    const ended = await store.create(newRun());
    assert.ok(await store.update(ended.id, { status: 'failed', finishedAt: new Date() }));
    const active = await store.create(newRun({ cluster: ended.cluster.name }));
    // The database's clock went back (a failover to a host whose clock is behind): the run that ended reads as the newer one.
    await client.query(`UPDATE scaffold_runs SET created_at = now() + interval '1 hour' WHERE id = $1`, [ended.id]);
    await assert.rejects(store.create(newRun({ cluster: ended.cluster.name })), (error: unknown) => {
      assert.ok(error instanceof ConflictError, String(error));
      assert.match(error.message, new RegExp(`\\(${active.id}\\)`));
      assert.doesNotMatch(error.message, new RegExp(ended.id));
      return true;
    });
  });

  it('fails only the create whose text the database cannot hold (a NUL byte), and stores the others of its batch', async () => {
    // The first two creates go alone (two batches in flight); the rest wait and go together.
    const runs = Array.from({ length: 8 }, () => newRun());
    const refused = { ...newRun(), reference: 'develop\u0000ment' };
    const calls = [...runs.slice(0, 5), refused, ...runs.slice(5)];
    const results = await Promise.allSettled(calls.map((run) => store.create(run)));
    assert.equal(results[5]!.status, 'rejected', 'the run with a NUL byte is refused');
    assert.deepEqual(
      results.filter((_, index) => index !== 5).map((result) => result.status),
      Array.from({ length: 8 }, () => 'fulfilled'),
      'every other create of the batch resolves as it would alone',
    );
    assert.equal(await store.get(refused.id), undefined);
    for (const run of runs) assert.equal((await store.get(run.id))?.id, run.id);
  });

  it('refuses a page larger than 1000 runs, so no caller reads the whole table in one query', async () => {
    await assert.rejects(store.list({ limit: 1001 }), ValidationError);
    await store.list({ limit: 1000 });
  });

  it("records a runner's outcome whose texts PostgreSQL cannot hold (a NUL byte), with the offending characters replaced", async () => {
    // A runner's message, step name, path, commit and kept files come from its output; one NUL
    // byte in them made every try of the update fail, and the run never got its outcome.
    const run = await store.create(newRun());
    assert.ok(await store.update(run.id, { status: 'running', stepName: 'render\u0000', message: 'rendering \u0000' }));
    const finished = await store.update(run.id, {
      status: 'failed',
      message: 'verify: a\u0000b',
      gitopsPath: 'clusters/\u0000eu-1',
      commits: [{ pass: 'remove', sha: 'a\u0000b' }],
      changes: { added: 0, modified: 0, removed: 1, kept: ['clusters/eu-1/x\u0000.yaml', 'lone \uD800 surrogate'] },
      finishedAt: new Date(),
    });
    assert.ok(finished, 'the outcome is recorded');
    const stored = await store.get(run.id);
    assert.deepEqual(stored, finished);
    assert.equal(stored?.status, 'failed');
    assert.equal(stored?.stepName, 'render\uFFFD');
    assert.equal(stored?.message, 'verify: a\uFFFDb');
    assert.equal(stored?.gitopsPath, 'clusters/\uFFFDeu-1');
    assert.deepEqual(stored?.commits, [{ pass: 'remove', sha: 'a\uFFFDb' }]);
    assert.deepEqual(stored?.changes?.kept, ['clusters/eu-1/x\uFFFD.yaml', 'lone \uFFFD surrogate']);
  });

  it('reads at most 10000 log lines at once, however many a follower asks for', async () => {
    const run = await store.create(newRun());
    const at = new Date();
    await store.appendLogs(
      run.id,
      Array.from({ length: 10_001 }, (_, i) => ({ time: at, line: `line ${i + 1}` })),
    );
    const page = await store.readLogs(run.id, { limit: 1_000_000 });
    assert.equal(page.length, 10_000);
    assert.equal(page.at(-1)?.seq, 10_000);
    assert.deepEqual(
      (await store.readLogs(run.id, { afterSeq: 10_000, limit: 1_000_000 })).map((l) => l.line),
      ['line 10001'],
    );
  });

  it('refuses a cursor whose time is no time as a bad request, before it reaches the database', async () => {
    const cursor = Buffer.from(JSON.stringify(['yesterday', 'some-id'])).toString('base64url');
    await assert.rejects(store.list({ cursor }), ValidationError);
  });
});
