import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PgRunStore } from '../db/pg-run-store.js';
import { CachedRunStore } from './cached-run-store.js';
import type { LogLine, RunStore } from './run-store.js';
import { runStepsOf } from './run-steps.js';
import type { RunExecutor } from './run-executor.js';
import type { ScaffoldPreviewer } from '../run/scaffold-previewer.js';
import { jobNameOf, type RunRecord } from '../run/run-record.js';
import { RunService } from './run-service.js';

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
