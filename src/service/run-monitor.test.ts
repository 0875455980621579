import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PgRunStore } from '../db/pg-run-store.js';
import { UnavailableError, ValidationError } from '../errors.js';
import { outputSourceLine } from './output-source.js';
import { LOST_RUN_MESSAGE, RunMonitor, type RunMonitorOptions } from './run-monitor.js';
import type { ExecutionState, RunExecutor } from './run-executor.js';
import { jobNameOf, type RunResult, type RunSecrets, type RunRecord } from '../run/run-record.js';

/** An executor whose state and output the test sets; logs replay from the start like a pod's. */
class FakeExecutor implements RunExecutor {
  readonly states = new Map<string, ExecutionState>();
  readonly lines = new Map<string, string[]>();
  readonly logCalls: string[] = [];
  #waiters: (() => void)[] = [];

  async start(run: RunRecord, _secrets: RunSecrets): Promise<{ job: string }> {
    this.states.set(run.id, { state: 'running' });
    return { job: run.job };
  }
  async inspect(run: RunRecord): Promise<ExecutionState> {
    return this.states.get(run.id) ?? { state: 'missing' };
  }
  set(id: string, state: ExecutionState, lines?: string[]): void {
    this.states.set(id, state);
    if (lines) this.lines.set(id, lines);
    this.#wake();
  }
  emit(id: string, line: string): void {
    this.lines.set(id, [...(this.lines.get(id) ?? []), line]);
    this.#wake();
  }
  finish(id: string, result: RunResult): void {
    this.set(id, { state: result.status, result });
  }
  async *logs(run: RunRecord, options: { follow: boolean; signal?: AbortSignal }): AsyncIterable<string> {
    this.logCalls.push(run.id);
    let index = 0;
    for (;;) {
      const lines = this.lines.get(run.id) ?? [];
      while (index < lines.length) yield lines[index++] as string;
      const state = this.states.get(run.id)?.state ?? 'missing';
      if (!options.follow || options.signal?.aborted || state === 'succeeded' || state === 'failed' || state === 'missing') return;
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        options.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
    }
  }
  async cancel(run: RunRecord): Promise<void> {
    this.finish(run.id, { status: 'failed', message: 'killed' });
  }
  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

let store: PgRunStore;
let counter = 0;

async function newRun(status: 'pending' | 'running' = 'running'): Promise<RunRecord> {
  counter++;
  const id = `run-${counter}`;
  const run = await store.create({
    id,
    cluster: { name: `m-${counter}`, domain: `m-${counter}.example.net`, region: 'eu-west-1' },
    repositoryUrl: 'file:///srv/gitops.git',
    branch: 'main',
    reference: 'development',
    job: jobNameOf(id),
    createdBy: 'static:0',
    sealing: 'certificate',
  });
  if (status === 'pending') return run;
  return (await store.update(id, { status: 'running', startedAt: new Date(), step: 1, stepName: 'clone' })) as RunRecord;
}

function monitorWith(executor: FakeExecutor, options: RunMonitorOptions = {}): RunMonitor {
  return new RunMonitor({ store, executor, options: { logFlushMs: 10, missingGraceMs: 0, recheckDelayMs: 10, reconcileIntervalMs: 60_000, ...options } });
}

async function storedLines(id: string): Promise<string[]> {
  return (await store.readLogs(id)).map((l) => l.line);
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const event = (fields: Record<string, unknown>): string => JSON.stringify(fields);
const SHA1 = 'a'.repeat(40);
const SHA2 = 'b'.repeat(40);

before(async () => {
  store = await PgRunStore.open();
});
after(async () => {
  await store.close();
});

describe('RunMonitor', () => {
  describe('reconcile after a restart', () => {
    it('fails a run the executor has no trace of, with a message saying to retry it', async () => {
      const run = await newRun();
      const executor = new FakeExecutor();
      const stop = new AbortController();
      await monitorWith(executor).start(stop.signal);
      const after = await store.get(run.id);
      assert.equal(after?.status, 'failed');
      assert.equal(after?.message, LOST_RUN_MESSAGE);
      assert.match(after?.message ?? '', /lost while the service was down — retry it/);
      assert.ok(after?.finishedAt instanceof Date);
      stop.abort();
    });

    it('leaves a just-created run alone while the executor may still be starting it', async () => {
      const run = await newRun('pending');
      const executor = new FakeExecutor();
      const stop = new AbortController();
      const monitor = monitorWith(executor, { missingGraceMs: 60_000 });
      await monitor.start(stop.signal);
      assert.equal((await store.get(run.id))?.status, 'pending');
      stop.abort();
      await monitor.idle();
      // Clean up so later passes of other tests do not see it as lost-but-young forever.
      await store.update(run.id, { status: 'cancelled', finishedAt: new Date() });
    });

    for (const skewMinutes of [10, -10]) {
      it(`judges a missing run's age by the database's clock, with the service's ${skewMinutes > 0 ? 'ahead' : 'behind'} by 10 minutes`, async () => {
        const clock = () => new Date(Date.now() + skewMinutes * 60_000);
        const executor = new FakeExecutor();
        // Within the grace: left alone, however far ahead the service's clock is.
        const young = await newRun('pending');
        const patient = new RunMonitor({
          store,
          executor,
          clock,
          options: { logFlushMs: 10, missingGraceMs: 60_000, recheckDelayMs: 10, reconcileIntervalMs: 60_000 },
        });
        const stopPatient = new AbortController();
        await patient.start(stopPatient.signal);
        assert.equal((await store.get(young.id))?.status, 'pending', 'the grace is not skipped');
        stopPatient.abort();
        await patient.idle();
        await store.update(young.id, { status: 'cancelled', finishedAt: new Date() });

        // Past a short grace: failed on the next pass, however far behind the service's clock is.
        const lost = await newRun('pending');
        const monitor = new RunMonitor({
          store,
          executor,
          clock,
          options: { logFlushMs: 10, missingGraceMs: 100, recheckDelayMs: 10, reconcileIntervalMs: 60_000 },
        });
        const stop = new AbortController();
        await monitor.start(stop.signal);
        await waitFor(async () => {
          await monitor.reconcile();
          return (await store.get(lost.id))?.status === 'failed';
        });
        assert.equal((await store.get(lost.id))?.message, LOST_RUN_MESSAGE);
        stop.abort();
        await monitor.idle();
      });
    }

    it('records the result of a run that finished while the service was down, with its remaining output', async () => {
      const run = await newRun();
      const executor = new FakeExecutor();
      executor.finish(run.id, {
        status: 'succeeded',
        message: 'pushed clusters/x in two commits',
        gitops_path: `clusters/${run.cluster.name}`,
        commits: [
          { pass: 'infrastructure', sha: SHA1 },
          { pass: 'all', sha: SHA2 },
        ],
        step: 7,
      });
      executor.lines.set(run.id, [
        event({ event: 'step_started', step: 1, step_name: 'clone' }),
        'git: done',
        event({ event: 'run_finished', step: 7, msg: 'ok' }),
      ]);
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await monitor.idle();
      const after = await store.get(run.id);
      assert.equal(after?.status, 'succeeded');
      assert.equal(after?.message, 'pushed clusters/x in two commits');
      assert.equal(after?.gitopsPath, `clusters/${run.cluster.name}`);
      assert.deepEqual(after?.commits, [
        { pass: 'infrastructure', sha: SHA1 },
        { pass: 'all', sha: SHA2 },
      ]);
      assert.equal(after?.step, 7);
      assert.ok(after?.finishedAt instanceof Date);
      assert.equal((await storedLines(run.id)).length, 3);
      stop.abort();
    });

    it('records a failure with the runner message', async () => {
      const run = await newRun();
      const executor = new FakeExecutor();
      executor.finish(run.id, { status: 'failed', message: 'step 4: the sealed-secrets controller did not become Available within 10m', step: 4 });
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await monitor.idle();
      const after = await store.get(run.id);
      assert.equal(after?.status, 'failed');
      assert.match(after?.message ?? '', /did not become Available/);
      assert.equal(after?.step, 4);
      stop.abort();
    });

    it('re-attaches to a run still running: skips lines already stored, follows progress, then records the result', async () => {
      const run = await newRun();
      const before = [event({ event: 'step_started', step: 1, step_name: 'clone' }), 'cloning…'];
      await store.appendLogs(
        run.id,
        before.map((line) => ({ time: new Date(), line })),
      );
      const executor = new FakeExecutor();
      // The executor replays the run's output from its start, as pod logs do.
      executor.set(run.id, { state: 'running' }, [
        ...before,
        event({ event: 'step_finished', step: 1, step_name: 'clone' }),
        event({ event: 'step_started', step: 2, step_name: 'generate infrastructure' }),
      ]);
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await waitFor(async () => (await store.get(run.id))?.step === 2);
      const during = await store.get(run.id);
      assert.equal(during?.status, 'running');
      assert.equal(during?.stepName, 'generate infrastructure');
      assert.deepEqual(await storedLines(run.id), executor.lines.get(run.id), 'no line is stored twice');

      executor.emit(run.id, event({ event: 'commit', pass: 'infrastructure', sha: SHA1 }));
      await waitFor(async () => (await store.get(run.id))?.commits.length === 1);
      executor.emit(run.id, event({ event: 'step_skipped', step: 4, step_name: 'wait for sealed-secrets', msg: 'certificate supplied' }));
      executor.emit(run.id, event({ event: 'commit', pass: 'all', sha: SHA2 }));
      // A result without commits: the ones reported as events are kept.
      executor.finish(run.id, { status: 'succeeded', message: 'done', gitops_path: `clusters/${run.cluster.name}` });
      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
      const after = await store.get(run.id);
      assert.deepEqual(after?.commits, [
        { pass: 'infrastructure', sha: SHA1 },
        { pass: 'all', sha: SHA2 },
      ]);
      assert.equal(after?.step, 4);
      assert.equal((await storedLines(run.id)).length, 7);
      stop.abort();
      await monitor.idle();
    });

    it("records a batch run's clusters as they land: whose each commit is, each outcome with its words, and the result's statuses at the end", async () => {
      const run = await newRun();
      const [own, next, last] = [run.cluster.name, `${run.cluster.name}-b`, `${run.cluster.name}-c`];
      const executor = new FakeExecutor();
      executor.set(run.id, { state: 'running' }, [
        // The commit event comes from a logger bound to the run's own cluster: the batch_cluster event after it says whose it is.
        event({ event: 'commit', pass: 'upgrade', sha: SHA2, cluster: own }),
        event({ event: 'batch_cluster', batch_cluster: next, status: 'upgraded', sha: SHA2, changes: { added: 0, modified: 3, removed: 0 } }),
        event({ event: 'batch_cluster', batch_cluster: own, status: 'up_to_date' }),
      ]);
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await waitFor(async () => Object.keys((await store.get(run.id))?.batchOutcomes ?? {}).length === 2);
      const during = await store.get(run.id);
      assert.deepEqual(during?.commits, [{ pass: 'upgrade', sha: SHA2, cluster: next }]);
      assert.deepEqual(during?.batchOutcomes?.[next], { status: 'upgraded', changes: { added: 0, modified: 3, removed: 0 } });

      executor.emit(run.id, event({ event: 'batch_cluster', batch_cluster: last, status: 'failed', message: '1 verification finding(s): x' }));
      executor.finish(run.id, {
        status: 'failed',
        message: 'step 3 (push-upgrade) failed',
        commits: [{ pass: 'upgrade', sha: SHA2, cluster: next }],
        batch: { [own]: 'up_to_date', [next]: 'upgraded', [last]: 'failed' },
      });
      await waitFor(async () => (await store.get(run.id))?.status === 'failed');
      const after = await store.get(run.id);
      assert.deepEqual(after?.batchOutcomes, {
        [own]: { status: 'up_to_date' },
        [next]: { status: 'upgraded', changes: { added: 0, modified: 3, removed: 0 } },
        [last]: { status: 'failed', message: '1 verification finding(s): x' },
      });
      stop.abort();
      await monitor.idle();
    });

    it("keeps each review request's latest state from the runner's events, and goes on after a restart from what is stored", async () => {
      const run = await newRun();
      const url = (n: number): string => `https://github.com/acme/gitops/pull/${n}`;
      const review = (n: number, pass: string, state: string, action: string, time: string): string =>
        event({
          level: 30,
          time: Date.parse(time),
          event: 'review_request',
          forge: 'github',
          pass,
          branch: `scaffold/${run.cluster.name}/${pass}`,
          action,
          number: n,
          url: url(n),
          state,
          msg: `request #${n} ${action}`,
        });
      const firstLines = [
        review(7, 'infrastructure', 'open', 'opened', '2026-01-02T03:00:00Z'),
        review(7, 'infrastructure', 'open', 'waiting', '2026-01-02T03:00:01Z'),
        // Not a web page: dropped, never shown as a link.
        event({ event: 'review_request', forge: 'github', pass: 'all', number: 9, url: 'javascript:alert(1)', state: 'open' }),
      ];
      const executor = new FakeExecutor();
      executor.set(run.id, { state: 'running' }, firstLines);
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await waitFor(async () => (await store.get(run.id))?.reviewRequests?.length === 1 && (await storedLines(run.id)).length === 3);
      const waiting = await store.get(run.id);
      assert.deepEqual(waiting?.reviewRequests, [
        {
          pass: 'infrastructure',
          forge: 'github',
          number: 7,
          url: url(7),
          state: 'open',
          branch: `scaffold/${run.cluster.name}/infrastructure`,
          updatedAt: new Date('2026-01-02T03:00:01Z'),
        },
      ]);
      assert.equal(waiting?.message, 'request #7 waiting', 'the run says what it waits for');
      stop.abort();
      await monitor.idle();

      // A new service process: the replay holds what is stored, then the request is merged and pass 2 opens one.
      const after = new FakeExecutor();
      after.set(run.id, { state: 'running' }, [
        ...firstLines,
        review(7, 'infrastructure', 'merged', 'merged', '2026-01-02T04:00:00Z'),
        review(8, 'all', 'open', 'opened', '2026-01-02T04:01:00Z'),
      ]);
      const restart = new AbortController();
      const again = monitorWith(after);
      await again.start(restart.signal);
      await waitFor(async () => (await store.get(run.id))?.reviewRequests?.length === 2);
      after.emit(run.id, review(8, 'all', 'closed', 'closed', '2026-01-02T05:00:00Z'));
      after.finish(run.id, { status: 'failed', message: 'request #8 was closed without being merged', step: 7 });
      await waitFor(async () => (await store.get(run.id))?.status === 'failed');
      const final = await store.get(run.id);
      assert.deepEqual(
        final?.reviewRequests?.map((r) => `${r.pass}#${r.number}:${r.state}@${r.updatedAt.toISOString()}`),
        ['infrastructure#7:merged@2026-01-02T04:00:00.000Z', 'all#8:closed@2026-01-02T05:00:00.000Z'],
      );
      restart.abort();
      await again.idle();
    });

    it('marks a pending run running when the executor reports it running', async () => {
      const run = await newRun('pending');
      const executor = new FakeExecutor();
      executor.set(run.id, { state: 'running' });
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      const after = await store.get(run.id);
      assert.equal(after?.status, 'running');
      assert.ok(after?.startedAt instanceof Date);
      stop.abort();
      await monitor.idle();
      await store.update(run.id, { status: 'cancelled', finishedAt: new Date() });
    });
  });

  describe('output from several sources (a Job retried in new pods)', () => {
    const source = (pod: string): string => outputSourceLine({ source: `pod/${pod}`, msg: `runner output from pod ${pod}` });

    /** Runs the monitor until the run is settled, then returns its stored lines. */
    async function settle(run: RunRecord, executor: FakeExecutor): Promise<string[]> {
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
      stop.abort();
      await monitor.idle();
      return storedLines(run.id);
    }

    it("stores a retried pod's first lines when the earlier pod is gone from the replay", async () => {
      const run = await newRun();
      // Stored before a restart: the first pod's output.
      const firstPod = [
        source('scaffold-r-aaaaa'),
        event({ event: 'step_started', step: 1, step_name: 'clone' }),
        'cloning…',
        event({ event: 'step_failed', step: 3, msg: 'push failed' }),
      ];
      await store.appendLogs(
        run.id,
        firstPod.map((line) => ({ time: new Date(), line })),
      );
      // After the restart the first pod has been deleted; the Job's retry runs in a second pod.
      const secondPod = [
        source('scaffold-r-bbbbb'),
        event({ event: 'step_started', step: 1, step_name: 'clone' }),
        'cloning again…',
        event({ event: 'step_started', step: 2, step_name: 'generate infrastructure' }),
      ];
      const executor = new FakeExecutor();
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      executor.lines.set(run.id, secondPod);
      // Counting all stored lines (4) against this replay would have skipped the whole second pod.
      assert.deepEqual(await settle(run, executor), [...firstPod, ...secondPod]);
    });

    it('skips exactly what is stored of each pod when the replay has them all', async () => {
      const run = await newRun();
      const a = [source('scaffold-r-aaaaa'), 'a1', 'a2', 'a3'];
      const b = [source('scaffold-r-bbbbb'), 'b1', 'b2'];
      // Stored: part of the first pod (the service stopped while it ran), nothing of the second.
      await store.appendLogs(
        run.id,
        a.slice(0, 2).map((line) => ({ time: new Date(), line })),
      );
      const executor = new FakeExecutor();
      executor.set(run.id, { state: 'running' }, [...a, ...b]);
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await waitFor(async () => (await storedLines(run.id)).length === 7);
      assert.deepEqual(await storedLines(run.id), [...a, ...b]);
      // A third pod while the monitor follows.
      const c = [source('scaffold-r-ccccc'), 'c1'];
      for (const line of c) executor.emit(run.id, line);
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
      stop.abort();
      await monitor.idle();
      assert.deepEqual(await storedLines(run.id), [...a, ...b, ...c], 'no line twice, none lost');
    });

    it('stores only the missing tail of a pod, whether or not the earlier pod is in the replay', async () => {
      const run = await newRun();
      const a = [source('scaffold-r-aaaaa'), 'a1'];
      const b = [source('scaffold-r-bbbbb'), 'b1', 'b2'];
      await store.appendLogs(
        run.id,
        [...a, ...b.slice(0, 2)].map((line) => ({ time: new Date(), line })),
      );
      const executor = new FakeExecutor();
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      // This replay lacks the first pod (gone), the next one has it again.
      executor.lines.set(run.id, b);
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await monitor.idle();
      stop.abort();
      assert.deepEqual(await storedLines(run.id), [...a, ...b]);
      // The store is settled; a replay with every pod against the same stored log adds nothing.
      const again = await newRun();
      await store.appendLogs(
        again.id,
        [...a, ...b].map((line) => ({ time: new Date(), line })),
      );
      const replaying = new FakeExecutor();
      replaying.finish(again.id, { status: 'succeeded', message: 'done' });
      replaying.lines.set(again.id, [...a, ...b]);
      assert.deepEqual(await settle(again, replaying), [...a, ...b]);
    });

    it('a log stored without source lines (one unnamed source) keeps its shape: count-skipped, source lines dropped', async () => {
      const run = await newRun();
      // Stored before executors wrote source lines.
      await store.appendLogs(
        run.id,
        ['l1', 'l2'].map((line) => ({ time: new Date(), line })),
      );
      const executor = new FakeExecutor();
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      executor.lines.set(run.id, [source('scaffold-r-aaaaa'), 'l1', 'l2', 'l3', source('scaffold-r-bbbbb'), 'l4']);
      assert.deepEqual(await settle(run, executor), ['l1', 'l2', 'l3', 'l4']);
    });

    it('output without source lines (the local executor) is count-skipped as before', async () => {
      const run = await newRun();
      await store.appendLogs(
        run.id,
        ['x1', 'x2'].map((line) => ({ time: new Date(), line })),
      );
      const executor = new FakeExecutor();
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      executor.lines.set(run.id, ['x1', 'x2', 'x3']);
      assert.deepEqual(await settle(run, executor), ['x1', 'x2', 'x3']);
    });

    it('follows a retry in one stream: the step starts over, commits of both tries are kept once', async () => {
      const run = await newRun('pending');
      const executor = new FakeExecutor();
      executor.set(run.id, { state: 'running' }, [
        source('scaffold-r-aaaaa'),
        event({ event: 'step_started', step: 3, step_name: 'push' }),
        event({ event: 'commit', pass: 'infrastructure', sha: SHA1 }),
      ]);
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await waitFor(async () => (await store.get(run.id))?.commits.length === 1);
      for (const line of [source('scaffold-r-bbbbb'), event({ event: 'step_started', step: 1, step_name: 'clone' })]) executor.emit(run.id, line);
      await waitFor(async () => (await store.get(run.id))?.step === 1);
      // The retry converges: its first commit is the one already pushed.
      for (const line of [event({ event: 'commit', pass: 'infrastructure', sha: SHA1 }), event({ event: 'commit', pass: 'all', sha: SHA2 })])
        executor.emit(run.id, line);
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
      stop.abort();
      await monitor.idle();
      assert.deepEqual((await store.get(run.id))?.commits, [
        { pass: 'infrastructure', sha: SHA1 },
        { pass: 'all', sha: SHA2 },
      ]);
      assert.equal((await storedLines(run.id)).length, 7);
    });
  });

  describe('following runs', () => {
    it('turns the first output of a pending run into status running', async () => {
      const run = await newRun('pending');
      const executor = new FakeExecutor();
      executor.set(run.id, { state: 'pending' });
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      executor.set(run.id, { state: 'running' });
      executor.emit(run.id, event({ event: 'step_started', step: 1, step_name: 'clone', msg: 'cloning file:///srv/gitops.git' }));
      await waitFor(async () => (await store.get(run.id))?.status === 'running');
      const after = await store.get(run.id);
      assert.equal(after?.step, 1);
      assert.equal(after?.message, 'cloning file:///srv/gitops.git');
      assert.ok(after?.startedAt instanceof Date);
      await new Promise((resolve) => setTimeout(resolve, 20));
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
      const finished = await store.get(run.id);
      assert.deepEqual(finished?.startedAt, after?.startedAt, 'recording the result keeps the start time');
      assert.ok((finished?.finishedAt?.getTime() ?? 0) > (after?.startedAt?.getTime() ?? 0));
      stop.abort();
      await monitor.idle();
    });

    it('does not overwrite a cancelled run with the failure its killed process reports', async () => {
      const run = await newRun();
      const executor = new FakeExecutor();
      executor.set(run.id, { state: 'running' });
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await store.update(run.id, { status: 'cancelled', message: 'cancelled by static:0', finishedAt: new Date() });
      await executor.cancel(run);
      stop.abort();
      await monitor.idle();
      assert.equal((await store.get(run.id))?.status, 'cancelled');
      assert.equal((await store.get(run.id))?.message, 'cancelled by static:0');
    });

    it('picks up, on its periodic pass, a run nobody told it about', async () => {
      const executor = new FakeExecutor();
      const stop = new AbortController();
      const monitor = monitorWith(executor, { reconcileIntervalMs: 20 });
      await monitor.start(stop.signal);
      const run = await newRun();
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
      stop.abort();
      await monitor.idle();
    });

    it('re-attaches after a log stream that ends while the run is still active', async () => {
      const run = await newRun();
      const executor = new FakeExecutor();
      // A stream that ends at once, like pod logs before the container starts.
      const realLogs = executor.logs.bind(executor);
      let calls = 0;
      executor.logs = (r, options) => {
        calls++;
        return calls < 3 ? realLogs(r, { ...options, follow: false }) : realLogs(r, options);
      };
      executor.set(run.id, { state: 'running' }, ['line 1']);
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await waitFor(async () => calls >= 3);
      executor.emit(run.id, 'line 2');
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
      assert.deepEqual(await storedLines(run.id), ['line 1', 'line 2']);
      stop.abort();
      await monitor.idle();
    });

    it('follows many runs whose pods are not up yet without a listener-leak warning: each back-off wait leaves when it ends', async () => {
      // A Job whose pod is not scheduled yet: its log stream ends at once while the run is still active.
      class NotUpYet extends FakeExecutor {
        override logs(run: RunRecord): AsyncIterable<string> {
          this.logCalls.push(run.id);
          return (async function* () {})();
        }
      }
      const executor = new NotUpYet();
      const runs = await Promise.all(Array.from({ length: 24 }, () => newRun()));
      for (const run of runs) executor.set(run.id, { state: 'running' });
      const warnings: Error[] = [];
      const onWarning = (warning: Error): void => void warnings.push(warning);
      process.on('warning', onWarning);
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      try {
        await monitor.start(stop.signal);
        for (const run of runs) monitor.track(run);
        // Long enough for every run to be in its back-off wait at once, several times over.
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.ok(executor.logCalls.length >= 2 * runs.length, `each run was looked at again after a wait (${executor.logCalls.length} reads)`);
      } finally {
        stop.abort();
        await monitor.idle();
        process.off('warning', onWarning);
        for (const run of runs) await store.update(run.id, { status: 'cancelled', finishedAt: new Date() });
      }
      assert.deepEqual(
        warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message),
        [],
      );
    });

    it('stops every pump when the signal aborts', async () => {
      const run = await newRun();
      const executor = new FakeExecutor();
      executor.set(run.id, { state: 'running' }, ['a']);
      const stop = new AbortController();
      const monitor = monitorWith(executor);
      await monitor.start(stop.signal);
      await waitFor(async () => (await storedLines(run.id)).length === 1);
      stop.abort();
      await monitor.idle();
      assert.equal((await store.get(run.id))?.status, 'running', 'shutdown leaves the run for the next start to reconcile');
      monitor.track(run);
      await monitor.idle();
      await store.update(run.id, { status: 'cancelled', finishedAt: new Date() });
    });
  });
});

describe('RunMonitor over a store that goes away', () => {
  /** The shared store, failing like an unreachable database while `down`; `lostAcks` appends are stored and then reported failed. */
  function flakyStore() {
    const control = { down: false, lostAcks: 0 };
    const failing = new Set(['appendLogs', 'update', 'get', 'readLogs', 'listActive', 'list']);
    const flaky = new Proxy(store, {
      get: (target, key) => {
        const value: unknown = Reflect.get(target, key);
        if (typeof value !== 'function') return value;
        const bound = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
        if (typeof key !== 'string' || !failing.has(key)) return bound;
        return async (...args: unknown[]) => {
          if (control.down) throw new UnavailableError('database unavailable (57P01)');
          const result = await bound(...args);
          if (key === 'appendLogs' && control.lostAcks > 0) {
            control.lostAcks--;
            throw new UnavailableError('database unavailable (08006)');
          }
          return result;
        };
      },
    });
    return { flaky, control };
  }

  const step = (n: number, name: string) => [
    event({ event: 'step_started', step: n, step_name: name }),
    event({ event: 'step_finished', step: n, step_name: name }),
  ];

  it('keeps what it could not store and stores it in order once the store is back: every line once, the outcome after them', async () => {
    const { flaky, control } = flakyStore();
    const run = await newRun();
    const executor = new FakeExecutor();
    executor.set(run.id, { state: 'running' });
    const monitor = new RunMonitor({
      store: flaky,
      executor,
      options: { logFlushMs: 10, missingGraceMs: 0, recheckDelayMs: 10, reconcileIntervalMs: 60_000, maxRetryDelayMs: 50 },
    });
    const stop = new AbortController();
    await monitor.start(stop.signal);
    try {
      monitor.track(run);
      for (const line of ['before the outage', ...step(1, 'clone')]) executor.emit(run.id, line);
      await waitFor(async () => (await storedLines(run.id)).length === 3);

      control.down = true;
      const during = [
        ...step(2, 'generate'),
        ...Array.from({ length: 450 }, (_, i) => `line ${i}`),
        event({ event: 'commit', pass: 'all', sha: SHA1 }),
        ...step(3, 'push'),
      ];
      for (const line of during) executor.emit(run.id, line);
      executor.finish(run.id, { status: 'succeeded', message: 'pushed', commits: [{ pass: 'all', sha: SHA1 }], step: 3 });
      await waitFor(async () => monitor.pendingWrites() >= during.length);
      control.down = false;

      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
      assert.equal(monitor.pendingWrites(), 0);
      const stored = await store.readLogs(run.id, { limit: 10_000 });
      assert.deepEqual(
        stored.map((l) => l.line),
        executor.lines.get(run.id),
        'every line, in order, once',
      );
      assert.deepEqual(
        stored.map((l) => l.seq),
        stored.map((_, i) => i + 1),
      );
      const done = await store.get(run.id);
      assert.deepEqual([done?.step, done?.commits], [3, [{ pass: 'all', sha: SHA1 }]]);
    } finally {
      stop.abort();
      await monitor.idle();
    }
  });

  it('stores a write repeated after a lost acknowledgement once', async () => {
    const { flaky, control } = flakyStore();
    const run = await newRun();
    const executor = new FakeExecutor();
    executor.set(
      run.id,
      { state: 'running' },
      Array.from({ length: 40 }, (_, i) => `line ${i}`),
    );
    control.lostAcks = 3;
    const monitor = new RunMonitor({
      store: flaky,
      executor,
      options: { logFlushMs: 10, logBatchSize: 7, missingGraceMs: 0, recheckDelayMs: 10, reconcileIntervalMs: 60_000, maxRetryDelayMs: 50 },
    });
    const stop = new AbortController();
    await monitor.start(stop.signal);
    try {
      monitor.track(run);
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
      assert.deepEqual(await storedLines(run.id), executor.lines.get(run.id));
    } finally {
      stop.abort();
      await monitor.idle();
    }
  });

  it('keeps at most the bound in memory: it stops reading the runner until the store takes what it holds', async () => {
    const { flaky, control } = flakyStore();
    const run = await newRun();
    const executor = new FakeExecutor();
    executor.set(run.id, { state: 'running' });
    const monitor = new RunMonitor({
      store: flaky,
      executor,
      options: {
        logFlushMs: 10,
        logBatchSize: 5,
        missingGraceMs: 0,
        recheckDelayMs: 10,
        reconcileIntervalMs: 60_000,
        maxRetryDelayMs: 50,
        maxPendingLines: 20,
      },
    });
    const stop = new AbortController();
    await monitor.start(stop.signal);
    try {
      monitor.track(run);
      await waitFor(async () => (await store.get(run.id)) !== undefined);
      control.down = true;
      for (let i = 0; i < 300; i++) executor.emit(run.id, `line ${i}`);
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      await waitFor(async () => monitor.pendingWrites() >= 20);
      // Give the pump every chance to read on; it must not.
      for (let i = 0; i < 20; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        assert.ok(monitor.pendingWrites() <= 25, `pending ${monitor.pendingWrites()}`);
      }
      control.down = false;
      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
      assert.deepEqual(await storedLines(run.id), executor.lines.get(run.id));
    } finally {
      stop.abort();
      await monitor.idle();
    }
  });
});

describe('RunMonitor: protections a mutation campaign showed no test noticed', () => {
  it("records the commits the executor read from the remote, not those the run's log announced", async () => {
    // A runner killed mid-push announced a commit that never landed: the executor's result (read from the remote) says what did.
    const run = await newRun();
    const executor = new FakeExecutor();
    executor.set(run.id, { state: 'running' }, [event({ event: 'commit', pass: 'infrastructure', sha: SHA1 })]);
    const monitor = monitorWith(executor);
    monitor.track(run);
    await waitFor(async () => (await store.get(run.id))?.commits.length === 1);
    executor.finish(run.id, { status: 'failed', message: 'killed', commits: [{ pass: 'all', sha: SHA2 }] });
    await waitFor(async () => (await store.get(run.id))?.status === 'failed');
    assert.deepEqual((await store.get(run.id))?.commits, [{ pass: 'all', sha: SHA2 }]);
    await monitor.idle();
  });

  it('keeps following a young run the executor has no trace of yet, and records its result once it has', async () => {
    // The service stores the row before it starts the executor: "missing" within the grace is not "lost", and not "done" either.
    const run = await newRun('pending');
    const executor = new FakeExecutor();
    const monitor = monitorWith(executor, { missingGraceMs: 60_000 });
    monitor.track(run);
    try {
      await waitFor(async () => executor.logCalls.length >= 2);
      assert.equal((await store.get(run.id))?.status, 'pending', 'not declared lost within the grace');
      executor.finish(run.id, { status: 'succeeded', message: 'done' });
      await waitFor(async () => (await store.get(run.id))?.status === 'succeeded');
    } finally {
      await store.update(run.id, { status: 'cancelled', finishedAt: new Date() });
      await monitor.idle();
    }
  });

  it('gives up on an outcome the store can never take instead of trying it forever', async () => {
    const run = await newRun();
    const refusing = new Proxy(store, {
      get: (target, key) => {
        const value: unknown = Reflect.get(target, key);
        if (typeof value !== 'function') return value;
        const bound = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
        if (key !== 'update') return bound;
        return async (...args: unknown[]) => {
          if ((args[1] as { status?: string }).status === 'succeeded') throw new ValidationError([{ field: 'message', message: 'too long' }]);
          return bound(...args);
        };
      },
    });
    const executor = new FakeExecutor();
    executor.finish(run.id, { status: 'succeeded', message: 'done' });
    const monitor = new RunMonitor({
      store: refusing,
      executor,
      options: { logFlushMs: 10, recheckDelayMs: 10, maxRetryDelayMs: 20, reconcileIntervalMs: 60_000 },
    });
    const stop = new AbortController();
    try {
      await monitor.start(stop.signal);
      const settled = await Promise.race([monitor.idle().then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000).unref())]);
      assert.equal(settled, true, 'the pump ended: a lasting refusal is not retried');
      assert.equal((await store.get(run.id))?.status, 'running');
    } finally {
      stop.abort();
      await monitor.idle();
      await store.update(run.id, { status: 'cancelled', finishedAt: new Date() });
    }
  });

  it('records a lost run as a failure that a retry may cure: unavailable and transient, as the API reports it', async () => {
    const run = await newRun();
    const executor = new FakeExecutor();
    const monitor = monitorWith(executor);
    monitor.track(run);
    await waitFor(async () => (await store.get(run.id))?.status === 'failed');
    await monitor.idle();
    const lost = await store.get(run.id);
    assert.equal(lost?.message, LOST_RUN_MESSAGE);
    assert.deepEqual(lost?.failure, { code: 'unavailable', transient: true });
  });

  it("records a failed run's failure as its runner reported it, one it never reported as internal, and either as permanent unless said otherwise", async () => {
    const executor = new FakeExecutor();
    const monitor = monitorWith(executor);
    const reported = await newRun();
    const silent = await newRun();
    const unsaid = await newRun();
    executor.finish(reported.id, { status: 'failed', message: 'push timed out', error_code: 'timeout', transient: true });
    executor.finish(silent.id, { status: 'failed', message: 'the runner ended without a result' });
    // A result that names its code but not whether a retry may cure it: permanent, as an unknown failure is.
    executor.finish(unsaid.id, { status: 'failed', message: 'cluster.domain is not a DNS name', error_code: 'invalid_input' });
    for (const run of [reported, silent, unsaid]) monitor.track(run);
    await monitor.idle();
    assert.deepEqual((await store.get(reported.id))?.failure, { code: 'timeout', transient: true });
    assert.deepEqual((await store.get(unsaid.id))?.failure, { code: 'invalid_input', transient: false });
    assert.deepEqual((await store.get(silent.id))?.failure, { code: 'internal', transient: false });
  });
});
