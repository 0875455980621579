/**
 * The rollout driver over its ports: rollouts in PGlite, the fleet and the
 * runs as doubles the test drives (a run ends when the test says so), so each
 * rule of the waves is seen without a runner: one run per cluster, the next
 * wave only after every run of this one succeeded, a failure stops the
 * rollout, and a resumed driver follows the runs it had started.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConflictError, NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import { PgRunStore } from '../db/pg-run-store.js';
import type { ClusterEntry } from '../fleet/cluster-registry.js';
import type { FleetSource } from './fleet-source.js';
import { batchesOf, MAX_ROLLOUT_CLUSTERS, RolloutService, type RolloutRuns } from './rollout-service.js';
import { batchResultFits } from '../run/batch-issues.js';
import type { RolloutStore } from './rollout-store.js';
import { MAX_BATCH_CLUSTERS, type RunStatus, type RunRecord } from '../run/run-record.js';
import type { FleetRunRequest } from './run-service.js';
import { eventually } from '../../test/support/runner.js';

const REPO = { repositoryUrl: 'file:///srv/gitops.git', branch: 'main' };

const entry = (name: string, kind: ClusterEntry['kind'] = 'generated'): ClusterEntry => ({
  name,
  kind,
  gitopsPath: `clusters/${name}`,
  attributes: kind === 'generated' ? { domain: `${name}.example.net`, region: 'eu-west-1', role: 'edge' } : {},
  freshness: kind === 'generated' ? 'behind' : 'not_applicable',
});

/** A fleet of `names` (and the reference), read-only. */
function fleetOf(names: string[]): FleetSource & { clusters: ClusterEntry[] } {
  const clusters = [entry('development', 'reference'), ...names.map((n) => entry(n))];
  return {
    clusters,
    fleet: async () => ({ clusters, commit: 'a'.repeat(40) }),
    sealedSecrets: async () => [],
    planRemoval: () => Promise.reject(new Error('not used')),
    previewUpgrade: () => Promise.reject(new Error('not used')),
  };
}

/** Runs the test ends by hand; starting one for a cluster in `busy` fails like the store's one-active-run rule. */
class RunsDouble implements RolloutRuns {
  readonly runs = new Map<string, RunRecord>();
  readonly started: FleetRunRequest[] = [];
  readonly busy = new Set<string>();
  /** How often the driver has read a run: each pass of its loop reads every run it follows. */
  reads = 0;
  #next = 0;

  async startFleetRun(request: FleetRunRequest, caller: { identity: string }): Promise<RunRecord> {
    if (this.busy.has(request.cluster.name)) throw new ConflictError(`cluster ${request.cluster.name} already has an active run`);
    this.started.push(request);
    const now = new Date();
    const run: RunRecord = {
      id: `run-${++this.#next}`,
      action: request.action,
      cluster: request.cluster,
      repositoryUrl: request.repositoryUrl,
      branch: request.branch,
      reference: 'development',
      status: 'pending',
      step: 0,
      message: '',
      job: `scaffold-run-${this.#next}`,
      commits: [],
      attempt: 1,
      createdAt: now,
      updatedAt: now,
      createdBy: caller.identity,
      sealing: 'none',
      ...(request.batch !== undefined ? { batch: request.batch } : {}),
    };
    this.runs.set(run.id, run);
    return run;
  }

  /** Ends batch run `id` as its runner would report it: its status, the commits its clusters landed, each cluster's outcome. */
  endBatch(id: string, status: Extract<RunStatus, 'succeeded' | 'failed'>, ended: Pick<RunRecord, 'commits' | 'batchOutcomes' | 'message'>): void {
    const run = this.runs.get(id);
    assert.ok(run?.batch !== undefined && (run.status === 'pending' || run.status === 'running'), `an active batch run ${id}`);
    this.runs.set(id, { ...run, status, ...ended });
  }

  async get(id: string): Promise<RunRecord> {
    this.reads++;
    const run = this.runs.get(id);
    if (run === undefined) throw new NotFoundError(`no run ${id}`);
    return run;
  }

  /** Like RunService.cancel: an active run becomes cancelled at once, saying by whom; a final one is a conflict. */
  async cancel(id: string, caller: { identity: string }): Promise<RunRecord> {
    const run = await this.get(id);
    if (run.status !== 'pending' && run.status !== 'running') throw new ConflictError(`scaffold run ${id} is already ${run.status}`);
    const cancelled: RunRecord = { ...run, status: 'cancelled', message: `cancelled by ${caller.identity}` };
    this.runs.set(id, cancelled);
    return cancelled;
  }

  checkFleetDelivery(): void {}

  /** Ends the run of `cluster`: succeeded with a commit (or none: up to date), or failed/cancelled with `message`. */
  end(cluster: string, status: Extract<RunStatus, 'succeeded' | 'failed' | 'cancelled'>, options: { commit?: string; message?: string } = {}): void {
    const run = [...this.runs.values()].find((r) => r.cluster.name === cluster && (r.status === 'pending' || r.status === 'running'));
    assert.ok(run, `an active run for ${cluster}`);
    this.runs.set(run.id, {
      ...run,
      status,
      message: options.message ?? '',
      commits: options.commit !== undefined ? [{ pass: 'upgrade', sha: options.commit }] : [],
      ...(status === 'succeeded'
        ? {
            changes:
              options.commit !== undefined
                ? { added: 0, modified: 2, removed: 0, credentialsKept: 4 }
                : { added: 0, modified: 0, removed: 0, credentialsKept: 4 },
          }
        : {}),
    });
  }

  startedFor = (): string[] => this.started.map((r) => r.cluster.name);

  /**
   * Resolves once the driver has read runs `times` more times. A pass starts
   * what it may before it reads, so after reads from two passes begun since
   * now, the driver has acted on what it saw: what it did not start, it will
   * not start. An event, not a pause: a slow machine only makes it later.
   */
  async driverPasses(times: number): Promise<void> {
    const target = this.reads + times;
    await eventually(`the driver to read the runs ${times} more times`, () => (this.reads >= target ? true : undefined));
  }
}

describe('RolloutService', () => {
  let pg: PgRunStore;
  let store: RolloutStore;

  before(async () => {
    pg = await PgRunStore.open();
    store = pg.rollouts();
  });
  after(async () => pg?.close());

  // One cluster a run unless a test batches: the wave rules read the same either way.
  const serviceWith = (fleet: FleetSource, runs: RolloutRuns, maxActiveRuns?: number, batchSize = 1) =>
    new RolloutService({ store, fleet, runs, pollMs: 10, batchSize, ...(maxActiveRuns !== undefined ? { maxActiveRuns } : {}) });
  const rolloutWhen = (
    service: RolloutService,
    id: string,
    what: string,
    test: (r: NonNullable<Awaited<ReturnType<RolloutService['getRollout']>>>) => boolean,
  ) =>
    eventually(what, async () => {
      const rollout = await service.getRollout(id);
      return rollout !== undefined && test(rollout) ? rollout : undefined;
    });

  it('starts one upgrade run per cluster of a wave, with its recorded spec, and the next wave only once every run succeeded', async () => {
    const runs = new RunsDouble();
    const service = serviceWith(fleetOf(['eu-1', 'eu-2', 'eu-3']), runs);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 2, requestedBy: 'alice', delivery: { mode: 'push' } });
    assert.deepEqual(rollout.waves, [['eu-1', 'eu-2'], ['eu-3']]);

    await rolloutWhen(service, rollout.id, 'wave 1 running', (r) => r.clusters['eu-2']?.run !== undefined);
    assert.deepEqual(runs.startedFor(), ['eu-1', 'eu-2']);
    assert.deepEqual(runs.started[0], {
      action: 'upgrade',
      cluster: { name: 'eu-1', domain: 'eu-1.example.net', region: 'eu-west-1', role: 'edge' },
      ...REPO,
      delivery: { mode: 'push' },
    });
    assert.equal([...runs.runs.values()][0]?.createdBy, 'alice');

    runs.end('eu-1', 'succeeded', { commit: '1'.repeat(40) });
    await rolloutWhen(service, rollout.id, 'eu-1 recorded', (r) => r.clusters['eu-1']?.status === 'succeeded');
    // Following eu-2 alone now: one read a pass.
    await runs.driverPasses(2);
    assert.deepEqual(runs.startedFor(), ['eu-1', 'eu-2'], 'wave 2 waits for eu-2');

    runs.end('eu-2', 'succeeded');
    await rolloutWhen(service, rollout.id, 'wave 2 started', (r) => r.clusters['eu-3']?.run !== undefined);
    runs.end('eu-3', 'succeeded', { commit: '3'.repeat(40) });
    const done = await rolloutWhen(service, rollout.id, 'the rollout finished', (r) => r.state !== 'running');
    assert.equal(done.state, 'succeeded');
    assert.deepEqual(done.clusters['eu-1'], {
      status: 'succeeded',
      run: 'run-1',
      outcome: 'upgraded',
      commit: '1'.repeat(40),
      added: 0,
      modified: 2,
      removed: 0,
    });
    assert.deepEqual(done.clusters['eu-2'], { status: 'succeeded', run: 'run-2', outcome: 'up_to_date', added: 0, modified: 0, removed: 0 });
    assert.equal(done.clusters['eu-3']?.run, 'run-3');
    await service.idle();
  });

  it('a failed run stops the rollout after its wave: it says which cluster failed and why, and later waves never start', async () => {
    const runs = new RunsDouble();
    const service = serviceWith(fleetOf(['eu-1', 'eu-2', 'eu-3']), runs);
    const rollout = await service.start({ ...REPO, clusters: ['eu-1', 'eu-2', 'eu-3'], waveSize: 2, requestedBy: 'alice' });
    await rolloutWhen(service, rollout.id, 'wave 1 running', (r) => r.clusters['eu-2']?.run !== undefined);
    runs.end('eu-1', 'failed', { message: 'step 2 (render-upgrade) failed: clusters/eu-1/…/sealed-db.yaml would be sealed again' });
    await rolloutWhen(service, rollout.id, 'eu-1 recorded', (r) => r.clusters['eu-1']?.status === 'failed');
    await runs.driverPasses(2);
    assert.equal((await service.getRollout(rollout.id))?.state, 'running', 'the wave runs to its end');
    runs.end('eu-2', 'succeeded', { commit: '2'.repeat(40) });
    const done = await rolloutWhen(service, rollout.id, 'the rollout stopped', (r) => r.state !== 'running');
    assert.equal(done.state, 'failed');
    assert.deepEqual(done.failure, { wave: 0, failed: ['eu-1'], notStarted: ['eu-3'] });
    assert.match(done.clusters['eu-1']?.message ?? '', /would be sealed again/);
    assert.deepEqual(runs.startedFor(), ['eu-1', 'eu-2']);
    await service.idle();
  });

  it('a wave larger than the limit of active runs starts the rest as runs end, never more at once', async () => {
    const runs = new RunsDouble();
    const names = ['eu-1', 'eu-2', 'eu-3', 'eu-4', 'eu-5'];
    const service = serviceWith(fleetOf(names), runs, 2);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 5, requestedBy: 'alice' });
    const active = () => [...runs.runs.values()].filter((r) => r.status === 'pending').map((r) => r.cluster.name);
    await rolloutWhen(service, rollout.id, 'two runs', (r) => r.clusters['eu-2']?.run !== undefined);
    // Two runs followed: two reads a pass.
    await runs.driverPasses(4);
    assert.deepEqual(active(), ['eu-1', 'eu-2']);
    for (const [ending, next] of [
      ['eu-1', 'eu-3'],
      ['eu-2', 'eu-4'],
      ['eu-3', 'eu-5'],
    ] as const) {
      runs.end(ending, 'succeeded', { commit: '1'.repeat(40) });
      await rolloutWhen(service, rollout.id, `${next} started`, (r) => r.clusters[next]?.run !== undefined);
      assert.ok(active().length <= 2, active().join(', '));
    }
    runs.end('eu-4', 'succeeded');
    runs.end('eu-5', 'succeeded');
    const done = await rolloutWhen(service, rollout.id, 'the rollout finished', (r) => r.state !== 'running');
    assert.equal(done.state, 'succeeded');
    assert.deepEqual(runs.startedFor(), names);
    await service.idle();
  });

  it('a pushed rollout hands each run a batch of the wave, and records every cluster with its own outcome', async () => {
    const runs = new RunsDouble();
    const service = serviceWith(fleetOf(['eu-1', 'eu-2', 'eu-3', 'eu-4', 'eu-5']), runs, 2, 2);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 5, requestedBy: 'alice' });
    await rolloutWhen(service, rollout.id, 'two batch runs', (r) => r.clusters['eu-4']?.run !== undefined);
    await runs.driverPasses(4);
    assert.deepEqual(
      runs.started.map((r) => [r.cluster.name, ...(r.batch ?? [])]),
      [
        ['eu-1', 'eu-2'],
        ['eu-3', 'eu-4'],
      ],
      'two runs at most, two clusters each',
    );
    assert.equal((await service.getRollout(rollout.id))?.clusters['eu-2']?.run, 'run-1');

    runs.endBatch('run-1', 'succeeded', {
      message: 'upgraded 1 of 2',
      commits: [{ pass: 'upgrade', sha: '1'.repeat(40), cluster: 'eu-1' }],
      batchOutcomes: { 'eu-1': { status: 'upgraded', changes: { added: 0, modified: 2, removed: 0 } }, 'eu-2': { status: 'up_to_date' } },
    });
    await rolloutWhen(service, rollout.id, 'eu-5 started', (r) => r.clusters['eu-5']?.run !== undefined);
    assert.equal(runs.started[2]?.batch, undefined, 'the last cluster alone: no batch');
    // eu-3 landed before eu-4 failed verify: eu-3 is upgraded whatever its batch came to.
    runs.endBatch('run-2', 'failed', {
      message: 'step 3 (push-upgrade) failed: 2 verification finding(s)',
      commits: [{ pass: 'upgrade', sha: '3'.repeat(40), cluster: 'eu-3' }],
      batchOutcomes: { 'eu-3': { status: 'upgraded' }, 'eu-4': { status: 'failed', message: '2 verification finding(s): …' } },
    });
    runs.end('eu-5', 'succeeded');
    const done = await rolloutWhen(service, rollout.id, 'the rollout ended', (r) => r.state !== 'running');
    assert.equal(done.state, 'failed');
    assert.deepEqual(done.failure?.failed, ['eu-4']);
    assert.deepEqual(done.clusters['eu-1'], {
      status: 'succeeded',
      run: 'run-1',
      outcome: 'upgraded',
      commit: '1'.repeat(40),
      added: 0,
      modified: 2,
      removed: 0,
    });
    assert.deepEqual(done.clusters['eu-2'], { status: 'succeeded', run: 'run-1', outcome: 'up_to_date' });
    assert.deepEqual(done.clusters['eu-3'], { status: 'succeeded', run: 'run-2', outcome: 'upgraded', commit: '3'.repeat(40) });
    assert.deepEqual(done.clusters['eu-4'], { status: 'failed', run: 'run-2', message: '2 verification finding(s): …' });
    await service.idle();
  });

  it('stops the wave on a batch cluster whose own outcome failed, even when its run reports success', async () => {
    // A mutation campaign let "the run succeeded" stand for every cluster of its batch and no test failed.
    const runs = new RunsDouble();
    const service = serviceWith(fleetOf(['eu-1', 'eu-2', 'eu-3']), runs, 2, 2);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 2, requestedBy: 'alice' });
    await rolloutWhen(service, rollout.id, 'the first batch run', (r) => r.clusters['eu-2']?.run !== undefined);
    runs.endBatch('run-1', 'succeeded', {
      message: 'upgraded 1 of 2',
      commits: [{ pass: 'upgrade', sha: '1'.repeat(40), cluster: 'eu-1' }],
      batchOutcomes: { 'eu-1': { status: 'upgraded' }, 'eu-2': { status: 'failed', message: 'its verify failed' } },
    });
    const done = await rolloutWhen(service, rollout.id, 'the rollout ended', (r) => r.state !== 'running');
    assert.equal(done.state, 'failed');
    assert.deepEqual(done.failure?.failed, ['eu-2']);
    assert.deepEqual(done.failure?.notStarted, ['eu-3']);
    assert.deepEqual(done.clusters['eu-2'], { status: 'failed', run: 'run-1', message: 'its verify failed' });
    assert.deepEqual(runs.startedFor(), ['eu-1'], 'the next wave never started');
    await service.idle();
  });

  it('a rollout through pull requests runs one cluster a run, each with its own request, whatever the batch size', async () => {
    const runs = new RunsDouble();
    const service = serviceWith(fleetOf(['eu-1', 'eu-2']), runs, undefined, 16);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 2, requestedBy: 'alice', delivery: { mode: 'pull_request', forge: 'github' } });
    await rolloutWhen(service, rollout.id, 'both runs', (r) => r.clusters['eu-2']?.run !== undefined);
    assert.deepEqual(
      runs.started.map((r) => [r.cluster.name, r.batch]),
      [
        ['eu-1', undefined],
        ['eu-2', undefined],
      ],
    );
    await service.cancel(rollout.id, { identity: 'alice' });
  });

  it('an operator cancelling the wave’s run stops the rollout like a failure', async () => {
    const runs = new RunsDouble();
    const service = serviceWith(fleetOf(['eu-1', 'eu-2']), runs);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 1, requestedBy: 'alice' });
    await rolloutWhen(service, rollout.id, 'eu-1 running', (r) => r.clusters['eu-1']?.run !== undefined);
    runs.end('eu-1', 'cancelled', { message: 'cancelled by oidc:bob' });
    const done = await rolloutWhen(service, rollout.id, 'the rollout stopped', (r) => r.state !== 'running');
    assert.deepEqual([done.state, done.clusters['eu-1']?.status, done.clusters['eu-1']?.message], ['failed', 'cancelled', 'cancelled by oidc:bob']);
    assert.deepEqual(done.failure, { wave: 0, failed: ['eu-1'], notStarted: ['eu-2'] });
    assert.deepEqual(runs.startedFor(), ['eu-1']);
    await service.idle();
  });

  it('cancelling the rollout cancels the runs under way, starts no other, and records it cancelled; a run that already ended keeps its outcome', async () => {
    const runs = new RunsDouble();
    const service = serviceWith(fleetOf(['eu-1', 'eu-2', 'eu-3', 'eu-4']), runs);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 3, requestedBy: 'alice' });
    await rolloutWhen(service, rollout.id, 'wave 1 running', (r) => ['eu-1', 'eu-2', 'eu-3'].every((n) => r.clusters[n]?.run !== undefined));
    runs.end('eu-1', 'succeeded', { commit: '1'.repeat(40) });
    await rolloutWhen(service, rollout.id, 'eu-1 recorded', (r) => r.clusters['eu-1']?.status === 'succeeded');

    const cancelled = await service.cancel(rollout.id, { identity: 'oidc:bob' });
    assert.equal(cancelled.state, 'cancelled');
    assert.ok(cancelled.finishedAt instanceof Date);
    assert.equal(cancelled.failure, undefined, 'a cancel is no failure');
    assert.deepEqual(
      ['eu-1', 'eu-2', 'eu-3', 'eu-4'].map((n) => [n, cancelled.clusters[n]?.status, cancelled.clusters[n]?.message]),
      [
        ['eu-1', 'succeeded', undefined],
        ['eu-2', 'cancelled', 'cancelled by oidc:bob'],
        ['eu-3', 'cancelled', 'cancelled by oidc:bob'],
        ['eu-4', 'pending', undefined],
      ],
    );
    assert.deepEqual(
      [...runs.runs.values()].map((r) => [r.cluster.name, r.status]),
      [
        ['eu-1', 'succeeded'],
        ['eu-2', 'cancelled'],
        ['eu-3', 'cancelled'],
      ],
    );
    assert.deepEqual(await service.getRollout(rollout.id), cancelled, 'what the call answers is what is stored');
    await service.idle();
    assert.deepEqual(runs.startedFor(), ['eu-1', 'eu-2', 'eu-3'], 'wave 2 never started');
    await assert.rejects(service.cancel(rollout.id, { identity: 'oidc:bob' }), (e: Error) => e instanceof ConflictError && /already cancelled/.test(e.message));
    await assert.rejects(service.cancel('no-such-rollout', { identity: 'oidc:bob' }), NotFoundError);
  });

  /** A rollout over eu-1 and eu-2 in waves of one, eu-1's run under way, whose driver then stopped with its service. */
  const leftRunning = async () => {
    const runs = new RunsDouble();
    const fleet = fleetOf(['eu-1', 'eu-2']);
    const first = serviceWith(fleet, runs);
    const rollout = await first.start({ ...REPO, clusters: 'all', waveSize: 1, requestedBy: 'alice' });
    await rolloutWhen(first, rollout.id, 'eu-1 running', (r) => r.clusters['eu-1']?.run !== undefined);
    await first.stop();
    return { runs, fleet, first, rollout };
  };

  it('cancels a running rollout that no driver follows (a service stopping), in the call', async () => {
    const { runs, fleet, rollout } = await leftRunning();
    const cancelled = await serviceWith(fleet, runs).cancel(rollout.id, { identity: 'oidc:bob' });
    assert.deepEqual([cancelled.state, cancelled.clusters['eu-1']?.status, cancelled.clusters['eu-2']?.status], ['cancelled', 'cancelled', 'pending']);
    assert.deepEqual(runs.startedFor(), ['eu-1']);
  });

  it('a cluster whose run cannot start (another active run) fails its wave with the reason', async () => {
    const runs = new RunsDouble();
    runs.busy.add('eu-1');
    const service = serviceWith(fleetOf(['eu-1', 'eu-2']), runs);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 1, requestedBy: 'alice' });
    const done = await rolloutWhen(service, rollout.id, 'the rollout stopped', (r) => r.state !== 'running');
    assert.deepEqual(done.failure, { wave: 0, failed: ['eu-1'], notStarted: ['eu-2'] });
    assert.deepEqual(done.clusters['eu-1'], { status: 'failed', message: 'cluster eu-1 already has an active run' });
    assert.deepEqual(runs.startedFor(), []);
    await service.idle();
  });

  it('a store that does not answer for a while fails nothing: the driver asks again', async () => {
    const runs = new RunsDouble();
    let outage = 0;
    const flaky: RolloutRuns = {
      startFleetRun: (request, caller) => runs.startFleetRun(request, caller),
      checkFleetDelivery: () => undefined,
      cancel: (id, caller) => runs.cancel(id, caller),
      get: async (id) => {
        if (outage > 0) {
          outage--;
          throw new UnavailableError('the run store is unavailable');
        }
        return runs.get(id);
      },
    };
    const service = serviceWith(fleetOf(['eu-1']), flaky);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 1, requestedBy: 'alice' });
    await rolloutWhen(service, rollout.id, 'eu-1 running', (r) => r.clusters['eu-1']?.run !== undefined);
    outage = 5;
    runs.end('eu-1', 'succeeded', { commit: '1'.repeat(40) });
    const done = await rolloutWhen(service, rollout.id, 'the rollout finished', (r) => r.state !== 'running');
    assert.equal(done.state, 'succeeded');
    assert.equal(outage, 0, 'the outage was met');
    await service.idle();
  });

  it('stopped and resumed, a driver follows the runs it had started instead of starting them again', async () => {
    const { runs, fleet, first, rollout } = await leftRunning();
    assert.equal((await first.getRollout(rollout.id))?.state, 'running');

    const second = serviceWith(fleet, runs);
    assert.equal(await second.resume(), 1);
    runs.end('eu-1', 'succeeded', { commit: '1'.repeat(40) });
    await rolloutWhen(second, rollout.id, 'eu-2 running', (r) => r.clusters['eu-2']?.run !== undefined);
    runs.end('eu-2', 'succeeded', { commit: '2'.repeat(40) });
    const done = await rolloutWhen(second, rollout.id, 'the rollout finished', (r) => r.state !== 'running');
    assert.equal(done.state, 'succeeded');
    assert.deepEqual(runs.startedFor(), ['eu-1', 'eu-2'], 'eu-1 was not started twice');
    await second.stop();
  });

  it('a run that no longer exists fails its cluster and stops the rollout, instead of being waited for forever', async () => {
    const runs = new RunsDouble();
    const service = serviceWith(fleetOf(['eu-1', 'eu-2']), runs);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 1, requestedBy: 'alice' });
    await rolloutWhen(service, rollout.id, 'eu-1 running', (r) => r.clusters['eu-1']?.run !== undefined);
    runs.runs.delete('run-1');
    const done = await rolloutWhen(service, rollout.id, 'the rollout stopped', (r) => r.state !== 'running');
    assert.equal(done.state, 'failed');
    assert.deepEqual(done.failure, { wave: 0, failed: ['eu-1'], notStarted: ['eu-2'] });
    assert.deepEqual(done.clusters['eu-1'], { status: 'failed', run: 'run-1', message: 'its run run-1 no longer exists' });
    await service.idle();
  });

  it('cancelling a rollout whose run cannot be stopped records that cluster cancelled, saying its run could not be stopped and why', async () => {
    const runs = new RunsDouble();
    const stubborn: RolloutRuns = {
      startFleetRun: (request, caller) => runs.startFleetRun(request, caller),
      checkFleetDelivery: () => undefined,
      get: (id) => runs.get(id),
      cancel: () => Promise.reject(new UnavailableError('the Kubernetes API is unreachable')),
    };
    const service = serviceWith(fleetOf(['eu-1']), stubborn);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 1, requestedBy: 'alice' });
    await rolloutWhen(service, rollout.id, 'eu-1 running', (r) => r.clusters['eu-1']?.run !== undefined);
    const cancelled = await service.cancel(rollout.id, { identity: 'oidc:bob' });
    assert.equal(cancelled.state, 'cancelled');
    assert.deepEqual(cancelled.clusters['eu-1'], {
      status: 'cancelled',
      run: 'run-1',
      message: 'the rollout was cancelled by oidc:bob; its run could not be stopped: the Kubernetes API is unreachable',
    });
    await service.idle();
  });

  it('refuses a rollout its runs could not deliver before recording it or starting any run', async () => {
    const runs = new RunsDouble();
    const refusing: RolloutRuns = {
      startFleetRun: (request, caller) => runs.startFleetRun(request, caller),
      get: (id) => runs.get(id),
      cancel: (id, caller) => runs.cancel(id, caller),
      checkFleetDelivery: () => {
        throw new UnavailableError('this service has no forge credentials');
      },
    };
    const id = `refused-${Date.now()}`;
    const service = new RolloutService({ store, fleet: fleetOf(['eu-1']), runs: refusing, pollMs: 10, newId: () => id });
    await assert.rejects(
      service.start({ ...REPO, clusters: 'all', waveSize: 1, requestedBy: 'alice', delivery: { mode: 'pull_request', forge: 'github' } }),
      UnavailableError,
    );
    await service.idle();
    assert.equal(await service.getRollout(id), undefined);
    assert.deepEqual(runs.startedFor(), []);
  });

  it(`refuses a rollout of more than ${MAX_ROLLOUT_CLUSTERS} clusters: its record is written whole after each change`, async () => {
    const runs = new RunsDouble();
    const names = Array.from({ length: MAX_ROLLOUT_CLUSTERS + 1 }, (_, i) => `c-${i}`);
    const service = serviceWith(fleetOf(names), runs);
    await assert.rejects(
      service.start({ ...REPO, clusters: 'all', waveSize: 100, requestedBy: 'alice' }),
      (error: unknown) => error instanceof ValidationError && error.issues.some((issue) => issue.field === 'clusters' && /at most 5000/.test(issue.message)),
    );
    assert.deepEqual(await service.targets({ ...REPO, clusters: names.slice(0, MAX_ROLLOUT_CLUSTERS) }), names.slice(0, MAX_ROLLOUT_CLUSTERS));
    assert.deepEqual(runs.startedFor(), []);
  });

  it('fails a cluster removed from the repository since the rollout began, saying so, and starts no run for it', async () => {
    const runs = new RunsDouble();
    const fleet = fleetOf(['eu-1', 'eu-2']);
    const service = serviceWith(fleet, runs);
    const rollout = await service.start({ ...REPO, clusters: 'all', waveSize: 1, requestedBy: 'alice' });
    await rolloutWhen(service, rollout.id, 'eu-1 running', (r) => r.clusters['eu-1']?.run !== undefined);
    fleet.clusters.splice(
      fleet.clusters.findIndex((c) => c.name === 'eu-2'),
      1,
    );
    runs.end('eu-1', 'succeeded', { commit: '1'.repeat(40) });
    const done = await rolloutWhen(service, rollout.id, 'the rollout stopped', (r) => r.state !== 'running');
    assert.deepEqual(done.failure, { wave: 1, failed: ['eu-2'], notStarted: [] });
    assert.deepEqual(done.clusters['eu-2'], { status: 'failed', message: 'clusters/eu-2 is no longer a generated cluster of the repository' });
    assert.deepEqual(runs.startedFor(), ['eu-1']);
    await service.idle();
  });
});

describe('batchesOf', () => {
  const named = (count: number, length: number) => Array.from({ length: count }, (_, i) => `c${String(i).padStart(2, '0')}`.padEnd(length, 'x'));

  it('fills runs up to the batch size in order, and cuts a run short where one more name would not let its result fit', () => {
    const short = named(40, 10);
    assert.deepEqual(
      batchesOf(short, 16).map((b) => b.length),
      [16, 16, 8],
    );
    assert.deepEqual(batchesOf(short, 16).flat(), short);
    // 27 names of 10 characters fit a result, 28 do not (batch-issues.ts).
    assert.deepEqual(
      batchesOf(short, MAX_BATCH_CLUSTERS).map((b) => b.length),
      [27, 13],
    );
    assert.deepEqual(
      batchesOf(named(20, 63), MAX_BATCH_CLUSTERS).map((b) => b.length),
      [15, 5],
    );
    assert.deepEqual(batchesOf(named(3, 5), 1), [[named(3, 5)[0]], [named(3, 5)[1]], [named(3, 5)[2]]]);
    for (const batch of batchesOf(named(100, 40), MAX_BATCH_CLUSTERS)) assert.ok(batchResultFits(batch));
  });
});
