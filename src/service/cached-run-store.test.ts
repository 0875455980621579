import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PgRunStore } from '../db/pg-run-store.js';
import { UnavailableError } from '../errors.js';
import { CachedRunStore } from './cached-run-store.js';
import { runRunStoreContract } from './run-store.contract.js';
import type { LogLine, NewRun, RunFilter, RunPage, RunStore, RunUpdate } from './run-store.js';
import { jobNameOf, type RunStatus, type RunRecord } from '../run/run-record.js';

runRunStoreContract('CachedRunStore over PGlite in memory', async () => {
  const store = new CachedRunStore({ store: await PgRunStore.open() });
  return { store, cleanup: () => store.close() };
});

// A cache far smaller than the suite's working set: every test also runs
// through evictions and re-reads.
runRunStoreContract('CachedRunStore (2 entries) over PGlite in memory', async () => {
  const store = new CachedRunStore({ store: await PgRunStore.open(), maxEntries: 2 });
  return { store, cleanup: () => store.close() };
});

type Method = 'create' | 'get' | 'list' | 'listActive' | 'update' | 'appendLogs' | 'readLogs' | 'ping';

/** Delegates to a real store, counting calls; hooks let a test hold or break one call. */
class CountingStore implements RunStore {
  readonly calls = new Map<Method, number>();
  /** Runs after the inner call and before its result is handed back. */
  afterGet: ((run: RunRecord | undefined) => Promise<void>) | undefined;
  afterUpdate: ((run: RunRecord | undefined) => Promise<void>) | undefined;
  /** Applies the update, then throws as if the connection broke before the answer. */
  failUpdateAfterCommit = false;
  failAppendAfterCommit = false;

  constructor(readonly inner: RunStore) {}

  count(method: Method): number {
    return this.calls.get(method) ?? 0;
  }

  reset(): void {
    this.calls.clear();
  }

  #called(method: Method): void {
    this.calls.set(method, this.count(method) + 1);
  }

  async create(run: NewRun): Promise<RunRecord> {
    this.#called('create');
    return this.inner.create(run);
  }

  async get(id: string): Promise<RunRecord | undefined> {
    this.#called('get');
    const run = await this.inner.get(id);
    await this.afterGet?.(run);
    return run;
  }

  async list(filter: RunFilter): Promise<RunPage> {
    this.#called('list');
    return this.inner.list(filter);
  }

  async listActive(): Promise<RunRecord[]> {
    this.#called('listActive');
    return this.inner.listActive();
  }

  async update(id: string, update: RunUpdate, from?: readonly RunStatus[]): Promise<RunRecord | undefined> {
    this.#called('update');
    const run = await this.inner.update(id, update, from);
    if (this.failUpdateAfterCommit) throw new UnavailableError('database unavailable (08006)');
    await this.afterUpdate?.(run);
    return run;
  }

  async appendLogs(id: string, lines: readonly { readonly time: Date; readonly line: string }[], options?: { readonly afterSeq?: number }): Promise<void> {
    this.#called('appendLogs');
    await this.inner.appendLogs(id, lines, options);
    if (this.failAppendAfterCommit) throw new UnavailableError('database unavailable (08006)');
  }

  async readLogs(id: string, options?: { readonly afterSeq?: number; readonly limit?: number }): Promise<LogLine[]> {
    this.#called('readLogs');
    return this.inner.readLogs(id, options);
  }

  async ping(): Promise<void> {
    this.#called('ping');
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A promise and its resolver, to hold a call in flight. */
function gate(): { readonly opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

function newRun(cluster = `c-${randomBytes(6).toString('hex')}`): NewRun {
  const id = randomUUID();
  return {
    id,
    cluster: { name: cluster, domain: `${cluster}.example.net`, region: 'eu-west-1' },
    repositoryUrl: 'https://git.example.net/platform/gitops.git',
    branch: 'main',
    reference: 'development',
    job: jobNameOf(id),
    createdBy: 'static:0',
    sealing: 'certificate',
  };
}

describe('CachedRunStore', () => {
  let pg: PgRunStore | undefined;
  let counting: CountingStore;
  before(async () => {
    pg = await PgRunStore.open();
  });
  after(async () => {
    await pg?.close();
  });
  /** A fresh cache over the shared PGlite store (closing it would close PGlite: tests don't). */
  const fresh = (maxEntries?: number): CachedRunStore => {
    counting = new CountingStore(pg!);
    return new CachedRunStore({ store: counting, ...(maxEntries === undefined ? {} : { maxEntries }) });
  };

  it('serves get from memory after create and after each update, with what the store returned', async () => {
    const cache = fresh();
    const created = await cache.create(newRun());
    assert.deepEqual(await cache.get(created.id), created);
    assert.equal(counting.count('get'), 0, 'no read after create');

    const running = await cache.update(created.id, { status: 'running', step: 1, stepName: 'clone' }, ['pending']);
    assert.ok(running);
    assert.deepEqual(await cache.get(created.id), running);
    const done = await cache.update(created.id, { status: 'succeeded', step: 7, commits: [{ pass: 'all', sha: 'a'.repeat(40) }], finishedAt: new Date() });
    for (let i = 0; i < 5; i++) assert.deepEqual(await cache.get(created.id), done);
    assert.equal(counting.count('get'), 0, 'every get answered from memory');
    assert.deepEqual(await pg!.get(created.id), done, 'and it is what the database holds');
  });

  it('reads a run it does not hold once, then serves it from memory', async () => {
    const run = await pg!.create(newRun());
    const cache = fresh();
    assert.deepEqual(await cache.get(run.id), run);
    assert.deepEqual(await cache.get(run.id), run);
    assert.equal(counting.count('get'), 1);
    // Unknown ids are not cached: a later create must be visible.
    assert.equal(await cache.get(randomUUID()), undefined);
    assert.equal(counting.count('get'), 2);
  });

  it('keeps the entry when a conditional update fails: the row did not change', async () => {
    const cache = fresh();
    const created = await cache.create(newRun());
    const running = await cache.update(created.id, { status: 'running' }, ['pending']);
    assert.ok(running);

    assert.equal(await cache.update(created.id, { status: 'running', message: 'claimed twice' }, ['pending']), undefined, 'guard failed');
    assert.equal(await cache.update(created.id, { status: 'pending' }), undefined, 'transition refused');
    assert.equal(await cache.update(randomUUID(), { status: 'running' }), undefined, 'unknown run');
    counting.reset();
    assert.deepEqual(await cache.get(created.id), running);
    assert.equal(counting.count('get'), 0, 'still served from memory');
    assert.deepEqual(await pg!.get(created.id), running);

    const done = await cache.update(created.id, { status: 'failed', message: 'boom' });
    assert.equal(await cache.update(created.id, { message: 'late progress' }), undefined, 'final runs do not change');
    assert.deepEqual(await cache.get(created.id), done);
    assert.equal(counting.count('get'), 0);
  });

  it('drops the entry when an update throws after it may have been applied', async () => {
    const cache = fresh();
    const created = await cache.create(newRun());
    counting.failUpdateAfterCommit = true;
    await assert.rejects(cache.update(created.id, { status: 'running', message: 'applied, then the connection broke' }), UnavailableError);
    counting.failUpdateAfterCommit = false;
    const seen = await cache.get(created.id);
    assert.equal(counting.count('get'), 1, 'read from the store');
    assert.equal(seen?.status, 'running');
    assert.equal(seen?.message, 'applied, then the connection broke');
  });

  for (const outcome of ['answered', 'threw after applying it'] as const) {
    it(`does not cache a read that raced an update that ${outcome}`, async () => {
      const run = await pg!.create(newRun());
      const cache = fresh();
      const held = gate();
      const reading = gate();
      counting.afterGet = async () => {
        reading.open();
        await held.opened;
      };
      const staleRead = cache.get(run.id);
      await reading.opened; // the read has the pending row in hand
      counting.afterGet = undefined;
      if (outcome === 'answered') {
        await cache.update(run.id, { status: 'running' });
      } else {
        counting.failUpdateAfterCommit = true;
        await assert.rejects(cache.update(run.id, { status: 'running' }), UnavailableError);
        counting.failUpdateAfterCommit = false;
      }
      held.open();
      assert.equal((await staleRead)?.status, 'pending', 'the racing read answers what it read');
      assert.equal((await cache.get(run.id))?.status, 'running', 'but the cache does not keep it');
    });
  }

  it('does not trust overlapping updates of one run, which may resolve out of order', async () => {
    const cache = fresh();
    const created = await cache.create(newRun());
    const held = gate();
    const reached = gate();
    counting.afterUpdate = async (run) => {
      if (run?.message !== 'first') return;
      reached.open();
      await held.opened;
    };
    // The first commits first but answers last.
    const first = cache.update(created.id, { message: 'first' });
    await reached.opened;
    const second = await cache.update(created.id, { message: 'second' });
    held.open();
    await first;
    counting.afterUpdate = undefined;
    counting.reset();
    assert.deepEqual(await cache.get(created.id), second);
    assert.equal(counting.count('get'), 1, 'read from the store, not taken from either answer');
  });

  it('evicts the least recently used run beyond maxEntries', async () => {
    const cache = fresh(2);
    const a = await cache.create(newRun());
    const b = await cache.create(newRun());
    await cache.get(a.id); // a is now the most recently used
    const c = await cache.create(newRun());
    assert.equal(cache.size, 2);
    counting.reset();
    assert.deepEqual(await cache.get(a.id), a);
    assert.deepEqual(await cache.get(c.id), c);
    assert.equal(counting.count('get'), 0);
    assert.deepEqual(await cache.get(b.id), b);
    assert.equal(counting.count('get'), 1, 'b was evicted');
  });

  it('hands out frozen runs, so no caller can change the cached one', async () => {
    const cache = fresh();
    const created = await cache.create(newRun());
    const run = await cache.get(created.id);
    assert.ok(run && Object.isFrozen(run) && Object.isFrozen(run.cluster) && Object.isFrozen(run.commits));
    assert.throws(() => {
      (run as { status: string }).status = 'succeeded';
    }, TypeError);
  });

  it('answers a read past the known end of the log without a query, and queries otherwise', async () => {
    const cache = fresh();
    const created = await cache.create(newRun());
    assert.deepEqual(await cache.readLogs(created.id, { afterSeq: 0, limit: 500 }), []);
    assert.equal(counting.count('readLogs'), 0, 'a new run has no lines');

    const now = new Date();
    await cache.appendLogs(created.id, [
      { time: now, line: 'one' },
      { time: now, line: 'two' },
    ]);
    assert.deepEqual(
      (await cache.readLogs(created.id)).map((l) => l.line),
      ['one', 'two'],
    );
    assert.equal(counting.count('readLogs'), 1);
    assert.deepEqual(await cache.readLogs(created.id, { afterSeq: 2 }), []);
    assert.equal(counting.count('readLogs'), 1, 'nothing after seq 2');
    await cache.appendLogs(created.id, [{ time: now, line: 'three' }]);
    assert.deepEqual(
      (await cache.readLogs(created.id, { afterSeq: 2 })).map((l) => [l.seq, l.line]),
      [[3, 'three']],
    );
    assert.equal(counting.count('readLogs'), 2);

    // An append that threw may have been stored: the end is unknown again.
    counting.failAppendAfterCommit = true;
    await assert.rejects(cache.appendLogs(created.id, [{ time: now, line: 'four' }]), UnavailableError);
    counting.failAppendAfterCommit = false;
    assert.deepEqual(
      (await cache.readLogs(created.id, { afterSeq: 3 })).map((l) => l.line),
      ['four'],
    );
    assert.equal(counting.count('readLogs'), 3);
    // That short page told where the log ends.
    assert.deepEqual(await cache.readLogs(created.id, { afterSeq: 4 }), []);
    assert.equal(counting.count('readLogs'), 3);
  });

  it('does not take numbered lines that start past the known end of the log for its end', async () => {
    // The lines say where they go (afterSeq): only lines that start at the known end extend it.
    const cache = fresh();
    const created = await cache.create(newRun());
    const now = new Date();
    await cache.appendLogs(created.id, [{ time: now, line: 'six' }], { afterSeq: 5 });
    assert.deepEqual(
      (await cache.readLogs(created.id, { afterSeq: 1 })).map((l) => [l.seq, l.line]),
      [[6, 'six']],
      'line 6 is read, not hidden behind an end the cache guessed',
    );
  });

  it('learns where the log of a run it read ends from a short page', async () => {
    const run = await pg!.create(newRun());
    await pg!.appendLogs(run.id, [{ time: new Date(), line: 'before the cache' }]);
    const cache = fresh();
    await cache.get(run.id);
    assert.equal((await cache.readLogs(run.id, { afterSeq: 0, limit: 500 })).length, 1);
    assert.deepEqual(await cache.readLogs(run.id, { afterSeq: 1, limit: 500 }), []);
    assert.equal(counting.count('readLogs'), 1);
    // Not for runs it does not hold, and never for bad arguments (the store rejects them).
    await cache.readLogs(randomUUID(), { afterSeq: 0 });
    await cache.readLogs(randomUUID(), { afterSeq: 0 });
    assert.equal(counting.count('readLogs'), 3);
    await assert.rejects(cache.readLogs(run.id, { afterSeq: -1 }));
  });

  it('passes list, listActive and ping to the store', async () => {
    const cache = fresh();
    const created = await cache.create(newRun());
    assert.ok((await cache.listActive()).some((r) => r.id === created.id));
    assert.deepEqual((await cache.list({ cluster: created.cluster.name })).runs, [created]);
    await cache.ping();
    assert.deepEqual([counting.count('listActive'), counting.count('list'), counting.count('ping')], [1, 1, 1]);
  });

  it('refuses a maxEntries below 1', () => {
    assert.throws(() => new CachedRunStore({ store: pg!, maxEntries: 0 }), RangeError);
  });
});
