/**
 * The local executor's queue in the store (db/pg-run-queue.ts), on a real
 * PGlite data directory and a real PostgreSQL: runs left waiting by an
 * executor that crashed are started by the next one on the same store,
 * exactly once, under the same concurrency limit; two executors on one
 * PostgreSQL never start the same run; the store never holds a queued
 * credential in the clear.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '../../test/support/postgres.js';
import { migrate } from '../db/migrate.js';
import { PgRunQueue } from '../db/pg-run-queue.js';
import { PgRunStore } from '../db/pg-run-store.js';
import { PgSqlClient } from '../db/pg-sql-client.js';
import { PgliteSqlClient } from '../db/pglite-sql-client.js';
import type { SqlClient } from '../db/sql-client.js';
import { jobNameOf, type RunSecrets, type RunRecord } from '../run/run-record.js';
import type { ExecutionState } from '../service/run-executor.js';
import { LocalExecutor } from './local-executor.js';

// Notes "<run id> <sha256 of its git token>" in the shared ran.log the moment it starts (so
// every start is counted, however the run ends), then with HOLD=1 waits for the file `release`,
// then writes a successful result.
const RUNNER = `
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
const env = process.env;
appendFileSync(join(env.SHARED, 'ran.log'), env.SCAFFOLD_ID + ' ' + createHash('sha256').update(env.SCAFFOLD_GIT_TOKEN ?? '').digest('hex') + '\\n');
process.stdout.write(JSON.stringify({ event: 'step_started', step: 1, step_name: 'clone' }) + '\\n');
while (env.HOLD === '1' && !existsSync(join(env.SHARED, 'release'))) await new Promise((resolve) => setTimeout(resolve, 20));
writeFileSync(env.SCAFFOLD_RESULT_FILE, JSON.stringify({ status: 'succeeded', message: 'pushed', gitops_path: 'clusters/' + env.SCAFFOLD_CLUSTER, commits: [{ pass: 'all', sha: 'a'.repeat(40) }], step: 7 }));
`;

const QUEUE_KEY = 'd'.repeat(64);
const sha = (value: string): string => createHash('sha256').update(value).digest('hex');
const tokenOf = (id: string): string => `git-token-SECRET-${id}`;
const secretsOf = (id: string): RunSecrets => ({
  repositoryCredentials: { token: tokenOf(id) },
  certificate: `-----BEGIN CERTIFICATE-----\nSECRET-${id}\n-----END CERTIFICATE-----\n`,
});

/** One store connection, as one service process holds it. */
interface Connection {
  readonly client: SqlClient;
  readonly store: PgRunStore;
  readonly queue: PgRunQueue;
}

interface Backend {
  readonly name: string;
  connect(): Promise<Connection>;
  cleanup(): Promise<void>;
}

async function connection(client: SqlClient): Promise<Connection> {
  await migrate(client);
  return { client, store: new PgRunStore({ client }), queue: new PgRunQueue(client, QUEUE_KEY) };
}

async function pgliteBackend(): Promise<Backend> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gs-queue-pglite-'));
  return {
    name: 'PGlite on a data directory',
    connect: async () => connection(await PgliteSqlClient.open({ dataDir })),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
}

async function postgresBackend(server: TestPostgres): Promise<Backend> {
  return {
    name: 'PostgreSQL',
    connect: () => connection(new PgSqlClient({ databaseUrl: server.url, poolSize: 4 })),
    cleanup: () => server.stop(),
  };
}

let dir: string;
let runnerPath: string;
let counter = 0;

async function createRun(store: PgRunStore): Promise<RunRecord> {
  counter++;
  const id = `queued-${counter}-${process.pid}`;
  return store.create({
    id,
    cluster: { name: id, domain: `${id}.example.net`, region: 'eu-west-1' },
    repositoryUrl: 'file:///srv/gitops.git',
    branch: 'main',
    reference: 'development',
    job: jobNameOf(id),
    createdBy: 'static:0',
    sealing: 'certificate',
  });
}

function executorOn(
  queue: PgRunQueue,
  options: { readonly dataDir: string; readonly shared: string; readonly concurrency: number; readonly hold: boolean },
): LocalExecutor {
  return new LocalExecutor({
    runnerCommand: { command: process.execPath, args: [runnerPath] },
    dataDir: options.dataDir,
    concurrency: options.concurrency,
    queue,
    queueKey: QUEUE_KEY,
    extraEnv: { SHARED: options.shared, HOLD: options.hold ? '1' : '0' },
    killGraceMs: 2000,
  });
}

/** The starts ran.log recorded: run id → tokens digests, one per start. */
async function startsIn(shared: string): Promise<Map<string, string[]>> {
  const text = await readFile(join(shared, 'ran.log'), 'utf8').catch(() => '');
  const starts = new Map<string, string[]>();
  for (const line of text.split('\n').filter(Boolean)) {
    const [id, digest] = line.split(' ') as [string, string];
    starts.set(id, [...(starts.get(id) ?? []), digest]);
  }
  return starts;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function stateIn(executor: LocalExecutor, run: RunRecord): Promise<ExecutionState['state']> {
  return (await executor.inspect(run)).state;
}

async function sealedSecretsIn(client: SqlClient): Promise<string[]> {
  const { rows } = await client.query<{ secrets: string | null }>('SELECT secrets FROM local_run_queue');
  return rows.flatMap((row) => (row.secrets === null ? [] : [row.secrets]));
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-run-queue-'));
  runnerPath = join(dir, 'runner.mjs');
  await writeFile(runnerPath, RUNNER);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

for (const make of [pgliteBackend, async () => postgresBackend(await startPostgres())]) {
  describe('the local run queue in the store', () => {
    let backend: Backend;
    before(async () => {
      backend = await make();
    });
    after(async () => {
      await backend.cleanup();
    });

    it('starts the runs a crashed executor left queued on the next executor, each exactly once, one at a time', async (t) => {
      t.diagnostic(backend.name);
      const shared = await mkdtemp(join(dir, 'shared-'));
      const dataDir = join(shared, 'data');
      const first = await backend.connect();
      const runs = [await createRun(first.store), await createRun(first.store), await createRun(first.store)];
      const [one, two, three] = runs as [RunRecord, RunRecord, RunRecord];
      const crashed = executorOn(first.queue, { dataDir, shared, concurrency: 1, hold: true });
      for (const run of runs) await crashed.start(run, secretsOf(run.id));
      await waitFor('the first run to start', async () => ((await startsIn(shared)).has(one.id) ? true : undefined));
      assert.equal(await stateIn(crashed, two), 'pending');
      assert.equal(await stateIn(crashed, three), 'pending');
      const sealed = await sealedSecretsIn(first.client);
      assert.equal(sealed.length, 2, 'the two waiting runs hold their secrets in the store');
      for (const value of sealed)
        for (const run of runs) assert.ok(!value.includes(tokenOf(run.id)) && !value.includes(`SECRET-${run.id}`), 'sealed, never in the clear');

      // The crash: the process and its database connection are gone, its queued runs never drained.
      // (Its runner, in its own process group, outlives it, as a real one would.)
      await first.store.close();

      const second = await backend.connect();
      const restarted = executorOn(second.queue, { dataDir, shared, concurrency: 1, hold: true });
      await restarted.resume();
      await waitFor('the second run to start', async () => ((await startsIn(shared)).has(two.id) ? true : undefined));
      // Concurrency 1: the third waits while the second runs.
      assert.equal(await stateIn(restarted, three), 'pending');
      assert.equal((await startsIn(shared)).has(three.id), false);

      await writeFile(join(shared, 'release'), '');
      for (const run of [two, three]) await waitFor(`${run.id} to succeed`, async () => ((await stateIn(restarted, run)) === 'succeeded' ? true : undefined));
      await waitFor(`${one.id} to succeed`, async () => ((await stateIn(crashed, one)) === 'succeeded' ? true : undefined));

      // A third executor on the same store finds nothing left to start.
      const third = executorOn(second.queue, { dataDir: join(shared, 'data-3'), shared, concurrency: 1, hold: false });
      await third.resume();
      const starts = await startsIn(shared);
      assert.deepEqual(
        [...starts.entries()].sort(),
        runs.map((run) => [run.id, [sha(tokenOf(run.id))]]).sort(),
        'every run started exactly once, with its own secrets',
      );
      assert.deepEqual(await sealedSecretsIn(second.client), [], 'no secret stays in the store once the runs are claimed');
      await Promise.all([crashed.close(), restarted.close(), third.close()]);
      await second.store.close();
    });

    it('never starts a run that was cancelled while it waited, even after a restart', async () => {
      const shared = await mkdtemp(join(dir, 'shared-'));
      const dataDir = join(shared, 'data');
      const first = await backend.connect();
      const busy = await createRun(first.store);
      const waiting = await createRun(first.store);
      const ex = executorOn(first.queue, { dataDir, shared, concurrency: 1, hold: true });
      await ex.start(busy, secretsOf(busy.id));
      await ex.start(waiting, secretsOf(waiting.id));
      // What RunService.cancel does: the status first, then the executor.
      await first.store.update(waiting.id, { status: 'cancelled', message: 'cancelled by static:0' }, ['pending']);
      await ex.cancel(waiting);
      assert.equal(await stateIn(ex, waiting), 'failed');
      await first.store.close();

      const second = await backend.connect();
      const restarted = executorOn(second.queue, { dataDir, shared, concurrency: 1, hold: false });
      await restarted.resume();
      await writeFile(join(shared, 'release'), '');
      await waitFor(`${busy.id} to succeed`, async () => ((await stateIn(ex, busy)) === 'succeeded' ? true : undefined));
      await restarted.resume();
      assert.deepEqual([...(await startsIn(shared)).keys()], [busy.id]);
      assert.deepEqual(await sealedSecretsIn(second.client), []);
      await Promise.all([ex.close(), restarted.close()]);
      await second.store.close();
    });
  });
}

describe('two executors on one PostgreSQL', () => {
  let server: TestPostgres;
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await server.stop();
  });

  it('never claim the same queued run: concurrent claims from two connections take each run once', async () => {
    const one = await connection(new PgSqlClient({ databaseUrl: server.url, poolSize: 6 }));
    const two = await connection(new PgSqlClient({ databaseUrl: server.url, poolSize: 6 }));
    const runs: RunRecord[] = [];
    for (let i = 0; i < 10; i++) runs.push(await createRun(one.store));
    for (const run of runs) await one.queue.enqueue(run, secretsOf(run.id));
    const claims = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? one : two).queue.claim(`claimer-${i}`)));
    const claimed = claims.flatMap((c) => (c === undefined ? [] : [c]));
    assert.deepEqual(claimed.map((c) => c.run.id).sort(), runs.map((r) => r.id).sort(), 'each run claimed once, none left behind');
    for (const c of claimed) assert.deepEqual('secrets' in c ? c.secrets : c.unreadable, secretsOf(c.run.id));
    assert.equal(await one.queue.claim('late'), undefined);
    await one.store.close();
    await two.store.close();
  });

  it('never both start the same run: each queued run runs on exactly one executor', async () => {
    const shared = await mkdtemp(join(dir, 'shared-'));
    const one = await connection(new PgSqlClient({ databaseUrl: server.url, poolSize: 4 }));
    const two = await connection(new PgSqlClient({ databaseUrl: server.url, poolSize: 4 }));
    const runs: RunRecord[] = [];
    for (let i = 0; i < 12; i++) runs.push(await createRun(one.store));
    // Queued with no executor draining: what a crashed service leaves.
    for (const run of runs) await one.queue.enqueue(run, secretsOf(run.id));
    // Separate data directories: two hosts.
    const x = executorOn(one.queue, { dataDir: join(shared, 'x'), shared, concurrency: 3, hold: false });
    const y = executorOn(two.queue, { dataDir: join(shared, 'y'), shared, concurrency: 3, hold: false });
    await Promise.all([x.resume(), y.resume()]);
    for (const run of runs) {
      await waitFor(`${run.id} to succeed`, async () =>
        (await stateIn(x, run)) === 'succeeded' || (await stateIn(y, run)) === 'succeeded' ? true : undefined,
      );
    }
    // Every drain pass has looked at the emptied queue.
    await Promise.all([x.resume(), y.resume()]);
    for (const run of runs) {
      const owners = [(await stateIn(x, run)) !== 'missing', (await stateIn(y, run)) !== 'missing'].filter(Boolean).length;
      assert.equal(owners, 1, `${run.id} is known to exactly one executor`);
    }
    const starts = await startsIn(shared);
    assert.deepEqual([...starts.keys()].sort(), runs.map((r) => r.id).sort());
    for (const [id, digests] of starts) assert.equal(digests.length, 1, `${id} started once`);
    await Promise.all([x.close(), y.close()]);
    await one.store.close();
    await two.store.close();
  });
});
