/**
 * Issue 9.6: a run is fenced, never doubled. The real service and the real
 * scaffold-runner, pushing over file:// into bare repositories whose
 * post-receive hook holds a push open, so a test can crash things mid-push:
 *
 * - the service killed (SIGKILL) while its runner pushes: a service started
 *   again over the same data directory does not declare the run lost while the
 *   runner still works, refuses a retry (409) while that runner may still push,
 *   and records the run's outcome when the runner ends;
 * - the runner killed (SIGKILL) mid-push: no git process is left in its process
 *   group, no working copy is left on disk, and the run is recorded with the
 *   commits that actually landed on the remote (read from it, not assumed);
 * - the in-flight push trial: over a git daemon whose pre-receive hook is slow,
 *   a runner killed after its pack was sent (ten times): the push the server
 *   is still receiving lands nothing after the service fenced the attempt, so
 *   every run reports exactly its commits on the branch, and the retry never
 *   carries the dead attempt's announcement.
 *
 * Every hook that holds a push waits for a release file with a deadline, every
 * answer a broken fence could withhold is awaited with a deadline, and every
 * test's cleanup releases the hooks, kills every runner a lease names and closes
 * its executor (killing every runner it started, leased yet or not), so a broken
 * fence fails a test within a minute instead of hanging.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PgRunStore } from '../../src/db/pg-run-store.js';
import { readLandedCommits } from '../../src/git/landed-commits.js';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { createHttpApp } from '../../src/http/create-http-app.js';
import { platformDir } from '../../src/package-paths.js';
import { readLease } from '../../src/run-contract/run-lease.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { LocalExecutor, type RunnerCommand } from '../../src/local/local-executor.js';
import { LOST_RUN_MESSAGE, RunMonitor } from '../../src/service/run-monitor.js';
import type { RunRecord } from '../../src/run/run-record.js';
import { RunService } from '../../src/service/run-service.js';
import { StaticTokenAuthenticator } from '../../src/service/static-token-authenticator.js';
import { git } from '../support/git.js';
import { createBareRepository, startGitDaemon } from '../support/git-server.js';
import { commitsOf, eventually, REPO_ROOT } from '../support/runner.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const API_TOKEN = 'fence-test-token-0123456789';
const CLUSTER = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };
const RUNNER: RunnerCommand = { command: process.execPath, args: ['--import', import.meta.resolve('tsx'), join(REPO_ROOT, 'src/runner-cli.ts')] };
/** The stand-in runner that only pushes one pass (test/support/pass-runner.ts), for the in-flight push trial. */
const PASS_RUNNER: RunnerCommand = {
  command: process.execPath,
  args: ['--import', import.meta.resolve('tsx'), join(REPO_ROOT, 'test/support/pass-runner.ts')],
};
const TRIAL_KEY = 'a1'.repeat(32);
/** A first start creates the PGlite data directory (initdb in WebAssembly): minutes on a loaded 2-core machine. */
const SERVICE_START_MS = 240_000;

let scratch: string;
let seedRepo: string;
const certificate = createTestCertificate();
let remotes = 0;

/**
 * A bare copy of the reference platform whose `kind` hook runs `hook` (sh) for
 * pushes that update the branch `main` (the runner's passes; the fence the
 * service closes and the announcements it withdraws pass unhindered), with
 * `$MARKS` a directory for the test's marker files.
 */
async function remoteWithHook(
  hook: string,
  kind: 'post-receive' | 'pre-receive' = 'post-receive',
  seed = seedRepo,
  refs = "-e ' refs/heads/main$'",
): Promise<{ dir: string; marks: string }> {
  const n = ++remotes;
  const dir = join(scratch, `remote-${n}.git`);
  const marks = join(scratch, `marks-${n}`);
  await mkdir(marks);
  await git(scratch, 'clone', '--quiet', '--bare', seed, dir);
  const script = join(dir, 'hooks', kind);
  await writeFile(script, `#!/bin/sh\nMARKS='${marks}'\nif grep -q ${refs}; then\n${hook}\nfi\nexit 0\n`);
  await chmod(script, 0o755);
  return { dir, marks };
}

/** sh: hold the push until the test writes `$MARKS/release`, at most 60 s (a test that broke must not leave it hanging). */
const HOLD_UNTIL_RELEASED = 'i=0; while [ ! -e "$MARKS/release" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done';

/** Cleanup: releases every held hook and kills the process group of every runner whose lease is under `dataDir`. */
async function releaseAndKill(marks: string, dataDir: string): Promise<void> {
  await writeFile(join(marks, 'release'), '').catch(() => undefined);
  const runs = await readdir(join(dataDir, 'runs')).catch(() => [] as string[]);
  for (const id of runs) {
    const lease = await readLease(join(dataDir, 'runs', id, 'lease.json')).catch(() => undefined);
    if (lease === undefined) continue;
    try {
      process.kill(-lease.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/**
 * `promise`, or a failure naming `what` after `ms`: an answer that never comes
 * (a runner wrongly let through, waiting on the remote) fails the test instead
 * of holding it until the suite's timeout.
 */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** The SHAs of the commits on the remote's main that carry the run's Scaffold-Id, oldest first, as {pass, sha}. */
async function landedOnRemote(bare: string, runId: string): Promise<{ pass: string; sha: string }[]> {
  return (await commitsOf(bare))
    .filter((c) => c.trailers['Scaffold-Id'] === runId)
    .map((c) => ({ pass: c.trailers['Scaffold-Pass'] ?? '', sha: c.sha }))
    .reverse();
}

/** The live processes (zombies are dead, only not yet reaped) in process group `pgid`, as `ps` lines. */
function processGroupMembers(pgid: number): string[] {
  const table = execFileSync('ps', ['-eo', 'pgid=,pid=,stat=,args='], { encoding: 'utf8' });
  return table
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => {
      const [group, , stat = ''] = line.split(/\s+/);
      return group === String(pgid) && !stat.startsWith('Z');
    });
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-run-fence-'));
  seedRepo = join(scratch, 'seed.git');
  await ensureSeededBareRepository(seedRepo, platformDir());
});

after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('a run is fenced, never doubled', { timeout: 900_000 }, () => {
  it('survives a killed service: not declared lost while its runner works, retry refused (409) while it may push, outcome recorded at the end', async () => {
    // The first push blocks in the hook until the test releases it.
    const remote = await remoteWithHook(`touch "$MARKS/pushed"\n${HOLD_UNTIL_RELEASED}`);
    const dataDir = join(scratch, 'service-data');
    const first: ServiceProcess = await startServiceProcess(
      {
        API_TOKENS: API_TOKEN,
        AUTH_MODE: 'static',
        EXECUTOR: 'local',
        DATA_DIR: dataDir,
        DEFAULT_GITOPS_REPO_URL: `file://${remote.dir}`,
      },
      SERVICE_START_MS,
    );
    let lease: Awaited<ReturnType<typeof readLease>>;
    let id: string;
    try {
      const created = await fetch(`${first.address}/api/v1/scaffolds`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cluster: CLUSTER, sealing: { certificate: certificate.certificatePem } }),
      });
      assert.equal(created.status, 202, await created.clone().text());
      id = ((await created.json()) as { id: string }).id;
      await eventually('the first push to reach the remote', () => (existsSync(join(remote.marks, 'pushed')) ? true : undefined), 120_000);
      lease = await readLease(join(dataDir, 'runs', id, 'lease.json'));
      assert.ok(lease, 'the runner holds a lease while it works');
    } finally {
      await first.kill();
    }
    assert.doesNotThrow(() => process.kill(lease.pid, 0), 'the runner outlives the service');

    // The service again, over the same data directory, with a monitor that would call a run lost at once.
    const store = await PgRunStore.open({ dataDir: join(dataDir, 'pgdata') });
    const executor = new LocalExecutor({ runnerCommand: RUNNER, dataDir, landedCommits: readLandedCommits, killGraceMs: 2_000 });
    const monitor = new RunMonitor({ store, executor, options: { missingGraceMs: 0, reconcileIntervalMs: 100, recheckDelayMs: 50 } });
    const service = new RunService({
      store,
      executor,
      previewer: { preview: () => Promise.reject(new Error('not used')) },
      reference: 'development',
      tracker: monitor,
    });
    const app = await createHttpApp({ service, authenticator: new StaticTokenAuthenticator([API_TOKEN]), store });
    const stop = new AbortController();
    try {
      await monitor.start(stop.signal);
      // Passes of their own, each one after the last: any of them would call a run without a trace lost at once.
      for (let pass = 0; pass < 5; pass++) await monitor.reconcile();
      const during = await service.get(id);
      assert.ok(
        during.status === 'running' || during.status === 'pending',
        `a run whose runner still works is not declared lost: ${during.status} ${during.message}`,
      );
      assert.notEqual(during.message, LOST_RUN_MESSAGE);

      const retry = () =>
        app.inject({
          method: 'POST',
          url: `/api/v1/scaffolds/${id}/retry`,
          headers: { authorization: `Bearer ${API_TOKEN}` },
          payload: { sealing: { certificate: certificate.certificatePem } },
        });
      const refused = await within(30_000, 'a retry of a running run', retry());
      assert.equal(refused.statusCode, 409, refused.body);

      // Even a run the store already calls failed is not retried beside a runner that may still push.
      await store.update(id, { status: 'failed', message: 'declared failed by an operator', finishedAt: new Date() }, ['pending', 'running']);
      // Were it let through, its runner would wait on the remote: the answer, not the runner, is awaited, and only so long.
      const fenced = await within(30_000, 'a retry beside a runner that may still push', retry());
      assert.equal(fenced.statusCode, 409, fenced.body);
      assert.match(fenced.body, /may still push/);
      assert.equal((await service.list({})).runs.length, 1, 'no second run was created');

      // Let the runner finish: its outcome is what the executor reports now.
      await writeFile(join(remote.marks, 'release'), '');
      const state = await eventually(
        'the runner to finish',
        async () => {
          const s = await executor.inspect(during);
          return s.state === 'succeeded' || s.state === 'failed' ? s : undefined;
        },
        120_000,
      );
      assert.equal(state.state, 'succeeded', JSON.stringify(state));
      assert.deepEqual(state.state === 'succeeded' ? state.result.commits?.map((c) => ({ ...c })) : [], await landedOnRemote(remote.dir, id));
      assert.equal(existsSync(join(dataDir, 'runs', id, 'lease.json')), false, 'the runner released its lease');
    } finally {
      // Every runner first: the first service's (found by its lease) and any this executor started,
      // a second one wrongly let through included, leased yet or not. Nothing below then waits on one.
      await releaseAndKill(remote.marks, dataDir);
      await executor.close();
      stop.abort();
      await monitor.idle();
      await app.close();
      await store.close();
    }
  });

  it('a runner killed mid-push leaves no git process and no working copy, and its run records the commits on the remote', async () => {
    // The second push (the sealed pass) lands, then hangs in the hook: the runner never hears back.
    const remote = await remoteWithHook(`if [ -e "$MARKS/first" ]; then touch "$MARKS/second"; ${HOLD_UNTIL_RELEASED}; else touch "$MARKS/first"; fi`);
    const dataDir = join(scratch, 'local-data');
    const store = await PgRunStore.open();
    const executor = new LocalExecutor({ runnerCommand: RUNNER, dataDir, landedCommits: readLandedCommits });
    const monitor = new RunMonitor({ store, executor, options: { reconcileIntervalMs: 200, recheckDelayMs: 50 } });
    const stop = new AbortController();
    let pid: number | undefined;
    try {
      await monitor.start(stop.signal);
      const id = randomUUID();
      const run: RunRecord = await store.create({
        id,
        cluster: CLUSTER,
        repositoryUrl: `file://${remote.dir}`,
        branch: 'main',
        reference: 'development',
        job: `scaffold-${id}`,
        createdBy: 'test',
        sealing: 'certificate',
      });
      await executor.start(run, { certificate: certificate.certificatePem });
      monitor.track(run);
      await eventually('the second push to land', () => (existsSync(join(remote.marks, 'second')) ? true : undefined), 120_000);
      pid = (await readLease(executor.leaseFileOf(id)))?.pid;
      assert.ok(pid !== undefined);
      assert.ok(
        processGroupMembers(pid).some((line) => / (git|git-receive-pack|sleep)\b/.test(line)),
        "a git push is in flight in the runner's group",
      );

      process.kill(pid, 'SIGKILL');
      const recorded = await eventually(
        'the run to be recorded',
        async () => {
          const now = await store.get(id);
          return now !== undefined && (now.status === 'failed' || now.status === 'succeeded') ? now : undefined;
        },
        60_000,
      );

      assert.deepEqual(processGroupMembers(pid), [], "nothing of the runner's process group is left");
      assert.equal(existsSync(executor.workDirOf(id)), false, 'the working copy is gone');
      assert.deepEqual(
        (await readdir(tmpdir())).filter((entry) => entry.includes(id)),
        [],
        'no temp directory of the run is left',
      );
      assert.equal(recorded.status, 'failed');
      assert.match(recorded.message, /SIGKILL/);
      const landed = await landedOnRemote(remote.dir, id);
      assert.deepEqual(
        landed.map((c) => c.pass),
        ['infrastructure', 'all'],
        'both passes are on the remote',
      );
      assert.deepEqual(
        recorded.commits.map((c) => ({ ...c })),
        landed,
        'the run records what landed, read from the remote',
      );
    } finally {
      stop.abort();
      await releaseAndKill(remote.marks, dataDir);
      if (pid !== undefined) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      await monitor.idle();
      await executor.close();
      await store.close();
    }
  });

  it(
    'the in-flight push trial: a runner killed after its pack was sent reports exactly what is on the branch, ten times, and no attempt lands after its retry began',
    { timeout: 480_000 },
    async () => {
      // A small repository of its own; pre-receive takes 1.5 s for the one push the test marks as the victim.
      const seed = join(scratch, 'trial-seed.git');
      await createBareRepository(seed, {
        seed: async (work) => {
          await mkdir(join(work, 'clusters/development'), { recursive: true });
          await writeFile(join(work, 'clusters/development/kustomization.yaml'), 'resources: []\n');
        },
      });
      const remote = await remoteWithHook(
        'if [ -e "$MARKS/slow" ]; then rm -f "$MARKS/slow"; n=$(date +%s%N); touch "$MARKS/received-$n"; sleep 1.5; touch "$MARKS/done-$n"; fi',
        'pre-receive',
        seed,
        "-e ' refs/heads/main$' -e ' refs/scaffold-queue/'",
      );
      const daemon = await startGitDaemon({ baseDir: scratch });
      const url = daemon.url(basename(remote.dir));
      const dataDir = join(scratch, 'trial-data');
      const store = await PgRunStore.open();
      const executor = new LocalExecutor({ runnerCommand: PASS_RUNNER, dataDir, landedCommits: readLandedCommits, queueKey: TRIAL_KEY, killGraceMs: 1_000 });
      const marks = async (prefix: string) => (await readdir(remote.marks)).filter((name) => name.startsWith(prefix)).length;
      /** Starts a run of `cluster` (attempt `attempt`) and returns it. */
      const start = async (cluster: string, attempt: number): Promise<RunRecord> => {
        const id = randomUUID();
        await store.create({
          id,
          cluster: { name: cluster, domain: `${cluster}.example.net`, region: 'r' },
          repositoryUrl: url,
          branch: 'main',
          reference: 'development',
          job: `scaffold-${id}`,
          createdBy: 'test',
          sealing: 'certificate',
        });
        const run = attempt === 1 ? await store.get(id) : await store.update(id, { attempt }, ['pending']);
        await executor.start(run!, {});
        return run!;
      };
      const finished = (run: RunRecord) =>
        eventually(
          `run ${run.id} to end`,
          async () => {
            const state = await executor.inspect(run);
            return state.state === 'succeeded' || state.state === 'failed' ? state : undefined;
          },
          60_000,
        );
      /** The commits on the remote's main carrying `id`, oldest first. */
      const onBranch = async (id: string) => (await landedOnRemote(remote.dir, id)).map(({ pass, sha }) => ({ pass, sha }));
      try {
        for (let i = 0; i < 10; i++) {
          const cluster = `trial-${i}`;
          // Every third victim's first push is its announcement: something is queued already.
          const announcing = i % 3 === 2;
          if (announcing) await git(remote.dir, 'update-ref', `refs/scaffold-queue/main/left-behind-${i}`, 'main');
          await writeFile(join(remote.marks, 'slow'), '');
          const received = await marks('received-');
          const done = await marks('done-');
          const victim = await start(cluster, 1);
          await eventually("the victim's pack to reach the hook", async () => ((await marks('received-')) > received ? true : undefined), 60_000);
          // Every other branch push is killed only once the server has finished with it (it landed; the runner never heard back).
          if (!announcing && i % 2 === 1) await eventually('the hook to finish', async () => ((await marks('done-')) > done ? true : undefined), 30_000);
          const lease = await eventually("the victim's lease", () => readLease(executor.leaseFileOf(victim.id)), 10_000);
          process.kill(-lease.pid, 'SIGKILL');
          const state = await finished(victim);
          // Killed after the server was done, it may have heard back and finished: then its own result stands.
          assert.ok(state.state === 'failed' || i % 2 === 1, `trial ${i}: ${JSON.stringify(state)}`);
          const reported = state.state === 'failed' || state.state === 'succeeded' ? (state.result.commits ?? []).map((c) => ({ ...c })) : [];
          // The server finishes the push it was receiving; only then is the branch final for the victim.
          await eventually('the held push to end', async () => ((await marks('done-')) > done ? true : undefined), 30_000);
          assert.deepEqual(await onBranch(victim.id), reported, `trial ${i}: the run reports exactly its commits on the branch`);

          // Recorded as the monitor would, which frees the cluster for its retry.
          await store.update(victim.id, { status: 'failed', message: 'killed', finishedAt: new Date(), commits: reported }, ['pending', 'running']);
          const retry = await start(cluster, 2);
          const retried = await finished(retry);
          assert.equal(retried.state, 'succeeded', `trial ${i}: ${JSON.stringify(retried)}`);
          assert.deepEqual(await onBranch(victim.id), reported, `trial ${i}: nothing of the fenced attempt landed later, not even carried by its retry`);
          const retryCommits = await onBranch(retry.id);
          assert.deepEqual(retried.state === 'succeeded' ? retried.result.commits : [], retryCommits);
          // One attempt at a time: the cluster's history is the fenced attempt's commits, then the retry's.
          const touching = (
            await git(remote.dir, 'log', '--reverse', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main', '--', `clusters/${cluster}`)
          )
            .split('\n')
            .filter(Boolean);
          assert.deepEqual(touching, [...reported.map(() => victim.id), ...retryCommits.map(() => retry.id)], `trial ${i}`);
          assert.deepEqual(
            (await git(remote.dir, 'for-each-ref', '--format=%(refname)', `refs/scaffold-queue/main/${victim.id}--`)).split('\n').filter(Boolean),
            [],
            `trial ${i}: no announcement of the fenced attempt is left`,
          );
        }
      } finally {
        await releaseAndKill(remote.marks, dataDir);
        await executor.close();
        await store.close();
        await daemon.stop();
      }
    },
  );
});
