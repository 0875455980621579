/**
 * Clocks of different machines are never compared. The real service runs
 * under libfaketime (its clock 10 minutes ahead, then 10 minutes behind) on a
 * real PostgreSQL server whose clock is the true one, with a real
 * scaffold-runner (true clock) that outlived an earlier service process:
 *
 * - ahead: the runner, whose lease says it renewed "10 minutes ago" by the
 *   service's clock, is not taken for dead (no SIGKILL, the run stays
 *   running), and a run without any runner is not failed before the grace;
 * - behind: a run without any runner, older than the grace by the database's
 *   clock, is failed as lost at once instead of staying pending (and
 *   blocking its cluster) for ten more minutes;
 * - the runner then finishes and its outcome is recorded.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PgRunStore } from '../../src/db/pg-run-store.js';
import { PgSqlClient } from '../../src/db/pg-sql-client.js';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { platformDir } from '../../src/package-paths.js';
import { processAlive, readLease } from '../../src/run-contract/run-lease.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { LOST_RUN_MESSAGE } from '../../src/service/run-monitor.js';
import { jobNameOf } from '../../src/run/scaffold-run.js';
import { git } from '../support/git.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { eventually } from '../support/runner.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const API_TOKEN = 'clock-skew-token-0123456789';
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const CLUSTER = { name: 'eu-skew-1', domain: 'eu-skew-1.example.net', region: 'eu-west-1' };
const certificate = createTestCertificate();

let scratch: string;
let postgres: TestPostgres;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-clock-skew-'));
  postgres = await startPostgres();
});
after(async () => {
  await postgres?.stop();
  await rm(scratch, { recursive: true, force: true });
});

const skewed = (offset: string) => ({ LD_PRELOAD: LIBFAKETIME, FAKETIME: offset });

async function runOf(service: ServiceProcess, id: string): Promise<{ status: string; message: string }> {
  const response = await fetch(`${service.address}/api/v1/scaffolds/${id}`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as { status: string; message: string };
}

describe('the service under a skewed clock (libfaketime)', { skip: existsSync(LIBFAKETIME) ? false : `libfaketime is not installed (${LIBFAKETIME})`, timeout: 300_000 }, () => {
  it('kills no healthy runner and keeps no lost run beyond the grace, ahead or behind by 10 minutes', async () => {
    const seed = join(scratch, 'seed.git');
    await ensureSeededBareRepository(seed, platformDir());
    const remote = join(scratch, 'remote.git');
    const marks = join(scratch, 'marks');
    await mkdir(marks);
    await git(scratch, 'clone', '--quiet', '--bare', seed, remote);
    // The first push blocks in the hook until the test releases it.
    await writeFile(join(remote, 'hooks', 'post-receive'), `#!/bin/sh\ntouch '${marks}/pushed'\nwhile [ ! -e '${marks}/release' ]; do sleep 0.1; done\n`);
    await chmod(join(remote, 'hooks', 'post-receive'), 0o755);
    const dataDir = join(scratch, 'service-data');
    const env = { API_TOKENS: API_TOKEN, AUTH_MODE: 'static', EXECUTOR: 'local', DATA_DIR: dataDir, DATABASE_URL: postgres.url, DEFAULT_GITOPS_REPO_URL: `file://${remote}` };

    // A runner started by a service with the true clock, which then dies.
    let service = await startServiceProcess(env);
    let id: string;
    let pid: number;
    try {
      const created = await fetch(`${service.address}/api/v1/scaffolds`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cluster: CLUSTER, sealing: { certificate: certificate.certificatePem } }),
      });
      assert.equal(created.status, 202, await created.clone().text());
      id = ((await created.json()) as { id: string }).id;
      await eventually('the first push to reach the remote', () => (existsSync(join(marks, 'pushed')) ? true : undefined), 120_000);
      pid = (await eventually('the lease', () => readLease(join(dataDir, 'runs', id, 'lease.json'))))!.pid;
    } finally {
      await service.kill();
    }
    assert.ok(processAlive(pid), 'the runner outlives the service');

    // A run whose runner never started: the executor has no trace of it.
    const lostId = 'lost-0000-run';
    const store = await PgRunStore.open({ databaseUrl: postgres.url });
    try {
      const lostCluster = { name: 'eu-lost-1', domain: 'eu-lost-1.example.net', region: 'eu-west-1' };
      await store.create({ id: lostId, cluster: lostCluster, repositoryUrl: `file://${remote}`, branch: 'main', reference: 'development', job: jobNameOf(lostId), createdBy: 'static:0', sealing: 'certificate' });
    } finally {
      await store.close();
    }

    try {
      // Ahead by 10 minutes, for longer than the lease TTL (15 s): the runner's lease looks 10 minutes old by this clock.
      service = await startServiceProcess(env, 60_000, skewed('+10m'));
      const watchUntil = performance.now() + 20_000;
      while (performance.now() < watchUntil) {
        assert.ok(processAlive(pid), 'the healthy runner is not killed');
        const run = await runOf(service, id);
        assert.ok(run.status === 'running' || run.status === 'pending', `the run goes on: ${run.status} ${run.message}`);
        assert.equal((await runOf(service, lostId)).status, 'pending', 'within the grace (by the database) the lost run is left alone');
        await sleep(1000);
      }
      await service.kill();

      // Behind by 10 minutes; the lost run is 3 minutes old by the database's clock, past the 2-minute grace.
      const sql = new PgSqlClient({ databaseUrl: postgres.url });
      try {
        await sql.query(`UPDATE scaffold_runs SET created_at = created_at - interval '3 minutes' WHERE id = $1`, [lostId]);
      } finally {
        await sql.close();
      }
      service = await startServiceProcess(env, 60_000, skewed('-10m'));
      const lost = await eventually('the lost run to fail', async () => {
        const run = await runOf(service, lostId);
        return run.status === 'pending' ? undefined : run;
      }, 20_000);
      assert.deepEqual([lost.status, lost.message], ['failed', LOST_RUN_MESSAGE]);
      assert.ok(processAlive(pid), 'the healthy runner is still not killed');

      await writeFile(join(marks, 'release'), '');
      const done = await eventually('the run to finish', async () => {
        const run = await runOf(service, id);
        return run.status === 'running' || run.status === 'pending' ? undefined : run;
      }, 120_000);
      assert.equal(done.status, 'succeeded', done.message);
    } finally {
      await service.kill();
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
});
