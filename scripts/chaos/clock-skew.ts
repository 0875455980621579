/**
 * Trial 3, a skewed service clock: the clock-skew scenario of the
 * integration test (test/support/clock-skew-trial.ts) on a real PostgreSQL,
 * the service under libfaketime 10 minutes ahead, then 10 minutes behind,
 * judged as invariants: no healthy runner killed, no run stuck beyond the
 * grace (nor failed before it), the healthy run's outcome recorded exactly.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOST_RUN_MESSAGE } from '../../src/service/run-monitor.js';
import { LIBFAKETIME, LOST_RUN_ID, observeClockSkew } from '../../test/support/clock-skew-trial.js';
import { startPostgres } from '../../test/support/postgres.js';
import { lostPushes, misreportedRuns, nonLinearHistory } from './invariants.js';
import { invariant, type Trial } from './report.js';

/** How long the lost run may stay pending once the service (behind) is up: the monitor's first passes, not the 10 minutes of skew. */
const LOST_WITHIN_MS = 20_000;

export function clockSkewTrial(): Trial {
  return {
    name: 'clock skew',
    async run() {
      if (!existsSync(LIBFAKETIME)) throw new Error(`libfaketime is not installed (${LIBFAKETIME})`);
      const scratch = await mkdtemp(join(tmpdir(), 'gs-chaos-skew-'));
      const postgres = await startPostgres();
      try {
        const seen = await observeClockSkew({ scratch, postgresUrl: postgres.url, lostWaitMs: LOST_WITHIN_MS });
        const ended = !['pending', 'running'].includes(seen.finished.status);
        const runs = [{ id: seen.runId, cluster: 'eu-skew-1', attempt: 1, status: seen.finished.status, commits: seen.finished.commits ?? [] }];
        const killed = [
          ...(seen.ahead.runnerAlive ? [] : ['+10m: the runner was killed']),
          ...seen.ahead.runStatuses
            .filter((s) => s !== 'running' && s !== 'pending')
            .slice(0, 1)
            .map((s) => `+10m: the healthy run became ${s}`),
          ...(seen.behind.runnerAlive ? [] : ['-10m: the runner was killed']),
          ...(seen.finished.status === 'succeeded' ? [] : [`the healthy run ended ${seen.finished.status}: ${seen.finished.message}`]),
        ];
        const stuck = [
          ...(seen.behind.lost.status === 'failed' && seen.behind.lost.message === LOST_RUN_MESSAGE
            ? []
            : [`-10m: ${LOST_RUN_ID} is ${seen.behind.lost.status} after ${LOST_WITHIN_MS} ms (${seen.behind.lost.message})`]),
          ...(ended ? [] : [`the healthy run is still ${seen.finished.status} after its runner was released`]),
        ];
        return {
          trial: this.name,
          faults: 'service clock +10 min (20 s, longer than the lease TTL), then -10 min (libfaketime); runner survives a service restart',
          runs: 2,
          invariants: [
            invariant(
              'no healthy runner killed',
              killed,
              `runner alive through ${(seen.ahead.watchedMs / 1000).toFixed(0)} s at +10 min and at -10 min; its run succeeded`,
            ),
            invariant(
              'lost run not failed early',
              seen.ahead.lostStatuses
                .filter((s) => s !== 'pending')
                .slice(0, 1)
                .map((s) => `+10m: ${LOST_RUN_ID} became ${s} within the grace`),
              `+10m: ${LOST_RUN_ID} left pending (within the grace by the database's clock)`,
            ),
            invariant(
              'no run stuck beyond the grace',
              stuck,
              `-10m: ${LOST_RUN_ID} failed as lost ${(seen.behind.afterMs / 1000).toFixed(1)} s after start; healthy run ended`,
            ),
            invariant('reports = branch', await misreportedRuns(seen.remote, 'main', runs), 'the run reports exactly its commits on main'),
            invariant('nothing pushed lost', await lostPushes(seen.remote, 'main', runs), 'its commits are on main'),
            invariant('linear history', await nonLinearHistory(seen.remote, 'main'), 'no merge commit'),
          ],
        };
      } finally {
        await postgres.stop();
        await rm(scratch, { recursive: true, force: true });
      }
    },
  };
}
