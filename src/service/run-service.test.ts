import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PgRunStore } from '../db/pg-run-store.js';
import { CachedRunStore } from './cached-run-store.js';
import type { LogLine, RunStore } from './run-store.js';
import { runStepsOf } from './run-steps.js';
import type { ExecutionState, RunExecutor } from './run-executor.js';
import { ConflictError, UnavailableError, ValidationError } from '../errors.js';
import type { ScaffoldPreviewer } from '../run/scaffold-previewer.js';
import { jobNameOf, type RunRecord } from '../run/run-record.js';
import { RunService } from './run-service.js';
import { newRun } from './run-store.contract.js';

const unusedExecutor = {} as RunExecutor;
const unusedPreviewer = {} as ScaffoldPreviewer;

describe('RunService.steps', () => {
  let database: PgRunStore | undefined;
  before(async () => {
    database = await PgRunStore.open();
  });
  after(async () => {
    await database?.close();
  });

  /** A service over a cache over the shared PGlite store, recording the reads of logs that reach the database. */
  const setup = () => {
    const reads: { afterSeq: number | undefined; limit: number | undefined }[] = [];
    const readLogs: RunStore['readLogs'] = (id, options) => {
      reads.push({ afterSeq: options?.afterSeq, limit: options?.limit });
      return database!.readLogs(id, options);
    };
    const recording = new Proxy(database!, {
      get: (target, key) => {
        if (key === 'readLogs') return readLogs;
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const store = new CachedRunStore({ store: recording });
    const service = new RunService({ store, executor: unusedExecutor, previewer: unusedPreviewer, reference: 'development' });
    const create = (): Promise<RunRecord> => {
      const id = randomUUID();
      const name = `c-${id.slice(0, 8)}`;
      return store.create({
        id,
        cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' },
        repositoryUrl: 'https://git.example.net/platform/gitops.git',
        branch: 'main',
        reference: 'development',
        job: jobNameOf(id),
        createdBy: 'static:0',
        sealing: 'certificate',
      });
    };
    return { store, service, reads, create };
  };

  const event = (name: string, step: number, extra: Record<string, unknown> = {}) => JSON.stringify({ event: name, step, ...extra });
  const lines = (...texts: string[]) => texts.map((line, i) => ({ time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)), line }));
  const all = async (store: RunStore, id: string): Promise<LogLine[]> => store.readLogs(id, { limit: 10_000 });

  it('folds the step events of the log like runStepsOf over every line, reading only new lines each time', async () => {
    const { store, service, reads, create } = setup();
    const run = await create();
    const pending = await service.steps(run);
    assert.deepEqual(pending, runStepsOf([], run.status));
    assert.equal(reads.length, 0, 'a run created through the cache has no lines: nothing to read');

    await store.appendLogs(
      run.id,
      lines(
        event('step_started', 1),
        '{"event":"log","msg":"cloning"}',
        'plain text',
        event('step_finished', 1, { duration_ms: 1200 }),
        event('step_started', 2),
      ),
    );
    assert.deepEqual(await service.steps(run), runStepsOf(await all(database!, run.id), run.status));
    assert.deepEqual(reads.at(-1), { afterSeq: 0, limit: 500 });

    reads.length = 0;
    await service.steps(run);
    await service.steps(run);
    assert.equal(reads.length, 0, 'polls without new lines read nothing');

    await store.appendLogs(run.id, lines(event('step_failed', 2, { msg: 'push rejected' })));
    const failed = await store.update(run.id, { status: 'failed', finishedAt: new Date() });
    assert.ok(failed);
    const steps = await service.steps(failed);
    assert.deepEqual(steps, runStepsOf(await all(database!, run.id), 'failed'));
    assert.deepEqual(reads, [{ afterSeq: 5, limit: 500 }], 'only the line after the fifth was read');
    assert.deepEqual(
      steps.slice(0, 3).map((s) => s.status),
      ['succeeded', 'failed', 'pending'],
    );
  });

  it('reads a long log page by page and keeps concurrent calls from counting a line twice', async () => {
    const { store, service, create } = setup();
    const run = await create();
    const text = Array.from({ length: 1203 }, (_, i) =>
      i % 100 === 0 ? event(i % 200 === 0 ? 'step_started' : 'step_finished', 1 + ((i / 100) % 7)) : `line ${i}`,
    );
    await store.appendLogs(run.id, lines(...text));
    const expected = runStepsOf(await all(database!, run.id), run.status);
    const [a, b] = await Promise.all([service.steps(run), service.steps(run)]);
    assert.deepEqual(a, expected);
    assert.deepEqual(b, expected);
    assert.deepEqual(await service.steps(run), expected);
  });
});

describe('RunService.openLogs', () => {
  let database: PgRunStore | undefined;
  before(async () => {
    database = await PgRunStore.open();
  });
  after(async () => {
    await database?.close();
  });

  it('a followed log ends with every line stored before the run became final, also those stored while it looked at the status', async () => {
    const { id } = await database!.create(newRun());
    await database!.update(id, { status: 'running', startedAt: new Date() });
    await database!.appendLogs(id, [{ time: new Date(), line: 'cloning' }]);
    // The follower reads 'cloning', then asks for the run's status: meanwhile the monitor stores the last lines, then the outcome.
    let gets = 0;
    const racing = new Proxy(database!, {
      get: (target, key) => {
        if (key === 'get')
          return async (runId: string) => {
            if (++gets === 2) {
              await target.appendLogs(runId, [
                { time: new Date(), line: 'pushed' },
                { time: new Date(), line: '{"event":"run_finished","msg":"done"}' },
              ]);
              await target.update(runId, { status: 'succeeded', message: 'done', finishedAt: new Date() });
            }
            return target.get(runId);
          };
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const service = new RunService({ store: racing, executor: unusedExecutor, previewer: unusedPreviewer, reference: 'development', logPollMs: 10 });
    const read: string[] = [];
    for await (const line of await service.openLogs(id, { follow: true, signal: AbortSignal.timeout(10_000) })) read.push(line.line);
    assert.deepEqual(read, ['cloning', 'pushed', '{"event":"run_finished","msg":"done"}']);
  });
});

/**
 * The run lifecycle's fences (a mutation campaign removed each and no test
 * failed): a retry waits until the earlier attempt cannot push any more, the
 * one-active-run answer sees every active status and every cluster of a batch,
 * and a run that could not start releases its cluster.
 */
describe('RunService: lifecycle fences', () => {
  let database: PgRunStore | undefined;
  before(async () => {
    database = await PgRunStore.open();
  });
  after(async () => {
    await database?.close();
  });

  const REPOSITORY = 'file:///srv/gitops.git';
  const CALLER = { identity: 'static:0' };

  /** An executor whose `inspect` answers what the test sets, recording what it starts and cancels. */
  class StateExecutor implements RunExecutor {
    state: ExecutionState | Error = { state: 'missing' };
    startError: Error | undefined;
    cancelError: Error | undefined;
    readonly started: string[] = [];
    readonly cancelled: string[] = [];
    async start(run: RunRecord): Promise<{ job: string }> {
      if (this.startError !== undefined) throw this.startError;
      this.started.push(run.id);
      return { job: run.job };
    }
    async inspect(): Promise<ExecutionState> {
      if (this.state instanceof Error) throw this.state;
      return this.state;
    }
    async *logs(): AsyncIterable<string> {}
    async cancel(run: RunRecord): Promise<void> {
      this.cancelled.push(run.id);
      if (this.cancelError !== undefined) throw this.cancelError;
    }
  }

  const setup = () => {
    const executor = new StateExecutor();
    const service = new RunService({ store: database!, executor, previewer: unusedPreviewer, reference: 'development' });
    return { executor, service };
  };
  const clusterName = () => `f-${randomUUID().slice(0, 8)}`;
  const cluster = (name: string) => ({ name, domain: `${name}.example.net`, region: 'eu-west-1' });
  /** A stored run of `name` in `status` (an upgrade: its retry takes no caller secrets). */
  const stored = async (name: string, status: 'pending' | 'running' | 'failed' | 'cancelled', batch?: string[]): Promise<RunRecord> => {
    const id = randomUUID();
    await database!.create({
      id,
      action: 'upgrade',
      cluster: cluster(name),
      repositoryUrl: REPOSITORY,
      branch: 'main',
      reference: 'development',
      job: jobNameOf(id),
      createdBy: 'static:0',
      sealing: 'none',
      ...(batch ? { batch } : {}),
    });
    if (status === 'pending') return (await database!.get(id))!;
    if (status === 'running') return (await database!.update(id, { status: 'running', startedAt: new Date() }))!;
    return (await database!.update(id, { status, message: 'ended', finishedAt: new Date() }))!;
  };

  for (const state of ['pending', 'running'] as const) {
    it(`refuses a retry (409) while the earlier attempt's runner is ${state}: it may still push`, async () => {
      const { executor, service } = setup();
      const previous = await stored(clusterName(), 'failed');
      executor.state = { state };
      await assert.rejects(
        service.retry(previous.id, { secrets: {} }, CALLER),
        (error: unknown) => error instanceof ConflictError && /may still push/.test(error.message),
      );
      assert.deepEqual(executor.started, [], 'no new attempt beside it');
      executor.state = { state: 'failed', result: { status: 'failed', message: 'ended' } };
      const retried = await service.retry(previous.id, { secrets: {} }, CALLER);
      assert.equal(retried.attempt, previous.attempt + 1);
      assert.deepEqual(executor.started, [retried.id]);
      await database!.update(retried.id, { status: 'cancelled', finishedAt: new Date() });
    });
  }

  it('refuses a retry (503) when the executor cannot tell whether the earlier attempt still runs', async () => {
    const { executor, service } = setup();
    const previous = await stored(clusterName(), 'cancelled');
    executor.state = new Error('the API server is unreachable');
    await assert.rejects(service.retry(previous.id, { secrets: {} }, CALLER), UnavailableError);
    assert.deepEqual(executor.started, []);
  });

  it('answers 409 naming a running run of the cluster, not only a pending one', async () => {
    const { service } = setup();
    const name = clusterName();
    const running = await stored(name, 'running');
    await assert.rejects(
      service.refuseActiveRuns({ repositoryUrl: REPOSITORY, branch: 'main' }, [name], 'upgrade'),
      (error: unknown) => error instanceof ConflictError && error.message.includes(running.id),
    );
    await database!.update(running.id, { status: 'cancelled', finishedAt: new Date() });
    await service.refuseActiveRuns({ repositoryUrl: REPOSITORY, branch: 'main' }, [name], 'upgrade');
  });

  it('answers 409 for an active run past the first page of active runs', async () => {
    // More than one page (1000) of pending runs in the scope: the refusal reads every page.
    const { service } = setup();
    const repository = `file:///srv/paged-${randomUUID().slice(0, 8)}.git`;
    const names = Array.from({ length: 1001 }, (_, i) => `p-${i}`);
    const create = (name: string) => {
      const id = randomUUID();
      return database!.create({
        id,
        cluster: cluster(name),
        repositoryUrl: repository,
        branch: 'main',
        reference: 'development',
        job: jobNameOf(id),
        createdBy: 'static:0',
        sealing: 'none',
      });
    };
    // The oldest run is the last one listed (newest first): on the second page.
    const oldest = await create(names[0] as string);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await Promise.all(names.slice(1).map(create));
    await assert.rejects(
      service.refuseActiveRuns({ repositoryUrl: repository, branch: 'main' }, [names[0] as string, 'not-there'], 'upgrade'),
      (error: unknown) => error instanceof ConflictError && error.message.includes(oldest.id),
    );
  });

  it('refuses a batch that names a cluster another active run upgrades in its own batch (not as its cluster)', async () => {
    const { executor, service } = setup();
    const [first, second, third] = [clusterName(), clusterName(), clusterName()];
    const busy = await stored(first, 'running', [second]);
    await assert.rejects(
      service.startFleetRun({ action: 'upgrade', cluster: cluster(third), repositoryUrl: REPOSITORY, branch: 'main', batch: [second] }, CALLER),
      (error: unknown) => error instanceof ConflictError && error.message.includes(busy.id) && error.message.includes(second),
    );
    assert.deepEqual(executor.started, []);
    await database!.update(busy.id, { status: 'cancelled', finishedAt: new Date() });
  });

  it('records a run the executor could not start as failed, so its cluster is free for the next one', async () => {
    const { executor, service } = setup();
    const name = clusterName();
    executor.startError = new Error('spawn EAGAIN');
    await assert.rejects(
      service.startFleetRun({ action: 'upgrade', cluster: cluster(name), repositoryUrl: REPOSITORY, branch: 'main' }, CALLER),
      UnavailableError,
    );
    const [failed] = (await database!.list({ cluster: name, repositoryUrl: REPOSITORY })).runs;
    assert.equal(failed?.status, 'failed');
    assert.match(failed?.message ?? '', /could not start the run/);
    executor.startError = undefined;
    const next = await service.startFleetRun({ action: 'upgrade', cluster: cluster(name), repositoryUrl: REPOSITORY, branch: 'main' }, CALLER);
    assert.equal(next.status, 'pending');
    await database!.update(next.id, { status: 'cancelled', finishedAt: new Date() });
  });

  it('cancels an active run: records cancelled first, then tells the executor to stop its runner', async () => {
    const { executor, service } = setup();
    const run = await stored(clusterName(), 'running');
    const cancelled = await service.cancel(run.id, CALLER);
    assert.equal(cancelled.status, 'cancelled');
    assert.deepEqual(executor.cancelled, [run.id]);
    await assert.rejects(service.cancel(run.id, CALLER), ConflictError);
    assert.deepEqual(executor.cancelled, [run.id], 'a final run is not cancelled again');
  });

  it('answers a cancel with the cancelled run when the executor cannot stop the runner: the row says cancelled, and the process is left to its own cleanup', async () => {
    const { executor, service } = setup();
    const run = await stored(clusterName(), 'running');
    executor.cancelError = new Error('jobs.batch "scaffold-x" is forbidden');
    const cancelled = await service.cancel(run.id, CALLER);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.message, 'cancelled by static:0');
    assert.deepEqual(executor.cancelled, [run.id], 'the executor was asked');
    assert.equal((await database!.get(run.id))?.status, 'cancelled');
  });

  it("keeps an executor's own error text out of the answer and the run's message: it may quote what the run was given", async () => {
    const { executor, service } = setup();
    const name = clusterName();
    const secret = 'ghp_SECRETtokenFromTheManifest0123456789';
    executor.startError = new Error(`Secret "scaffold-x" is invalid: data[github-token]: ${secret}`);
    await assert.rejects(
      service.startFleetRun({ action: 'upgrade', cluster: cluster(name), repositoryUrl: REPOSITORY, branch: 'main' }, CALLER),
      (error: unknown) => error instanceof UnavailableError && !error.message.includes(secret),
    );
    const [failed] = (await database!.list({ cluster: name, repositoryUrl: REPOSITORY })).runs;
    assert.equal(failed?.status, 'failed');
    assert.equal(failed?.message, 'could not start the run: the executor failed');
    assert.ok(!JSON.stringify(failed).includes(secret), 'no part of the stored run quotes it');
  });

  it('refuses a batch on anything but a pushed upgrade, before a run is stored or started', async () => {
    const { executor, service } = setup();
    const [name, other] = [clusterName(), clusterName()];
    const refused = [
      { action: 'remove' as const, field: 'batch' },
      { action: 'upgrade' as const, delivery: { mode: 'pull_request' as const }, field: 'delivery.mode' },
    ];
    for (const { field, ...request } of refused) {
      await assert.rejects(
        service.startFleetRun({ ...request, cluster: cluster(name), repositoryUrl: REPOSITORY, branch: 'main', batch: [other] }, CALLER),
        (error: unknown) => error instanceof ValidationError && error.issues.some((issue) => issue.field === field),
        JSON.stringify(request),
      );
    }
    assert.deepEqual(executor.started, []);
    assert.deepEqual((await database!.list({ cluster: name, repositoryUrl: REPOSITORY })).runs, []);
  });

  it("retries a batch run with its whole batch: each of its clusters is upgraded again, not only the run's own", async () => {
    const { executor, service } = setup();
    const [first, second, third] = [clusterName(), clusterName(), clusterName()];
    const previous = await stored(first, 'failed', [second, third]);
    const retried = await service.retry(previous.id, { secrets: {} }, CALLER);
    assert.deepEqual(retried.batch, [second, third]);
    assert.deepEqual((await database!.get(retried.id))?.batch, [second, third]);
    assert.deepEqual(executor.started, [retried.id]);
    await database!.update(retried.id, { status: 'cancelled', finishedAt: new Date() });
  });

  it('refuses a data-deleting removal through pull requests: the lift must land and be applied before the removal, which no reviewed request can promise', async () => {
    const { executor, service } = setup();
    const name = clusterName();
    await assert.rejects(
      service.startFleetRun(
        {
          action: 'remove',
          cluster: cluster(name),
          repositoryUrl: REPOSITORY,
          branch: 'main',
          delivery: { mode: 'pull_request', forge: 'github' },
          deleteData: { kubeconfig: { kind: 'secretRef', namespace: 'ops', name: 'kubeconfig', key: 'value' }, timeoutSeconds: 60 },
        },
        CALLER,
      ),
      (error: unknown) => error instanceof ValidationError && error.issues.some((issue) => issue.field === 'delivery.mode'),
    );
    assert.deepEqual(executor.started, []);
    assert.deepEqual((await database!.list({ cluster: name, repositoryUrl: REPOSITORY })).runs, []);
  });
});
