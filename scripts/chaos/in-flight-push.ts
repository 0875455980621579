/**
 * Trial 1, the in-flight push: over a git daemon on loopback whose
 * pre-receive hook holds the victim's push a few seconds, the runner (the
 * pass-only stand-in, test/support/pass-runner.ts, with the real CliGitRemote:
 * landing queue and fence) is SIGKILLed after its pack was sent, ten times,
 * runs recorded in a real PostgreSQL. Once the service fenced the attempt
 * (executor.inspect reads what landed after closing the fence), the push the
 * server is still receiving must land nothing; the cluster's retry then lands
 * alone. Every third victim's first push is its queue announcement; every
 * other branch push is killed only once the server finished with it.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PgRunStore } from '../../src/db/pg-run-store.js';
import { readLandedCommits } from '../../src/git/landed-commits.js';
import { LocalExecutor, type RunnerCommand } from '../../src/local/local-executor.js';
import { readLease } from '../../src/run-contract/run-lease.js';
import type { RunRecord } from '../../src/run/run-record.js';
import type { ExecutionState } from '../../src/service/run-executor.js';
import { git } from '../../test/support/git.js';
import { createBareRepository, startGitDaemon } from '../../test/support/git-server.js';
import { startPostgres } from '../../test/support/postgres.js';
import { eventually, REPO_ROOT } from '../../test/support/runner.js';
import { doubledRuns, interleavedAttempts, lostPushes, misreportedRuns, nonLinearHistory, stuckRuns, type RecordedRun } from './invariants.js';
import { invariant, type Trial } from './report.js';

const PASS_RUNNER: RunnerCommand = {
  command: process.execPath,
  args: ['--import', import.meta.resolve('tsx'), join(REPO_ROOT, 'test/support/pass-runner.ts')],
};
const QUEUE_KEY = 'c4'.repeat(32);
const HOLD_SECONDS = 3;

export function inFlightPushTrial(repetitions = 10): Trial {
  return {
    name: 'in-flight push',
    async run() {
      const scratch = await mkdtemp(join(tmpdir(), 'gs-chaos-push-'));
      const postgres = await startPostgres();
      const daemon = await startGitDaemon({ baseDir: scratch });
      const store = await PgRunStore.open({ databaseUrl: postgres.url });
      const dataDir = join(scratch, 'data');
      const executor = new LocalExecutor({ runnerCommand: PASS_RUNNER, dataDir, landedCommits: readLandedCommits, queueKey: QUEUE_KEY, killGraceMs: 1_000 });
      const started: RunRecord[] = [];
      const errors: string[] = [];
      const marks = join(scratch, 'marks');
      const remote = join(scratch, 'remote.git');
      try {
        await createBareRepository(remote, {
          seed: async (work) => {
            await mkdir(join(work, 'clusters/development'), { recursive: true });
            await writeFile(join(work, 'clusters/development/kustomization.yaml'), 'resources: []\n');
          },
        });
        await mkdir(marks);
        // Slow only for the push the trial marks as the victim's (branch or queue), and only that one.
        const hook = join(remote, 'hooks', 'pre-receive');
        await writeFile(
          hook,
          `#!/bin/sh\nMARKS='${marks}'\nif grep -q -e ' refs/heads/main$' -e ' refs/scaffold-queue/'; then\nif [ -e "$MARKS/slow" ]; then rm -f "$MARKS/slow"; n=$(date +%s%N); touch "$MARKS/received-$n"; sleep ${HOLD_SECONDS}; touch "$MARKS/done-$n"; fi\nfi\nexit 0\n`,
        );
        await chmod(hook, 0o755);
        const url = daemon.url(basename(remote));
        const count = async (prefix: string) => (await readdir(marks)).filter((name) => name.startsWith(prefix)).length;
        const start = async (cluster: string, attempt: number): Promise<RunRecord> => {
          const id = randomUUID();
          await store.create({
            id,
            cluster: { name: cluster, domain: `${cluster}.example.net`, region: 'r' },
            repositoryUrl: url,
            branch: 'main',
            reference: 'development',
            job: `scaffold-${id}`,
            createdBy: 'chaos',
            sealing: 'certificate',
          });
          const run = (attempt === 1 ? await store.get(id) : await store.update(id, { attempt }, ['pending']))!;
          await executor.start(run, {});
          started.push(run);
          return run;
        };
        const ended = (run: RunRecord) =>
          eventually(
            `run ${run.id} to end`,
            async () => {
              const state = await executor.inspect(run);
              return state.state === 'succeeded' || state.state === 'failed' ? state : undefined;
            },
            90_000,
          );
        /** Records the run's outcome as the monitor would (this frees the cluster for its retry). */
        const record = async (run: RunRecord, state: ExecutionState & { state: 'succeeded' | 'failed' }) => {
          await store.update(run.id, { status: state.state, message: state.result.message, finishedAt: new Date(), commits: state.result.commits ?? [] }, [
            'pending',
            'running',
          ]);
        };

        for (let i = 0; i < repetitions; i++) {
          try {
            const cluster = `chaos-${i}`;
            const announcing = i % 3 === 2;
            if (announcing) await git(remote, 'update-ref', `refs/scaffold-queue/main/left-behind-${i}`, 'main');
            await writeFile(join(marks, 'slow'), '');
            const received = await count('received-');
            const done = await count('done-');
            const victim = await start(cluster, 1);
            await eventually("the victim's pack to reach the hook", async () => ((await count('received-')) > received ? true : undefined), 60_000);
            if (!announcing && i % 2 === 1) await eventually('the hook to finish', async () => ((await count('done-')) > done ? true : undefined), 30_000);
            const lease = await eventually("the victim's lease", () => readLease(executor.leaseFileOf(victim.id)), 10_000);
            process.kill(-lease.pid, 'SIGKILL');
            await record(victim, await ended(victim));
            // The server finishes the push it was receiving before the retry: whatever it lands now would be a lost fence.
            await eventually('the held push to end', async () => ((await count('done-')) > done ? true : undefined), 30_000);
            const retry = await start(cluster, 2);
            await record(retry, await ended(retry));
          } catch (error) {
            errors.push(`repetition ${i}: ${error instanceof Error ? error.message : String(error)}`);
          }
        }

        const runs: RecordedRun[] = [];
        for (const run of started) {
          const now = await store.get(run.id);
          runs.push({
            id: run.id,
            cluster: run.cluster.name,
            attempt: now?.attempt ?? run.attempt,
            status: now?.status ?? 'missing',
            commits: now?.commits ?? [],
          });
        }
        const left = (await git(remote, 'for-each-ref', '--format=%(refname)', 'refs/scaffold-queue/main/'))
          .split('\n')
          .filter((ref) => ref !== '' && !ref.includes('left-behind-'));
        return {
          trial: this.name,
          faults: `pre-receive holds the victim's push ${HOLD_SECONDS} s; runner SIGKILLed after its pack was sent; x${repetitions}`,
          runs: started.length,
          invariants: [
            invariant('every repetition completed', errors, `${repetitions} victims killed, each retried`),
            invariant('no stuck run', stuckRuns(runs), `${runs.length} runs ended`),
            invariant('no doubled run', await doubledRuns(remote, 'main', runs), 'no pass landed twice'),
            invariant(
              'nothing pushed lost',
              await lostPushes(remote, 'main', runs),
              `${runs.filter((r) => r.status === 'succeeded').length} succeeded runs' commits on main`,
            ),
            invariant('linear history', await nonLinearHistory(remote, 'main'), 'no merge commit'),
            invariant('reports = branch', await misreportedRuns(remote, 'main', runs), 'each run reports exactly its commits on main'),
            invariant(
              'one attempt per cluster',
              [...(await interleavedAttempts(remote, 'main', runs)), ...left.map((ref) => `announcement ${ref} left behind`)],
              'no fenced attempt landed after its retry; no announcement left',
            ),
          ],
        };
      } finally {
        // Every runner a lease still names, then every runner the executor started.
        for (const run of started) {
          const lease = await readLease(executor.leaseFileOf(run.id)).catch(() => undefined);
          if (lease !== undefined) {
            try {
              process.kill(-lease.pid, 'SIGKILL');
            } catch {
              // gone
            }
          }
        }
        await executor.close();
        await store.close();
        await daemon.stop();
        await postgres.stop();
        await rm(scratch, { recursive: true, force: true });
      }
    },
  };
}
