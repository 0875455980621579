/**
 * A cluster is its name in one branch of one repository. Over the real
 * service and store (PGlite): runs, upgrades and removals of a cluster name
 * on one branch or repository never block the same name on another, the same
 * (repository, branch, name) still does, a repository is one repository
 * however its URL is spelled, and an upgrade rollout on `main` is not failed
 * by a removal running on another branch.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PgRunStore } from '../db/pg-run-store.js';
import { ConflictError } from '../errors.js';
import type { ClusterEntry } from '../fleet/cluster-registry.js';
import { eventually } from '../../test/support/runner.js';
import { unusedPreviewer } from '../../test/support/unused-executor.js';
import { repositoryKeyOf } from './cluster-key.js';
import type { FleetSource } from './fleet-source.js';
import { RolloutService } from './rollout-service.js';
import type { RunExecutor } from './run-executor.js';
import type { RunRecord } from '../run/run-record.js';
import { RunService } from './run-service.js';

const CALLER = { identity: 'static:0' };
const MAIN = { repositoryUrl: 'file:///srv/gitops.git', branch: 'main' };
const OTHER_BRANCH = { ...MAIN, branch: 'staging' };
const OTHER_REPOSITORY = { repositoryUrl: 'https://git.example.net/platform/other.git', branch: 'main' };

/** Starts every run (it stays pending until the test ends it in the store). */
const startingExecutor = (): RunExecutor & { started: RunRecord[] } => {
  const started: RunRecord[] = [];
  return {
    started,
    start: async (run) => {
      started.push(run);
      return { job: run.job };
    },
    inspect: async () => ({ state: 'missing' }),
    logs: async function* () {},
    cancel: async () => undefined,
  };
};

const spec = (name: string) => ({ name, domain: `${name}.example.net`, region: 'eu-west-1' });
let counter = 0;
const nextName = () => `ck-${++counter}`;

describe('cluster identity: (repository, branch, name)', () => {
  let store: PgRunStore;
  let service: RunService;
  let executor: ReturnType<typeof startingExecutor>;

  before(async () => {
    store = await PgRunStore.open();
    executor = startingExecutor();
    service = new RunService({ store, executor, previewer: unusedPreviewer, reference: 'development' });
  });
  after(async () => store?.close());

  const remove = (name: string, where: { repositoryUrl: string; branch: string }) =>
    service.startFleetRun({ action: 'remove', cluster: spec(name), ...where }, CALLER);
  const upgrade = (name: string, where: { repositoryUrl: string; branch: string }) =>
    service.startFleetRun({ action: 'upgrade', cluster: spec(name), ...where }, CALLER);

  it('a removal on another branch or repository does not block an upgrade, a removal or the active-run check; the same cluster does (409)', async () => {
    const name = nextName();
    const removal = await remove(name, OTHER_BRANCH);
    const elsewhere = await remove(name, OTHER_REPOSITORY);
    await service.refuseActiveRuns(MAIN, [name], 'upgrade');
    const onMain = await upgrade(name, MAIN);
    assert.equal(onMain.status, 'pending');

    for (const [where, active] of [
      [MAIN, onMain],
      [OTHER_BRANCH, removal],
      [OTHER_REPOSITORY, elsewhere],
    ] as const) {
      await assert.rejects(service.refuseActiveRuns(where, ['unrelated', name], 'upgrade'), (error: unknown) => {
        assert.ok(error instanceof ConflictError);
        assert.match(error.message, new RegExp(`\\(${active.id}, pending\\) on branch ${where.branch}`), 'names the run of that branch and repository');
        return true;
      });
      await assert.rejects(upgrade(name, where), ConflictError, 'the store enforces the same key');
    }
  });

  it('is one repository however the URL names it: an absolute path and its file:// URL', async () => {
    const name = nextName();
    const run = await remove(name, { repositoryUrl: '/srv/gitops.git', branch: 'main' });
    assert.equal(run.repositoryUrl, 'file:///srv/gitops.git', 'stored in the form every lookup uses');
    await assert.rejects(upgrade(name, MAIN), ConflictError);
    await assert.rejects(service.refuseActiveRuns({ repositoryUrl: '/srv/gitops.git', branch: 'main' }, [name], 'remove'), ConflictError);
    assert.deepEqual(
      (await service.list({ cluster: name, repositoryUrl: '/srv/gitops.git' })).runs.map((r) => r.id),
      [run.id],
    );
  });

  it('for any two distinct keys sharing a name, an active run on one never blocks the other (property)', async () => {
    const branch = fc.constantFrom('main', 'staging', 'release/1', 'feature/x');
    const repository = fc.constantFrom('file:///srv/gitops.git', '/srv/other.git', 'https://git.example.net/a/b.git', 'ssh://git@git.example.net/a/b.git');
    await fc.assert(
      fc.asyncProperty(fc.tuple(repository, branch), fc.tuple(repository, branch), async ([repoA, branchA], [repoB, branchB]) => {
        const name = nextName();
        const a = await upgrade(name, { repositoryUrl: repoA, branch: branchA });
        const same = repositoryKeyOf(repoA) === repositoryKeyOf(repoB) && branchA === branchB;
        const checked = service.refuseActiveRuns({ repositoryUrl: repoB, branch: branchB }, [name], 'upgrade');
        if (same) await assert.rejects(checked, ConflictError);
        else {
          await checked;
          await upgrade(name, { repositoryUrl: repoB, branch: branchB });
        }
        await store.update(a.id, { status: 'cancelled' });
      }),
      { numRuns: 40 },
    );
  });

  it('an upgrade rollout on main is not failed by a removal running on another branch', async () => {
    const name = nextName();
    const removal = await remove(name, OTHER_BRANCH);
    const entry: ClusterEntry = {
      name,
      kind: 'generated',
      gitopsPath: `clusters/${name}`,
      attributes: { domain: `${name}.example.net`, region: 'eu-west-1' },
      freshness: 'behind',
    };
    const fleet: FleetSource = {
      fleet: async () => ({ clusters: [entry], commit: 'a'.repeat(40) }),
      sealedSecrets: async () => [],
      planRemoval: () => Promise.reject(new Error('not used')),
      previewUpgrade: () => Promise.reject(new Error('not used')),
    };
    const rollouts = new RolloutService({ store: store.rollouts(), fleet, runs: service, pollMs: 10 });
    try {
      await service.refuseActiveRuns(MAIN, [name], 'upgrade');
      const rollout = await rollouts.start({ ...MAIN, clusters: [name], waveSize: 1, requestedBy: 'alice' });
      const started = await eventually('the upgrade run started', async () => (await rollouts.getRollout(rollout.id))?.clusters[name]?.run);
      const run = await service.get(started);
      assert.deepEqual([run.action, run.branch, run.status], ['upgrade', 'main', 'pending']);
      assert.equal((await rollouts.getRollout(rollout.id))?.state, 'running', 'not failed by the other branch');
      await store.update(run.id, { status: 'succeeded', finishedAt: new Date() });
      const done = await eventually('the rollout finished', async () => {
        const r = await rollouts.getRollout(rollout.id);
        return r?.state === 'running' ? undefined : r;
      });
      assert.equal(done?.state, 'succeeded');
      assert.equal((await service.get(removal.id)).status, 'pending', 'the removal on the other branch goes on');
    } finally {
      await rollouts.stop();
    }
  });
});
