/**
 * The behaviour every `RunStore` must show, as a node:test suite. An
 * implementation's test file calls {@link runRunStoreContract} with a way to
 * open a fresh, empty store; the suite shares that store between its tests and
 * keeps them apart with unique cluster names and run ids.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { NewRun, RunStore } from './run-store.js';
import { jobNameOf, type RunStatus, type RunRecord } from '../run/run-record.js';

/** A store under test and how to dispose of it. */
export interface OpenedRunStore {
  readonly store: RunStore;
  /** Closes the store and removes whatever `open` created (database, directory). */
  cleanup(): Promise<void>;
}

/**
 * Registers the RunStore contract suite under `name`.
 *
 * @param open - returns a new, empty store; called once, before the suite's tests
 */
export function runRunStoreContract(name: string, open: () => Promise<OpenedRunStore>): void {
  describe(`RunStore contract: ${name}`, () => {
    let opened: OpenedRunStore | undefined;
    const store = (): RunStore => {
      if (!opened) throw new Error('store not open');
      return opened.store;
    };

    before(async () => {
      opened = await open();
    });
    after(async () => {
      await opened?.cleanup();
    });

    it('create returns a pending run and get returns the same run, with every field', async () => {
      const input = newRun();
      const created = await store().create(input);
      assert.deepEqual(created, {
        id: input.id,
        // A run created without an action is a scaffold.
        action: 'scaffold',
        cluster: input.cluster,
        repositoryUrl: input.repositoryUrl,
        branch: input.branch,
        reference: input.reference,
        status: 'pending',
        step: 0,
        message: '',
        job: input.job,
        commits: [],
        attempt: 1,
        createdAt: created.createdAt,
        updatedAt: created.updatedAt,
        createdBy: input.createdBy,
        sealing: input.sealing,
      });
      assert.ok(created.createdAt instanceof Date && !Number.isNaN(created.createdAt.getTime()));
      assert.ok(Math.abs(created.createdAt.getTime() - Date.now()) < 60_000, 'createdAt is now');
      assert.equal(created.updatedAt.getTime(), created.createdAt.getTime());
      assert.deepEqual(await store().get(input.id), created);

      const startedAt = new Date(Date.now() - 5_000);
      const finishedAt = new Date();
      const updated = await store().update(input.id, {
        status: 'succeeded',
        step: 7,
        stepName: 'push',
        message: 'pushed 2 commits',
        gitopsPath: `clusters/${input.cluster.name}`,
        commits: [
          { pass: 'infrastructure', sha: 'a'.repeat(40) },
          { pass: 'all', sha: 'b'.repeat(40) },
        ],
        attempt: 2,
        job: `${input.job}-2`,
        startedAt,
        finishedAt,
      });
      assert.ok(updated);
      assert.deepEqual(await store().get(input.id), updated);
      assert.deepEqual(
        { ...updated, updatedAt: undefined },
        {
          ...created,
          updatedAt: undefined,
          status: 'succeeded',
          step: 7,
          stepName: 'push',
          message: 'pushed 2 commits',
          gitopsPath: `clusters/${input.cluster.name}`,
          commits: [
            { pass: 'infrastructure', sha: 'a'.repeat(40) },
            { pass: 'all', sha: 'b'.repeat(40) },
          ],
          attempt: 2,
          job: `${input.job}-2`,
          startedAt,
          finishedAt,
        },
      );
      assert.ok(updated.updatedAt.getTime() >= created.updatedAt.getTime());
    });

    it("keeps a cluster's catalog attributes (role and providers) with the run", async () => {
      const base = newRun();
      const run = { ...base, cluster: { ...base.cluster, role: 'env', infra_provider: 'aws', dns_provider: 'route53' } };
      const created = await store().create(run);
      assert.deepEqual(created.cluster, run.cluster);
      assert.deepEqual((await store().get(run.id))?.cluster, run.cluster);
      const plain = await store().create(newRun());
      assert.deepEqual(Object.keys((await store().get(plain.id))!.cluster).sort(), ['domain', 'name', 'region']);
    });

    it('keeps the review requests a run reported, replacing the list on each update and surviving a read back', async () => {
      const run = await store().create({ ...newRun(), delivery: { mode: 'pull_request', forge: 'github', autoMerge: false } });
      assert.equal(run.reviewRequests, undefined, 'a new run has none');
      const opened = {
        pass: 'infrastructure' as const,
        forge: 'github' as const,
        number: 7,
        url: 'https://github.com/acme/gitops/pull/7',
        state: 'open' as const,
        branch: `scaffold/${run.cluster.name}/infrastructure`,
        updatedAt: new Date('2026-01-02T03:04:05.678Z'),
      };
      await store().update(run.id, { status: 'running', reviewRequests: [opened] });
      const merged = { ...opened, state: 'merged' as const, updatedAt: new Date('2026-01-02T04:00:00.000Z') };
      const second = {
        pass: 'all' as const,
        forge: 'github' as const,
        number: 8,
        url: 'https://github.com/acme/gitops/pull/8',
        state: 'closed' as const,
        updatedAt: new Date('2026-01-02T05:00:00.000Z'),
      };
      const updated = await store().update(run.id, { reviewRequests: [merged, second] });
      assert.deepEqual(updated?.reviewRequests, [merged, second]);
      assert.deepEqual((await store().get(run.id))?.reviewRequests, [merged, second]);
      const listed = (await store().list({ cluster: run.cluster.name })).runs[0];
      assert.deepEqual(listed?.reviewRequests, [merged, second], 'the list carries them too');
      // Other updates leave them alone.
      assert.deepEqual((await store().update(run.id, { message: 'waiting' }))?.reviewRequests, [merged, second]);
    });

    it('refuses an action the registry does not know, and stores nothing', async () => {
      const unknown = { ...newRun(), action: 'rollback' } as unknown as NewRun;
      await assert.rejects(store().create(unknown), ValidationError);
      assert.equal(await store().get(unknown.id), undefined);
    });

    it('keeps what an upgrade or a removal run does: its action, sealing none, and the changes its commit made', async () => {
      const upgrade = await store().create({ ...newRun(), action: 'upgrade', sealing: 'none' });
      assert.deepEqual([upgrade.action, upgrade.sealing, upgrade.changes], ['upgrade', 'none', undefined]);
      assert.deepEqual(await store().get(upgrade.id), upgrade);
      const changes = { added: 2, modified: 5, removed: 1, credentialsKept: 3 };
      const upgraded = await store().update(upgrade.id, { status: 'succeeded', step: 3, commits: [{ pass: 'upgrade', sha: 'd'.repeat(40) }], changes });
      assert.deepEqual(upgraded?.changes, changes);
      assert.deepEqual(upgraded?.commits, [{ pass: 'upgrade', sha: 'd'.repeat(40) }]);
      assert.deepEqual(await store().get(upgrade.id), upgraded);

      const removal = await store().create({ ...newRun(), action: 'remove', sealing: 'none' });
      const removed = { added: 0, modified: 0, removed: 41, kept: [`clusters/${removal.cluster.name}/flux-system/gotk-sync.yaml`] };
      await store().update(removal.id, { status: 'running', step: 2 });
      // Other updates leave the changes alone once written.
      await store().update(removal.id, { changes: removed });
      const read = await store().update(removal.id, { status: 'succeeded', step: 3, message: 'removed' });
      assert.deepEqual([read?.action, read?.sealing, read?.changes], ['remove', 'none', removed]);
      const listed = (await store().list({ cluster: removal.cluster.name })).runs[0];
      assert.deepEqual([listed?.action, listed?.changes], ['remove', removed], 'the list carries them too');
    });

    it("keeps a batch run's clusters, each cluster's commit and outcome, and a failure's words made storable", async () => {
      const run = newRun();
      const batch = [`${run.cluster.name}-b`, `${run.cluster.name}-c`];
      const created = await store().create({ ...run, action: 'upgrade', sealing: 'none', batch });
      assert.deepEqual(created.batch, batch);
      assert.deepEqual(await store().get(created.id), created);
      const commits = [{ pass: 'upgrade' as const, sha: 'e'.repeat(40), cluster: batch[0]! }];
      const batchOutcomes = {
        [run.cluster.name]: { status: 'up_to_date' as const },
        [batch[0]!]: { status: 'upgraded' as const, changes: { added: 1, modified: 2, removed: 0 } },
        [batch[1]!]: { status: 'failed' as const, message: 'verify: a\u0000b' },
      };
      const ended = await store().update(created.id, { status: 'failed', commits, batchOutcomes });
      assert.deepEqual(ended?.commits, commits);
      assert.equal(ended?.batchOutcomes?.[batch[1]!]?.message, 'verify: a\uFFFDb');
      assert.deepEqual(ended?.batchOutcomes?.[batch[0]!], batchOutcomes[batch[0]!]);
      assert.deepEqual(await store().get(created.id), ended);
      const single = await store().create({ ...newRun(), action: 'upgrade', sealing: 'none' });
      assert.deepEqual([single.batch, single.batchOutcomes], [undefined, undefined]);
    });

    it("keeps a failed run's error code and whether a retry may succeed, and has none for other runs", async () => {
      const transient = await store().create(newRun());
      const failed = await store().update(transient.id, {
        status: 'failed',
        message: 'step 1 (clone) failed',
        failure: { code: 'unavailable', transient: true },
        finishedAt: new Date(),
      });
      assert.deepEqual(failed?.failure, { code: 'unavailable', transient: true });
      assert.deepEqual((await store().get(transient.id))?.failure, { code: 'unavailable', transient: true });
      const permanent = await store().create(newRun());
      await store().update(permanent.id, { status: 'failed', failure: { code: 'invalid_input', transient: false } });
      const listed = (await store().list({ cluster: permanent.cluster.name })).runs[0];
      assert.deepEqual(listed?.failure, { code: 'invalid_input', transient: false }, 'the list carries it too');

      const succeeded = await store().create(newRun());
      assert.equal((await store().update(succeeded.id, { status: 'succeeded' }))?.failure, undefined);
    });

    it('get of an unknown id is undefined', async () => {
      assert.equal(await store().get(randomUUID()), undefined);
    });

    it('refuses a second active run for a cluster, naming the cluster and the active run', async () => {
      const first = await store().create(newRun());
      const second = newRun({ cluster: first.cluster.name });
      await assert.rejects(store().create(second), (error: unknown) => {
        assert.ok(error instanceof ConflictError, `expected ConflictError, got ${String(error)}`);
        assert.match(error.message, new RegExp(first.cluster.name));
        assert.match(error.message, new RegExp(first.id));
        return true;
      });
      assert.equal(await store().get(second.id), undefined, 'the refused run was not stored');

      // Still active while running.
      assert.ok(await store().update(first.id, { status: 'running' }));
      await assert.rejects(store().create(newRun({ cluster: first.cluster.name })), ConflictError);
      // Another cluster is not affected.
      await store().create(newRun());
    });

    it('keys a cluster by repository, branch and name: an active run on one does not block the same name on another', async () => {
      const cluster = clusterName();
      const other = { repositoryUrl: 'https://git.example.net/platform/other.git', branch: 'main' };
      const main = await store().create(newRun({ cluster }));
      const onBranch = await store().create(newRun({ cluster, branch: 'staging' }));
      const inOtherRepository = await store().create(newRun({ cluster, ...other }));
      assert.ok(await store().update(onBranch.id, { status: 'running' }));
      // The same key still has one active run at most, whichever status it is in.
      for (const [key, active] of [
        [{}, main],
        [{ branch: 'staging' }, onBranch],
        [other, inOtherRepository],
      ] as const) {
        await assert.rejects(store().create(newRun({ cluster, ...key })), (error: unknown) => {
          assert.ok(error instanceof ConflictError, `expected ConflictError, got ${String(error)}`);
          assert.match(error.message, new RegExp(active.id), 'names the active run of that key, not of another');
          return true;
        });
      }
      // A cluster's runs are looked up by its key.
      assert.deepEqual(ids((await store().list({ cluster, branch: 'staging' })).runs), [onBranch.id]);
      assert.deepEqual(ids((await store().list({ cluster, repositoryUrl: other.repositoryUrl })).runs), [inOtherRepository.id]);
      assert.deepEqual(ids((await store().list({ cluster, repositoryUrl: main.repositoryUrl, branch: 'main' })).runs), [main.id]);
      assert.deepEqual(ids((await store().list({ cluster, status: 'running' })).runs), [onBranch.id]);
      assert.equal((await store().list({ cluster })).runs.length, 3);
    });

    it('lets one concurrent create per key win, and each key its own', async () => {
      const cluster = clusterName();
      const keys = [{ branch: 'main' }, { branch: 'staging' }, { repositoryUrl: 'https://git.example.net/platform/other.git', branch: 'main' }];
      const results = await Promise.allSettled(keys.flatMap((key) => Array.from({ length: 4 }, () => store().create(newRun({ cluster, ...key })))));
      const won = results
        .filter((r): r is PromiseFulfilledResult<RunRecord> => r.status === 'fulfilled')
        .map((r) => `${r.value.repositoryUrl} ${r.value.branch}`);
      assert.equal(won.length, keys.length, 'one winner per key');
      assert.equal(new Set(won).size, keys.length);
      for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof ConflictError, `expected ConflictError, got ${String(r.reason)}`);
    });

    it('refuses a duplicate run id', async () => {
      const first = await store().create(newRun());
      await assert.rejects(store().create(newRun({ id: first.id })), ConflictError);
    });

    for (const final of ['succeeded', 'failed', 'cancelled'] as const) {
      it(`allows a new run for a cluster once its run is ${final}`, async () => {
        const first = await store().create(newRun());
        assert.ok(await store().update(first.id, { status: final, finishedAt: new Date() }));
        const next = await store().create(newRun({ cluster: first.cluster.name }));
        assert.equal(next.status, 'pending');
        assert.equal((await store().get(first.id))?.status, final);
      });
    }

    it('lets exactly one of many concurrent creates for one cluster win', async () => {
      const cluster = clusterName();
      const attempts = Array.from({ length: 12 }, () => newRun({ cluster }));
      const results = await Promise.allSettled(attempts.map((run) => store().create(run)));
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(won.length, 1);
      for (const r of lost) assert.ok(r.reason instanceof ConflictError, `expected ConflictError, got ${String(r.reason)}`);
      const page = await store().list({ cluster });
      assert.equal(page.runs.length, 1);
    });

    it('applies allowed transitions and refuses the others', async () => {
      const run = await store().create(newRun());
      const running = await store().update(run.id, { status: 'running', step: 1, stepName: 'clone' });
      assert.equal(running?.status, 'running');
      // Progress within the same active status is allowed.
      const progressed = await store().update(run.id, { step: 2, stepName: 'generate', message: 'rendering' });
      assert.deepEqual([progressed?.status, progressed?.step, progressed?.stepName, progressed?.message], ['running', 2, 'generate', 'rendering']);
      const done = await store().update(run.id, { status: 'succeeded', step: 7 });
      assert.equal(done?.status, 'succeeded');

      assert.equal(await store().update(run.id, { status: 'running' }), undefined, 'succeeded → running');
      assert.equal(await store().update(run.id, { status: 'failed' }), undefined, 'succeeded → failed');
      assert.equal(await store().update(run.id, { message: 'late progress' }), undefined, 'a final run does not change');
      assert.deepEqual(await store().get(run.id), done, 'refused updates changed nothing');

      // running → pending is not a transition.
      const other = await store().create(newRun());
      await store().update(other.id, { status: 'running' });
      assert.equal(await store().update(other.id, { status: 'pending' }), undefined);
      // pending may end directly.
      const third = await store().create(newRun());
      assert.equal((await store().update(third.id, { status: 'failed', message: 'invalid input' }))?.status, 'failed');
    });

    it('applies an update only when the run is in one of the `from` statuses', async () => {
      const run = await store().create(newRun());
      assert.equal(await store().update(run.id, { status: 'running' }, ['running']), undefined);
      assert.equal((await store().get(run.id))?.status, 'pending');
      assert.equal((await store().update(run.id, { status: 'running' }, ['pending']))?.status, 'running');
      assert.equal(await store().update(run.id, { message: 'x' }, ['pending']), undefined);
      assert.equal((await store().update(run.id, { status: 'cancelled' }, ['pending', 'running']))?.status, 'cancelled');
      // `from` cannot widen what the transitions allow.
      assert.equal(await store().update(run.id, { status: 'running' }, ['cancelled']), undefined);
      assert.equal(await store().update(randomUUID(), { status: 'running' }), undefined, 'unknown run');
    });

    it("applies an age-guarded update only to a run older than the guard, by the store's own clock", async () => {
      const run = await store().create(newRun());
      assert.equal(await store().update(run.id, { status: 'failed' }, ['pending'], { createdAtLeastMsAgo: 3_600_000 }), undefined, 'an hour old: not yet');
      assert.equal((await store().get(run.id))?.status, 'pending');
      const deadline = Date.now() + 5_000;
      let failed: RunRecord | undefined;
      while (failed === undefined && Date.now() < deadline) {
        failed = await store().update(run.id, { status: 'failed' }, ['pending'], { createdAtLeastMsAgo: 50 });
        if (failed === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(failed?.status, 'failed', 'applied once the run is 50 ms old');
    });

    it('lets exactly one of many concurrent guarded updates claim a run', async () => {
      const run = await store().create(newRun());
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store().update(run.id, { status: 'running', message: `claimed by ${i}` }, ['pending'])),
      );
      const claimed = results.filter((r) => r !== undefined);
      assert.equal(claimed.length, 1);
      assert.deepEqual(await store().get(run.id), claimed[0]);
    });

    it('lists runs newest first, filtered by cluster and by status', async () => {
      const a = clusterName();
      const b = clusterName();
      const statuses: RunStatus[] = ['failed', 'succeeded', 'failed'];
      const created: RunRecord[] = [];
      for (const status of statuses) {
        const run = await store().create(newRun({ cluster: a }));
        created.push(run);
        await store().update(run.id, { status });
      }
      const activeA = await store().create(newRun({ cluster: a }));
      created.push(activeA);
      await store().create(newRun({ cluster: b }));

      const all = await store().list({ cluster: a });
      assert.equal(all.nextCursor, undefined);
      assert.deepEqual(ids(all.runs), ids(newestFirst(created)));
      assert.ok(all.runs.every((r) => r.cluster.name === a));
      assertNewestFirst(all.runs);

      const failed = await store().list({ cluster: a, status: 'failed' });
      assert.deepEqual(ids(failed.runs), ids(newestFirst(created.filter((_, i) => statuses[i] === 'failed'))));
      assert.ok(failed.runs.every((r) => r.status === 'failed'));

      const pending = await store().list({ status: 'pending' });
      assert.ok(pending.runs.every((r) => r.status === 'pending'));
      assertNewestFirst(pending.runs);

      const everything = await store().list({ limit: 1000 });
      assertNewestFirst(everything.runs);
      assert.ok(ids(everything.runs).includes(activeA.id));

      assert.deepEqual((await store().list({ cluster: clusterName() })).runs, []);
    });

    it('paginates with no duplicates or gaps, even while runs are added', async () => {
      const cluster = clusterName();
      const created: RunRecord[] = [];
      for (let i = 0; i < 7; i++) {
        const run = await store().create(newRun({ cluster }));
        created.push(run);
        await store().update(run.id, { status: 'succeeded' });
      }
      const expected = ids(newestFirst(created));

      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store().list({ cluster, limit: 3, ...(cursor !== undefined ? { cursor } : {}) });
        pages++;
        assert.ok(page.runs.length <= 3);
        seen.push(...ids(page.runs));
        cursor = page.nextCursor;
        // A run created mid-walk is newer than every page boundary: it must not
        // shift later pages (which offset pagination would do).
        if (pages === 1) await store().create(newRun({ cluster }));
      } while (cursor !== undefined && pages < 10);
      assert.equal(pages, 3);
      assert.deepEqual(seen, expected);

      const exact = await store().list({ cluster, status: 'succeeded', limit: 7 });
      assert.equal(exact.runs.length, 7);
      assert.equal(exact.nextCursor, undefined, 'no cursor when the page is the last one');
    });

    it('rejects a malformed cursor', async () => {
      for (const cursor of ['not a cursor', Buffer.from('[1,2]').toString('base64url'), '']) {
        await assert.rejects(store().list({ cursor }), ValidationError, JSON.stringify(cursor));
      }
    });

    it('lists every active run, oldest first, and no final one', async () => {
      const pending = await store().create(newRun());
      const running = await store().create(newRun());
      await store().update(running.id, { status: 'running' });
      const finished = await store().create(newRun());
      await store().update(finished.id, { status: 'failed' });

      const active = await store().listActive();
      assert.ok(active.every((r) => r.status === 'pending' || r.status === 'running'));
      const mine = ids(active).filter((id) => id === pending.id || id === running.id);
      assert.deepEqual(mine, ids(newestFirst([pending, running]).reverse()));
      assert.ok(!ids(active).includes(finished.id));
      for (let i = 1; i < active.length; i++) {
        assert.ok(compareNewestFirst(active[i - 1]!, active[i]!) > 0, 'oldest first');
      }
    });

    it('appends logs with consecutive seq numbers and reads them after a seq', async () => {
      const run = await store().create(newRun());
      assert.deepEqual(await store().readLogs(run.id), []);
      const t0 = Date.now();
      const line = (i: number): { time: Date; line: string } => ({ time: new Date(t0 + i), line: `line ${i} {"json":true} ünïcødé` });
      await store().appendLogs(run.id, [line(1), line(2), line(3)]);
      await store().appendLogs(run.id, []);
      await store().appendLogs(run.id, [line(4), line(5)]);

      const logs = await store().readLogs(run.id);
      assert.deepEqual(
        logs,
        [1, 2, 3, 4, 5].map((i) => ({ seq: i, ...line(i) })),
      );
      assert.deepEqual(
        (await store().readLogs(run.id, { afterSeq: 3 })).map((l) => l.seq),
        [4, 5],
      );
      assert.deepEqual(
        (await store().readLogs(run.id, { limit: 2 })).map((l) => l.seq),
        [1, 2],
      );
      assert.deepEqual(
        (await store().readLogs(run.id, { afterSeq: 1, limit: 2 })).map((l) => l.seq),
        [2, 3],
      );
      assert.deepEqual(await store().readLogs(run.id, { afterSeq: 5 }), []);
      assert.deepEqual(await store().readLogs(randomUUID()), []);

      // Logs keep accumulating after the run ended (the tail of a runner's output).
      await store().update(run.id, { status: 'succeeded' });
      await store().appendLogs(run.id, [line(6)]);
      assert.deepEqual(
        (await store().readLogs(run.id, { afterSeq: 5 })).map((l) => l.seq),
        [6],
      );
    });

    it('reads at most 1000 log lines by default', async () => {
      const run = await store().create(newRun());
      const now = new Date();
      await store().appendLogs(
        run.id,
        Array.from({ length: 1005 }, (_, i) => ({ time: now, line: `l${i + 1}` })),
      );
      const first = await store().readLogs(run.id);
      assert.equal(first.length, 1000);
      assert.equal(first.at(-1)?.seq, 1000);
      assert.deepEqual(
        (await store().readLogs(run.id, { afterSeq: 1000 })).map((l) => l.line),
        ['l1001', 'l1002', 'l1003', 'l1004', 'l1005'],
      );
    });

    it('refuses logs for an unknown run', async () => {
      await assert.rejects(store().appendLogs(randomUUID(), [{ time: new Date(), line: 'x' }]), NotFoundError);
    });

    it('keeps seq numbers unique and consecutive under concurrent appends', async () => {
      const run = await store().create(newRun());
      const writers = 8;
      const perBatch = 5;
      const now = new Date();
      await Promise.all(
        Array.from({ length: writers }, (_, w) =>
          store().appendLogs(
            run.id,
            Array.from({ length: perBatch }, (_, i) => ({ time: now, line: `w${w} ${i}` })),
          ),
        ),
      );
      const logs = await store().readLogs(run.id);
      assert.deepEqual(
        logs.map((l) => l.seq),
        Array.from({ length: writers * perBatch }, (_, i) => i + 1),
      );
      // Each batch lands contiguously and in its own order.
      for (let start = 0; start < logs.length; start += perBatch) {
        const batch = logs.slice(start, start + perBatch).map((l) => l.line);
        const writer = batch[0]?.split(' ')[0];
        assert.deepEqual(
          batch,
          Array.from({ length: perBatch }, (_, i) => `${writer} ${i}`),
        );
      }
    });

    it('numbers lines as the caller says with afterSeq, storing a repeated write once', async () => {
      const run = await store().create(newRun());
      const at = (text: string) => ({ time: new Date(), line: text });
      await store().appendLogs(run.id, [at('a'), at('b'), at('c')], { afterSeq: 0 });
      // The acknowledgement was lost: the same write again.
      await store().appendLogs(run.id, [at('a'), at('b'), at('c')], { afterSeq: 0 });
      // Overlapping the end: only the new number is stored.
      await store().appendLogs(run.id, [at('c-again'), at('d')], { afterSeq: 2 });
      // A plain append continues after the last number.
      await store().appendLogs(run.id, [at('e')]);
      const logs = await store().readLogs(run.id);
      assert.deepEqual(
        logs.map((l) => [l.seq, l.line]),
        [
          [1, 'a'],
          [2, 'b'],
          [3, 'c'],
          [4, 'd'],
          [5, 'e'],
        ],
      );
      await assert.rejects(store().appendLogs(randomUUID(), [at('x')], { afterSeq: 0 }), NotFoundError);
    });

    it('answers ping', async () => {
      await store().ping();
    });
  });
}

function clusterName(): string {
  return `c-${randomBytes(6).toString('hex')}`;
}

/** A new run for a store test: a fresh id and cluster unless given. */
export function newRun(overrides: { readonly id?: string; readonly cluster?: string; readonly repositoryUrl?: string; readonly branch?: string } = {}): NewRun {
  const id = overrides.id ?? randomUUID();
  const name = overrides.cluster ?? clusterName();
  return {
    id,
    cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' },
    repositoryUrl: overrides.repositoryUrl ?? 'https://git.example.net/platform/gitops.git',
    branch: overrides.branch ?? 'main',
    reference: 'development',
    job: jobNameOf(id),
    createdBy: 'system:serviceaccount:provisioning:cluster-controller',
    sealing: 'kubeconfig',
  };
}

function ids(runs: readonly RunRecord[]): string[] {
  return runs.map((r) => r.id);
}

/** Positive when `a` sorts after `b` in newest-first order (createdAt desc, then id desc). */
function compareNewestFirst(a: RunRecord, b: RunRecord): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function newestFirst(runs: readonly RunRecord[]): RunRecord[] {
  return [...runs].sort(compareNewestFirst);
}

function assertNewestFirst(runs: readonly RunRecord[]): void {
  for (let i = 1; i < runs.length; i++) {
    assert.ok(compareNewestFirst(runs[i - 1]!, runs[i]!) < 0, `run ${i} is not older than run ${i - 1}`);
  }
}
