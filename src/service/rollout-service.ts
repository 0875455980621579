/**
 * Upgrade rollouts (`POST /api/v1/upgrades`): the chosen clusters are cut into
 * waves ({@link planWaves}) and a driver advances them with
 * {@link nextRolloutStep}: a wave starts only when every upgrade of the
 * previous one succeeded; a failure stops the rollout and the record says
 * which cluster failed, why, and which never started.
 *
 * A cluster's upgrade is part of a run (action `upgrade`): a runner process,
 * a Kubernetes Job in production, listed, logged, cancelled and retried like
 * a scaffold. A pushed rollout hands each run a batch of up to
 * {@link RolloutServiceDeps.batchSize} clusters of the wave: one clone, one
 * process start, one build cache and one push for all of them, and still one
 * commit per cluster, each verified on its own (runner/upgrade-batch.ts). A rollout delivered through pull/merge requests
 * runs one cluster a run, each through its own request that must be merged
 * before the run, and so its wave, succeeds. The rollout record names each
 * cluster's run and keeps its own outcome (its commit, "up to date", or the
 * failure), read from the run's per-cluster outcomes.
 */
import { randomUUID } from 'node:crypto';
import type { DeliverySettings } from '../run/delivery.js';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { upgradeTargets } from '../fleet/plan-upgrade.js';
import { registeredClusterSpec } from '../fleet/registered-cluster-spec.js';
import { nextRolloutStep, planWaves } from '../fleet/rollout-waves.js';
import { interruptibleSleep } from '../interruptible-sleep.js';
import { silentLogger, type Logger } from '../logger.js';
import type { ClusterSpec } from '../model/cluster-spec.js';
import type { Caller } from './authenticator.js';
import type { FleetSource, FleetUpgrade } from './fleet-source.js';
import type { Rollout, RolloutCluster, RolloutStore } from './rollout-store.js';
import { isFinal, MAX_BATCH_CLUSTERS, type RunRecord } from '../run/run-record.js';
import { batchResultFits } from '../run/batch-issues.js';
import type { FleetRunRequest } from './run-service.js';

/** How a rollout starts and follows its runs: the RunService. */
export interface RolloutRuns {
  startFleetRun(request: FleetRunRequest, caller: Caller): Promise<RunRecord>;
  /** @throws NotFoundError */
  get(id: string): Promise<RunRecord>;
  /** @throws NotFoundError; ConflictError when the run is already final */
  cancel(id: string, caller: Caller): Promise<RunRecord>;
  /** @throws ValidationError / UnavailableError when a fleet run could not deliver as `settings` ask */
  checkFleetDelivery(settings: DeliverySettings | undefined, repositoryUrl: string): void;
}

/** Collaborators of {@link RolloutService}. */
export interface RolloutServiceDeps {
  readonly store: RolloutStore;
  readonly fleet: FleetSource;
  readonly runs: RolloutRuns;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** @default randomUUID */
  readonly newId?: () => string;
  /** How often a wave's runs are looked at. @default 1000 */
  readonly pollMs?: number;
  /** At most this many upgrade runs active at once; a larger wave starts the rest as runs end. @default 20 */
  readonly maxActiveRuns?: number;
  /** Clusters one upgrade run upgrades in a pushed rollout (1: a run per cluster). @default {@link DEFAULT_BATCH_SIZE} */
  readonly batchSize?: number;
  /** Told of each upgrade run started (the runs-created metric). */
  readonly onRunStarted?: (run: RunRecord) => void;
}

/** What a caller asks for. */
export interface UpgradeRequest {
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly clusters: readonly string[] | 'all';
  readonly waveSize: number;
  readonly requestedBy: string;
  /** Absent: each run pushes. */
  readonly delivery?: DeliverySettings;
}

/** Runs of one rollout active at once, unless configured: enough to keep runners busy, few enough not to flood the cluster with Jobs. */
export const DEFAULT_MAX_ACTIVE_RUNS = 20;

/** Clusters a run of a pushed rollout upgrades, unless configured: as many as a run's result can report. */
export const DEFAULT_BATCH_SIZE = MAX_BATCH_CLUSTERS;

/** At most this many clusters in one rollout: the record is written whole after each change. */
export const MAX_ROLLOUT_CLUSTERS = 5000;

/** Starts, drives and reads rollouts. */
export class RolloutService {
  readonly #store: RolloutStore;
  readonly #fleet: FleetSource;
  readonly #runs: RolloutRuns;
  readonly #logger: Logger;
  readonly #newId: () => string;
  readonly #pollMs: number;
  readonly #maxActiveRuns: number;
  readonly #batchSize: number;
  readonly #onRunStarted: ((run: RunRecord) => void) | undefined;
  /** The driver of each rollout this process drives (one at most: two would start its runs twice). */
  readonly #drivers = new Map<string, Promise<void>>();
  /** Rollouts an operator asked to cancel, with who asked; their drivers act on it. */
  readonly #cancelling = new Map<string, Caller>();
  /** Aborted by {@link stop}: ends the wait for a wave's runs, which may last days (a request awaiting review). */
  readonly #stopping = new AbortController();

  constructor(deps: RolloutServiceDeps) {
    this.#store = deps.store;
    this.#fleet = deps.fleet;
    this.#runs = deps.runs;
    this.#logger = deps.logger ?? silentLogger;
    this.#newId = deps.newId ?? randomUUID;
    this.#pollMs = deps.pollMs ?? 1000;
    this.#maxActiveRuns = Math.max(1, deps.maxActiveRuns ?? DEFAULT_MAX_ACTIVE_RUNS);
    this.#batchSize = Math.min(MAX_BATCH_CLUSTERS, Math.max(1, Math.floor(deps.batchSize ?? DEFAULT_BATCH_SIZE)));
    this.#onRunStarted = deps.onRunStarted;
  }

  /**
   * The clusters a request covers: every generated cluster for `all`, else the named ones, each of which must be generated.
   * @throws NotFoundError / ValidationError for a named cluster that is missing, the reference or unmanaged
   */
  async targets(request: Pick<UpgradeRequest, 'repositoryUrl' | 'branch' | 'clusters'>, signal?: AbortSignal): Promise<string[]> {
    const fleet = await this.#fleet.fleet({ repositoryUrl: request.repositoryUrl, branch: request.branch, ...(signal ? { signal } : {}) });
    const names = upgradeTargets(fleet.clusters, request.clusters === 'all' ? undefined : request.clusters).map((c) => c.name);
    if (names.length === 0) throw new ValidationError([{ field: 'clusters', message: 'the repository has no generated cluster to upgrade' }]);
    if (names.length > MAX_ROLLOUT_CLUSTERS)
      throw new ValidationError([{ field: 'clusters', message: `at most ${MAX_ROLLOUT_CLUSTERS} clusters per rollout` }]);
    return names;
  }

  /** What each cluster would change; nothing is written or recorded. */
  async preview(request: Omit<UpgradeRequest, 'waveSize'>, signal?: AbortSignal): Promise<FleetUpgrade[]> {
    const clusters = await this.targets(request, signal);
    return this.#fleet.previewUpgrade({ repositoryUrl: request.repositoryUrl, branch: request.branch, clusters, ...(signal ? { signal } : {}) });
  }

  /**
   * Records the rollout and drives it in the background; the returned record shows it before its first wave.
   * @throws ValidationError / UnavailableError when its runs could not deliver as `delivery` asks
   */
  async start(request: UpgradeRequest): Promise<Rollout> {
    this.#runs.checkFleetDelivery(request.delivery, request.repositoryUrl);
    const waves = planWaves(await this.targets(request), request.waveSize);
    const clusters: Record<string, RolloutCluster> = {};
    for (const name of waves.flat()) clusters[name] = { status: 'pending' };
    const rollout: Rollout = {
      id: this.#newId(),
      repositoryUrl: request.repositoryUrl,
      branch: request.branch,
      requestedBy: request.requestedBy,
      waveSize: request.waveSize,
      waves,
      clusters,
      state: 'running',
      ...(request.delivery !== undefined ? { delivery: request.delivery } : {}),
      createdAt: new Date(),
    };
    await this.#store.createRollout(rollout);
    this.#logger.info({ rollout: rollout.id, clusters: waves.flat().length, waves: waves.length, requestedBy: request.requestedBy }, 'rollout started');
    this.#launch(rollout);
    return rollout;
  }

  /**
   * Drives again the rollouts a stopped service left `running` (the service is
   * their one writer). The runs of the wave under way went on without it (the
   * run monitor follows them); the rollout follows them again, and starts the
   * ones its clusters never got.
   */
  async resume(): Promise<number> {
    const running = await this.#store.runningRollouts();
    for (const rollout of running) {
      this.#logger.info({ rollout: rollout.id }, 'rollout resumed');
      this.#launch(rollout);
    }
    return running.length;
  }

  getRollout(id: string): Promise<Rollout | undefined> {
    return this.#store.getRollout(id);
  }

  /** The newest rollouts, newest first (a running one to follow or cancel, a finished one to read). */
  listRollouts(options: { readonly limit: number; readonly state?: Rollout['state'] }): Promise<Rollout[]> {
    return this.#store.listRollouts(options);
  }

  /**
   * Cancels a running rollout: no further run starts, the runs under way are
   * cancelled (each says by whom), and the rollout is recorded `cancelled`.
   * Resolves once its driver has done so (within a poll interval).
   * @throws NotFoundError; ConflictError when the rollout has already ended
   */
  async cancel(id: string, caller: Caller): Promise<Rollout> {
    const rollout = await this.#store.getRollout(id);
    if (rollout === undefined) throw new NotFoundError(`upgrade rollout ${id} does not exist`);
    if (rollout.state !== 'running') throw new ConflictError(`upgrade rollout ${id} is already ${rollout.state}`);
    this.#logger.info({ rollout: id, by: caller.identity }, 'rollout cancel requested');
    const driver = this.#drivers.get(id);
    if (driver === undefined) {
      // No driver here (it failed, or the service is stopping): cancel it in this call.
      await this.#finishCancelled(rollout, caller);
    } else {
      if (!this.#cancelling.has(id)) this.#cancelling.set(id, caller);
      await driver;
    }
    return (await this.#store.getRollout(id)) ?? rollout;
  }

  /** Resolves when no rollout is being driven (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.#drivers.size > 0) await Promise.all([...this.#drivers.values()]);
  }

  /** Shutdown: the drivers stop following their runs, which go on; the rollouts stay `running` for {@link resume}. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.idle();
  }

  #launch(rollout: Rollout): void {
    if (this.#drivers.has(rollout.id)) return;
    const driving = this.#drive(rollout).catch((error: unknown) => this.#logger.error({ rollout: rollout.id, err: error }, 'rollout driver failed'));
    this.#drivers.set(rollout.id, driving);
    void driving.finally(() => {
      this.#drivers.delete(rollout.id);
      this.#cancelling.delete(rollout.id);
    });
  }

  async #drive(initial: Rollout): Promise<void> {
    let rollout = initial;
    while (!this.#stopping.signal.aborted) {
      const cancelledBy = this.#cancelling.get(rollout.id);
      if (cancelledBy !== undefined) {
        await this.#finishCancelled(rollout, cancelledBy);
        return;
      }
      const statuses = Object.fromEntries(Object.entries(rollout.clusters).flatMap(([name, c]) => (c.status === 'pending' ? [] : [[name, c.status] as const])));
      const step = nextRolloutStep(rollout.waves, statuses);
      if (step.kind === 'done' || step.kind === 'stopped') {
        const failure = step.kind === 'stopped' ? { wave: step.wave, failed: step.failed, notStarted: step.notStarted } : undefined;
        rollout = { ...rollout, state: failure === undefined ? 'succeeded' : 'failed', ...(failure !== undefined ? { failure } : {}), finishedAt: new Date() };
        await this.#store.saveRollout(rollout);
        this.#logger.info(
          { rollout: rollout.id, state: rollout.state, ...(failure !== undefined ? { stoppedAt: failure.wave, failed: failure.failed } : {}) },
          'rollout finished',
        );
        return;
      }
      // A wave found waiting (after a resume) follows the runs it has and starts those it never got.
      const clusters = step.kind === 'start' ? step.clusters : step.waitingFor;
      rollout = await this.#runWave(rollout, clusters);
    }
  }

  /**
   * Runs a wave's clusters, at most {@link RolloutServiceDeps.maxActiveRuns}
   * runs at once (a wave of 1,000 is not 1,000 Jobs at once), starting the
   * rest as those end, and records each outcome as it comes. Returns once every
   * cluster of the wave has one, or when the service stops.
   */
  async #runWave(initial: Rollout, clusters: readonly string[]): Promise<Rollout> {
    let rollout = initial;
    while (!this.#stopping.signal.aborted && !this.#cancelling.has(rollout.id)) {
      rollout = await this.#save(rollout, await this.#startRuns(rollout, clusters));
      const following = runningOf(rollout, clusters);
      if (following.length === 0) return rollout;
      const ended = await this.#ended(rollout, following);
      if (Object.keys(ended).length > 0) rollout = await this.#save(rollout, ended);
      else await interruptibleSleep(this.#pollMs, this.#stopping.signal);
    }
    return rollout;
  }

  /**
   * Starts upgrade runs for the clusters of `clusters` that have none yet, as
   * many runs as the limit of active runs leaves room for, each with a batch
   * of clusters (one cluster when the rollout's requests are reviewed); a
   * cluster whose run cannot start fails with the reason (e.g. another active run: 409).
   */
  async #startRuns(rollout: Rollout, clusters: readonly string[]): Promise<Record<string, RolloutCluster>> {
    const waiting = clusters.filter((name) => {
      const cluster = rollout.clusters[name];
      return cluster?.run === undefined && (cluster?.status === 'pending' || cluster?.status === 'running');
    });
    const active = new Set(runningOf(rollout, clusters).map((name) => rollout.clusters[name]!.run)).size;
    const perRun = rollout.delivery === undefined || rollout.delivery.mode === 'push' ? this.#batchSize : 1;
    const room = Math.max(0, this.#maxActiveRuns - active);
    const unstarted = waiting.slice(0, room * perRun);
    if (unstarted.length === 0) return {};
    let specs: Map<string, ClusterSpec>;
    try {
      specs = await this.#registeredSpecs(rollout);
    } catch (error) {
      const message = error instanceof AppError ? error.message : 'the repository could not be read';
      if (!(error instanceof AppError)) this.#logger.error({ rollout: rollout.id, err: error }, 'wave could not start');
      return Object.fromEntries(unstarted.map((name) => [name, { status: 'failed', message } satisfies RolloutCluster]));
    }
    const started: Record<string, RolloutCluster> = {};
    const generated: string[] = [];
    for (const name of unstarted) {
      if (specs.has(name)) generated.push(name);
      else started[name] = { status: 'failed', message: `clusters/${name} is no longer a generated cluster of the repository` };
    }
    // Batches cut short by long names leave clusters for the next round rather than exceed the active runs.
    for (const names of batchesOf(generated, perRun).slice(0, room)) {
      const [first, ...batch] = names as [string, ...string[]];
      try {
        const run = await this.#runs.startFleetRun(
          {
            action: 'upgrade',
            cluster: specs.get(first)!,
            repositoryUrl: rollout.repositoryUrl,
            branch: rollout.branch,
            ...(rollout.delivery !== undefined ? { delivery: rollout.delivery } : {}),
            ...(batch.length > 0 ? { batch } : {}),
          },
          { identity: rollout.requestedBy },
        );
        for (const name of names) started[name] = { status: 'running', run: run.id };
        this.#onRunStarted?.(run);
        this.#logger.info({ rollout: rollout.id, cluster: first, clusters: names.length, run: run.id }, 'upgrade run started');
      } catch (error) {
        const message = error instanceof AppError ? error.message : 'the upgrade run could not be started';
        for (const name of names) started[name] = { status: 'failed', message };
        if (!(error instanceof AppError)) this.#logger.error({ rollout: rollout.id, cluster: first, err: error }, 'upgrade run could not be started');
      }
    }
    return started;
  }

  /**
   * Cancels the rollout's runs under way and records it `cancelled`: each
   * cancelled cluster keeps its run and that run's outcome (a run that ended
   * before its cancel keeps its own); clusters never started stay `pending`.
   */
  async #finishCancelled(rollout: Rollout, caller: Caller): Promise<void> {
    const under = Object.entries(rollout.clusters).flatMap(([name, c]) => (c.status === 'running' && c.run !== undefined ? [name] : []));
    const stopped: Record<string, RolloutCluster> = {};
    // A batch run is cancelled once, for all of its clusters.
    for (const id of new Set(under.map((name) => rollout.clusters[name]!.run!))) {
      try {
        await this.#runs.cancel(id, caller);
      } catch (error) {
        // Already final (ConflictError): its own outcome is read below.
        if (!(error instanceof ConflictError)) {
          this.#logger.warn({ rollout: rollout.id, run: id, err: error }, 'upgrade run could not be cancelled');
          for (const name of under.filter((n) => rollout.clusters[n]!.run === id)) {
            stopped[name] = {
              status: 'cancelled',
              run: id,
              message: `the rollout was cancelled by ${caller.identity}; its run could not be stopped: ${error instanceof AppError ? error.message : 'an internal error'}`,
            };
          }
        }
      }
    }
    const ended = await this.#ended(
      rollout,
      under.filter((name) => stopped[name] === undefined),
    );
    const cancelled: Rollout = { ...rollout, clusters: { ...rollout.clusters, ...ended, ...stopped }, state: 'cancelled', finishedAt: new Date() };
    await this.#store.saveRollout(cancelled);
    this.#logger.info({ rollout: rollout.id, state: 'cancelled', by: caller.identity, runsCancelled: under.length }, 'rollout cancelled');
  }

  /** The generated clusters of the rollout's branch, as their provenance records them now. */
  async #registeredSpecs(rollout: Rollout): Promise<Map<string, ClusterSpec>> {
    const fleet = await this.#fleet.fleet({ repositoryUrl: rollout.repositoryUrl, branch: rollout.branch, signal: this.#stopping.signal });
    return new Map(fleet.clusters.filter((c) => c.kind === 'generated').map((c) => [c.name, registeredClusterSpec(c)]));
  }

  /** The outcomes of the runs of `following` that have ended. */
  async #ended(rollout: Rollout, following: readonly string[]): Promise<Record<string, RolloutCluster>> {
    const ended: Record<string, RolloutCluster> = {};
    // A batch run is read once for all of its clusters.
    const runs = new Map<string, RunRecord | undefined>();
    for (const name of following) {
      const id = rollout.clusters[name]!.run!;
      if (!runs.has(id)) {
        try {
          runs.set(id, await this.#runs.get(id));
        } catch (error) {
          // A run that is gone (never expected: runs are kept) cannot succeed; a store that did not answer is asked again next time.
          this.#logger.warn({ rollout: rollout.id, run: id, err: error }, 'upgrade run could not be read');
          runs.set(id, undefined);
          if (error instanceof NotFoundError) {
            for (const lost of following.filter((n) => rollout.clusters[n]!.run === id))
              ended[lost] = { status: 'failed', run: id, message: `its run ${id} no longer exists` };
          }
        }
      }
      const run = runs.get(id);
      if (run !== undefined && isFinal(run.status)) ended[name] = clusterOutcome(run, name);
    }
    return ended;
  }

  async #save(rollout: Rollout, changed: Record<string, RolloutCluster>): Promise<Rollout> {
    if (Object.keys(changed).length === 0) return rollout;
    const next = { ...rollout, clusters: { ...rollout.clusters, ...changed } };
    await this.#store.saveRollout(next);
    return next;
  }
}

/** The clusters of `clusters` whose upgrade run is under way. */
function runningOf(rollout: Rollout, clusters: readonly string[]): string[] {
  return clusters.filter((name) => rollout.clusters[name]?.status === 'running' && rollout.clusters[name]?.run !== undefined);
}

/**
 * A cluster's outcome from its ended upgrade run. In a batch, a cluster whose
 * commit landed is upgraded whatever became of the clusters after it, and one
 * that was up to date stays so; the others share the run's end.
 */
function clusterOutcome(run: RunRecord, name: string): RolloutCluster {
  if (run.batch === undefined) return singleOutcome(run);
  const own = run.batchOutcomes?.[name];
  const counts = own?.changes === undefined ? {} : { added: own.changes.added, modified: own.changes.modified, removed: own.changes.removed };
  const commit = run.commits.find((c) => c.pass === 'upgrade' && (c.cluster ?? run.cluster.name) === name)?.sha;
  if (commit !== undefined) return { status: 'succeeded', run: run.id, outcome: 'upgraded', commit, ...counts };
  if (own?.status === 'up_to_date' || (run.status === 'succeeded' && own?.status !== 'failed'))
    return { status: 'succeeded', run: run.id, outcome: 'up_to_date', ...counts };
  return { status: run.status === 'cancelled' ? 'cancelled' : 'failed', run: run.id, message: own?.message ?? run.message };
}

/** The outcome of a run about one cluster. */
function singleOutcome(run: RunRecord): RolloutCluster {
  const counts = run.changes === undefined ? {} : { added: run.changes.added, modified: run.changes.modified, removed: run.changes.removed };
  if (run.status !== 'succeeded') return { status: run.status === 'cancelled' ? 'cancelled' : 'failed', run: run.id, message: run.message, ...counts };
  const commit = run.commits.find((c) => c.pass === 'upgrade')?.sha;
  if (commit === undefined) return { status: 'succeeded', run: run.id, outcome: 'up_to_date', ...counts };
  return { status: 'succeeded', run: run.id, outcome: 'upgraded', commit, ...counts };
}

/**
 * `names` in order, cut into runs of at most `perRun` clusters each, a run
 * ending early when one more name would make its result too long to report
 * (batch-issues.ts): short names fill a run, 63-character ones half of one.
 */
export function batchesOf(names: readonly string[], perRun: number): string[][] {
  const batches: string[][] = [];
  let current: string[] = [];
  for (const name of names) {
    if (current.length > 0 && (current.length >= perRun || !batchResultFits([...current, name]))) {
      batches.push(current);
      current = [];
    }
    current.push(name);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
