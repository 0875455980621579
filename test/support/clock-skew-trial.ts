/**
 * Test support: the clock-skew scenario, shared by the integration test
 * (test/integration/clock-skew.test.ts, which asserts on it) and the fault
 * trials (`npm run chaos`, which tabulate it). The real service runs under
 * libfaketime (10 minutes ahead, then 10 minutes behind) on a real PostgreSQL
 * whose clock is the true one, with a real scaffold-runner (true clock) that
 * outlived an earlier service process, and beside it a run whose runner never
 * started. It only observes; judging is the caller's.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { PgRunStore } from '../../src/db/pg-run-store.js';
import { PgSqlClient } from '../../src/db/pg-sql-client.js';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { platformDir } from '../../src/package-paths.js';
import { processAlive, readLease } from '../../src/run-contract/run-lease.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { jobNameOf } from '../../src/run/run-record.js';
import { git } from './git.js';
import { eventually } from './runner.js';
import { startServiceProcess, type ServiceProcess } from './service-process.js';

export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const API_TOKEN = 'clock-skew-token-0123456789';
const CLUSTER = { name: 'eu-skew-1', domain: 'eu-skew-1.example.net', region: 'eu-west-1' };
/** The run whose runner never started. */
export const LOST_RUN_ID = 'lost-0000-run';

/** A run as the API shows it. */
export interface SkewRunView {
  readonly status: string;
  readonly message: string;
  readonly commits?: readonly { readonly pass: string; readonly sha: string }[];
}

/** What the scenario saw. */
export interface ClockSkewObservations {
  /** The remote the healthy run pushed to, and that run's id. */
  readonly remote: string;
  readonly runId: string;
  /** Ahead by 10 minutes, watched for `watchMs`: each poll's healthy-run and lost-run status, and whether the runner lived throughout. */
  readonly ahead: {
    readonly runStatuses: readonly string[];
    readonly lostStatuses: readonly string[];
    readonly runnerAlive: boolean;
    readonly watchedMs: number;
  };
  /** Behind by 10 minutes: the lost run (3 minutes old by the database) as it ended, or as it was when the wait gave up, and how long that took. */
  readonly behind: { readonly lost: SkewRunView; readonly afterMs: number; readonly runnerAlive: boolean };
  /** The healthy run once released, as recorded. */
  readonly finished: SkewRunView;
}

const skewed = (offset: string) => ({ LD_PRELOAD: LIBFAKETIME, FAKETIME: offset });

async function runOf(service: ServiceProcess, id: string): Promise<SkewRunView> {
  const response = await fetch(`${service.address}/api/v1/scaffolds/${id}`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
  if (response.status !== 200) throw new Error(`GET run ${id}: ${response.status} ${await response.text()}`);
  return (await response.json()) as SkewRunView;
}

/** Runs the scenario under `scratch` against the database at `postgresUrl`. */
export async function observeClockSkew(options: {
  readonly scratch: string;
  readonly postgresUrl: string;
  readonly watchMs?: number;
  readonly lostWaitMs?: number;
}): Promise<ClockSkewObservations> {
  const { scratch, postgresUrl, watchMs = 20_000, lostWaitMs = 20_000 } = options;
  const certificate = createTestCertificate();
  const seed = join(scratch, 'seed.git');
  await ensureSeededBareRepository(seed, platformDir());
  const remote = join(scratch, 'remote.git');
  const marks = join(scratch, 'marks');
  await mkdir(marks);
  await git(scratch, 'clone', '--quiet', '--bare', seed, remote);
  // The first push blocks in the hook until the scenario releases it.
  await writeFile(join(remote, 'hooks', 'post-receive'), `#!/bin/sh\ntouch '${marks}/pushed'\nwhile [ ! -e '${marks}/release' ]; do sleep 0.1; done\n`);
  await chmod(join(remote, 'hooks', 'post-receive'), 0o755);
  const dataDir = join(scratch, 'service-data');
  const env = {
    API_TOKENS: API_TOKEN,
    AUTH_MODE: 'static',
    EXECUTOR: 'local',
    DATA_DIR: dataDir,
    DATABASE_URL: postgresUrl,
    DEFAULT_GITOPS_REPO_URL: `file://${remote}`,
  };

  // A runner started by a service with the true clock, which then dies.
  let service = await startServiceProcess(env, 120_000);
  let id: string;
  let pid: number;
  try {
    const created = await fetch(`${service.address}/api/v1/scaffolds`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cluster: CLUSTER, sealing: { certificate: certificate.certificatePem } }),
    });
    if (created.status !== 202) throw new Error(`POST scaffold: ${created.status} ${await created.text()}`);
    id = ((await created.json()) as { id: string }).id;
    await eventually('the first push to reach the remote', () => (existsSync(join(marks, 'pushed')) ? true : undefined), 120_000);
    pid = (await eventually('the lease', () => readLease(join(dataDir, 'runs', id, 'lease.json'))))!.pid;
  } finally {
    await service.kill();
  }

  // A run whose runner never started: the executor has no trace of it.
  const store = await PgRunStore.open({ databaseUrl: postgresUrl });
  try {
    const lostCluster = { name: 'eu-lost-1', domain: 'eu-lost-1.example.net', region: 'eu-west-1' };
    await store.create({
      id: LOST_RUN_ID,
      cluster: lostCluster,
      repositoryUrl: `file://${remote}`,
      branch: 'main',
      reference: 'development',
      job: jobNameOf(LOST_RUN_ID),
      createdBy: 'static:0',
      sealing: 'certificate',
    });
  } finally {
    await store.close();
  }

  try {
    // Ahead by 10 minutes, for longer than the lease TTL (15 s): the runner's lease looks 10 minutes old by this clock.
    service = await startServiceProcess(env, 120_000, skewed('+10m'));
    const runStatuses: string[] = [];
    const lostStatuses: string[] = [];
    let runnerAlive = processAlive(pid);
    const watchStart = performance.now();
    while (performance.now() - watchStart < watchMs) {
      runnerAlive &&= processAlive(pid);
      runStatuses.push((await runOf(service, id)).status);
      lostStatuses.push((await runOf(service, LOST_RUN_ID)).status);
      // A watch over the lease TTL: the point is that nothing happens, so there is no event to await.
      await sleep(1000);
    }
    const ahead = { runStatuses, lostStatuses, runnerAlive: runnerAlive && processAlive(pid), watchedMs: performance.now() - watchStart };
    await service.kill();

    // Behind by 10 minutes; the lost run is 3 minutes old by the database's clock, past the 2-minute grace.
    const sql = new PgSqlClient({ databaseUrl: postgresUrl });
    try {
      await sql.query(`UPDATE scaffold_runs SET created_at = created_at - interval '3 minutes' WHERE id = $1`, [LOST_RUN_ID]);
    } finally {
      await sql.close();
    }
    service = await startServiceProcess(env, 120_000, skewed('-10m'));
    const behindStart = performance.now();
    const live = service;
    const lost = await eventually(
      'the lost run to fail',
      async () => {
        const run = await runOf(live, LOST_RUN_ID);
        return run.status === 'pending' ? undefined : run;
      },
      lostWaitMs,
    ).catch(() => runOf(live, LOST_RUN_ID));
    const behind = { lost, afterMs: performance.now() - behindStart, runnerAlive: processAlive(pid) };

    await writeFile(join(marks, 'release'), '');
    const finished = await eventually(
      'the run to finish',
      async () => {
        const run = await runOf(live, id);
        return run.status === 'running' || run.status === 'pending' ? undefined : run;
      },
      180_000,
    ).catch(() => runOf(live, id));
    return { remote, runId: id, ahead, behind, finished };
  } finally {
    await writeFile(join(marks, 'release'), '').catch(() => undefined);
    await service.kill();
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
