/**
 * A runner's lease is judged on the service's monotonic clock only: whatever
 * the runner's wall clock says (minutes ahead or behind the service's), a
 * lease counts as held while it keeps changing, and as lapsed once it has not
 * changed for the TTL of the service's own time. The local executor's
 * `inspect` of a run it did not start is the real consumer; the runner is a
 * real process (its own process group) the executor would kill.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { processAlive, type RunLease } from '../run-contract/run-lease.js';
import { contractRunOf } from '../service/run-executor.contract.js';
import { LocalExecutor } from './local-executor.js';

const TTL = 15_000;
let dir: string;
let counter = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lease-watch-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

/** A stand-in runner: a process leading its own group, as the executor starts runners. */
function runnerProcess(): number {
  const child = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid as number;
}

async function untilDead(pid: number): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (processAlive(pid)) {
    if (performance.now() > deadline) throw new Error(`process ${pid} is still alive`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An executor over a fresh data directory whose monotonic clock the test moves, and a run it did not start. */
async function setup() {
  let now = 1_000;
  const dataDir = join(dir, `data-${++counter}`);
  const executor = new LocalExecutor({ runnerCommand: { command: 'false', args: [] }, dataDir, leaseTtlMs: TTL, monotonicNow: () => now });
  const id = `lease-${counter}`;
  const run = contractRunOf({
    id,
    cluster: { name: id, domain: `${id}.example.net`, region: 'eu-west-1' },
    repositoryUrl: 'file:///srv/gitops.git',
    createdBy: 'static:0',
  });
  await mkdir(join(dataDir, 'runs', id), { recursive: true });
  const writeLease = (lease: Omit<RunLease, 'run_id'>) => writeFile(executor.leaseFileOf(id), JSON.stringify({ run_id: id, ...lease }));
  return { executor, run, writeLease, advance: (ms: number) => (now += ms) };
}

const wallClockOf = (skewMs: number) => new Date(Date.now() + skewMs).toISOString();

describe("lease freshness on the service's own clock", () => {
  it("a renewing runner is held whatever its clock says; one that stops renewing lapses after the TTL of the service's time and is killed", async () => {
    const pid = runnerProcess();
    try {
      const { executor, run, writeLease, advance } = await setup();
      // The runner's clock is 10 minutes behind the service's.
      await writeLease({ pid, renewed_at: wallClockOf(-600_000), seq: 0 });
      assert.equal((await executor.inspect(run)).state, 'running', 'a lease seen for the first time is held');
      for (let seq = 1; seq <= 5; seq++) {
        advance(10_000);
        await writeLease({ pid, renewed_at: wallClockOf(-600_000 + seq * 2_000), seq });
        assert.equal((await executor.inspect(run)).state, 'running', `renewal ${seq}`);
      }
      advance(TTL - 1);
      assert.equal((await executor.inspect(run)).state, 'running', 'unchanged for less than the TTL');
      assert.ok(processAlive(pid));
      advance(2);
      const lapsed = await executor.inspect(run);
      assert.equal(lapsed.state, 'failed');
      assert.match(lapsed.state === 'failed' ? lapsed.result.message : '', /went unrenewed for 15001 ms/);
      await untilDead(pid);
    } finally {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  it("a lease is held on first sight for any skew between the runner's clock and the service's (property)", async () => {
    const pid = runnerProcess();
    try {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: -86_400_000, max: 86_400_000 }), fc.nat(1_000_000), async (skewMs, seq) => {
          const { executor, run, writeLease } = await setup();
          await writeLease({ pid, renewed_at: wallClockOf(skewMs), seq });
          assert.equal((await executor.inspect(run)).state, 'running');
          assert.ok(processAlive(pid), 'not killed');
        }),
        { numRuns: 30 },
      );
    } finally {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  it('a lease whose process is gone has lapsed at once, however fresh its clock says it is', async () => {
    const pid = runnerProcess();
    process.kill(-pid, 'SIGKILL');
    await untilDead(pid);
    const { executor, run, writeLease } = await setup();
    await writeLease({ pid, renewed_at: wallClockOf(600_000), seq: 3 });
    const state = await executor.inspect(run);
    assert.equal(state.state, 'failed');
    assert.match(state.state === 'failed' ? state.result.message : '', /its process is gone/);
  });
});
