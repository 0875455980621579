/**
 * Clocks of different machines are never compared. The real service runs
 * under libfaketime (its clock 10 minutes ahead, then 10 minutes behind) on a
 * real PostgreSQL server whose clock is the true one, with a real
 * scaffold-runner (true clock) that outlived an earlier service process
 * (test/support/clock-skew-trial.ts, which `npm run chaos` runs too):
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
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOST_RUN_MESSAGE } from '../../src/service/run-monitor.js';
import { LIBFAKETIME, observeClockSkew } from '../support/clock-skew-trial.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

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

describe(
  'the service under a skewed clock (libfaketime)',
  { skip: existsSync(LIBFAKETIME) ? false : `libfaketime is not installed (${LIBFAKETIME})`, timeout: 300_000 },
  () => {
    it('kills no healthy runner and keeps no lost run beyond the grace, ahead or behind by 10 minutes', async () => {
      const seen = await observeClockSkew({ scratch, postgresUrl: postgres.url });

      assert.ok(seen.ahead.runnerAlive, 'ahead: the healthy runner is not killed');
      assert.deepEqual(
        seen.ahead.runStatuses.filter((s) => s !== 'running' && s !== 'pending'),
        [],
        'ahead: the run goes on',
      );
      assert.deepEqual(
        seen.ahead.lostStatuses.filter((s) => s !== 'pending'),
        [],
        'ahead: within the grace (by the database) the lost run is left alone',
      );

      assert.deepEqual([seen.behind.lost.status, seen.behind.lost.message], ['failed', LOST_RUN_MESSAGE], 'behind: the lost run fails at once');
      assert.ok(seen.behind.runnerAlive, 'behind: the healthy runner is still not killed');

      assert.equal(seen.finished.status, 'succeeded', seen.finished.message);
    });
  },
);
