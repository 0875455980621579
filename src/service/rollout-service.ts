/**
 * Upgrade rollouts (`POST /api/v1/upgrades`): the chosen clusters are cut into
 * waves ({@link planWaves}) and a driver advances them with
 * {@link nextRolloutStep}: a wave starts only when every upgrade of the
 * previous one succeeded; a failure stops the rollout and the record says
 * which cluster failed, why, and which never started.
 *
 * One cluster's upgrade is one commit written by the service through the same
 * git edge as a removal (FleetSource), not a runner Job: a wave is one clone,
 * its clusters upgraded and committed one by one, then delivered as the
 * request's `delivery` says: one push, or one pull/merge request per wave that
 * must be merged before the next wave starts (a request closed unmerged fails
 * the wave). The rollout record keeps each cluster's outcome (its commit, "up
 * to date", or the failure) and each wave's request.
 */
import { randomUUID } from 'node:crypto';
import type { DeliverySettings, ReviewRequestRef } from '../delivery/delivery.js';
import { AppError, ValidationError } from '../errors.js';
import { upgradeTargets } from '../fleet/plan-upgrade.js';
import { nextRolloutStep, planWaves, type WaveRunStatus } from '../fleet/rollout-waves.js';
import { silentLogger, type Logger } from '../logger.js';
import type { FleetSource, FleetTarget, FleetUpgrade } from './fleet-source.js';
import type { Rollout, RolloutCluster, RolloutStore } from './rollout-store.js';

/** A wave's delivery: the rollout's settings, which wave it is, and who hears about its request. */
type FleetWaveDelivery = NonNullable<Parameters<FleetSource['upgrade']>[0]['delivery']>;

/** Collaborators of {@link RolloutService}. */
export interface RolloutServiceDeps {
  readonly store: RolloutStore;
  readonly fleet: FleetSource;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** @default randomUUID */
  readonly newId?: () => string;
}

/** What a caller asks for. */
export interface UpgradeRequest {
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly clusters: readonly string[] | 'all';
  readonly waveSize: number;
  readonly requestedBy: string;
  /** Absent: one push per wave. */
  readonly delivery?: DeliverySettings;
}

/** At most this many clusters in one rollout: the record is written whole after each wave. */
export const MAX_ROLLOUT_CLUSTERS = 5000;

/** Starts, drives and reads rollouts. */
export class RolloutService {
  readonly #store: RolloutStore;
  readonly #fleet: FleetSource;
  readonly #logger: Logger;
  readonly #newId: () => string;
  readonly #driving = new Set<Promise<void>>();
  /** Aborted by {@link stop}: ends waits for a wave's request, which may last days. */
  readonly #stopping = new AbortController();

  constructor(deps: RolloutServiceDeps) {
    this.#store = deps.store;
    this.#fleet = deps.fleet;
    this.#logger = deps.logger ?? silentLogger;
    this.#newId = deps.newId ?? randomUUID;
  }

  /**
   * The clusters a request covers: every generated cluster for `all`, else the named ones, each of which must be generated.
   * @throws NotFoundError / ValidationError for a named cluster that is missing, the reference or unmanaged
   */
  async targets(request: Pick<UpgradeRequest, 'repositoryUrl' | 'branch' | 'clusters'>, signal?: AbortSignal): Promise<string[]> {
    const fleet = await this.#fleet.fleet({ repositoryUrl: request.repositoryUrl, branch: request.branch, ...(signal ? { signal } : {}) });
    const names = upgradeTargets(fleet.clusters, request.clusters === 'all' ? undefined : request.clusters).map((c) => c.name);
    if (names.length === 0) throw new ValidationError([{ field: 'clusters', message: 'the repository has no generated cluster to upgrade' }]);
    if (names.length > MAX_ROLLOUT_CLUSTERS) throw new ValidationError([{ field: 'clusters', message: `at most ${MAX_ROLLOUT_CLUSTERS} clusters per rollout` }]);
    return names;
  }

  /** What each cluster would change; nothing is written or recorded. */
  async preview(request: Omit<UpgradeRequest, 'waveSize'>, signal?: AbortSignal): Promise<FleetUpgrade[]> {
    const clusters = await this.targets(request, signal);
    return this.#fleet.upgrade({ repositoryUrl: request.repositoryUrl, branch: request.branch, clusters, dryRun: true, requestedBy: request.requestedBy, ...(signal ? { signal } : {}) });
  }

  /** Records the rollout and drives it in the background; the returned record shows it before its first wave. */
  async start(request: UpgradeRequest): Promise<Rollout> {
    this.#fleet.checkDelivery(request.delivery, request.repositoryUrl);
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
   * their one writer). The clusters of the wave under way are upgraded again:
   * one whose commit was pushed before the stop is then up to date (no second commit).
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

  /** Resolves when no rollout is being driven (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.#driving.size > 0) await Promise.all([...this.#driving]);
  }

  /**
   * Shutdown: a pushed wave under way finishes; a wave waiting for its request
   * stops waiting and stays `running`, so {@link resume} reuses the open request.
   */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.idle();
  }

  #launch(rollout: Rollout): void {
    const driving = this.#drive(rollout).catch((error: unknown) => this.#logger.error({ rollout: rollout.id, err: error }, 'rollout driver failed'));
    this.#driving.add(driving);
    void driving.finally(() => this.#driving.delete(driving));
  }

  async #drive(initial: Rollout): Promise<void> {
    let rollout = initial;
    const target: FleetTarget = { repositoryUrl: rollout.repositoryUrl, branch: rollout.branch };
    for (;;) {
      const statuses: Record<string, WaveRunStatus> = {};
      for (const [name, cluster] of Object.entries(rollout.clusters)) if (cluster.status !== 'pending') statuses[name] = cluster.status;
      const step = nextRolloutStep(rollout.waves, statuses);
      if (step.kind === 'done' || step.kind === 'stopped') {
        const failure = step.kind === 'stopped' ? { wave: step.wave, failed: step.failed, notStarted: step.notStarted } : undefined;
        rollout = { ...rollout, state: failure === undefined ? 'succeeded' : 'failed', ...(failure !== undefined ? { failure } : {}), finishedAt: new Date() };
        await this.#store.saveRollout(rollout);
        this.#logger.info({ rollout: rollout.id, state: rollout.state, ...(failure !== undefined ? { stoppedAt: failure.wave, failed: failure.failed } : {}) }, 'rollout finished');
        return;
      }
      // This driver awaits each wave it starts, so a wave is only found waiting after a stop (resume): its unfinished clusters start again.
      const clusters = step.kind === 'start' ? step.clusters : step.waitingFor;
      rollout = await this.#save(rollout, Object.fromEntries(clusters.map((name) => [name, { status: 'running' } as RolloutCluster])));
      const wave = step.wave;
      // The record names the wave's request as soon as it is opened, and follows it to merged or closed.
      const onRequest = async (request: ReviewRequestRef): Promise<void> => {
        rollout = { ...rollout, requests: { ...rollout.requests, [String(wave)]: request } };
        await this.#store.saveRollout(rollout);
      };
      const delivery = { ...(rollout.delivery !== undefined ? { settings: rollout.delivery } : {}), wave: { rolloutId: rollout.id, wave, waves: rollout.waves.length }, onRequest };
      // Only a wave delivered through a request is cut short by a stop: a push is over in moments.
      const signal = rollout.delivery?.mode === 'pull_request' ? { signal: this.#stopping.signal } : {};
      const outcomes = await this.#runWave({ ...target, delivery, ...signal }, clusters, rollout.requestedBy);
      if (outcomes === undefined) return;
      rollout = await this.#save(rollout, outcomes);
    }
  }

  /** Upgrades one wave; an error of the git edge fails each of its clusters with that message; undefined when stopped. */
  async #runWave(target: FleetTarget & { readonly delivery: FleetWaveDelivery }, clusters: readonly string[], requestedBy: string): Promise<Record<string, RolloutCluster> | undefined> {
    try {
      const upgrades = await this.#fleet.upgrade({ ...target, clusters, dryRun: false, requestedBy });
      const byName = new Map(upgrades.map((u) => [u.name, u]));
      return Object.fromEntries(clusters.map((name) => [name, clusterOutcome(byName.get(name))]));
    } catch (error) {
      if (target.signal?.aborted) {
        this.#logger.info({ clusters }, 'wave left waiting for its request: the service is stopping');
        return undefined;
      }
      const message = error instanceof AppError ? error.message : 'the upgrade could not be written';
      if (!(error instanceof AppError)) this.#logger.error({ err: error, clusters }, 'wave failed');
      return Object.fromEntries(clusters.map((name) => [name, { status: 'failed', message } satisfies RolloutCluster]));
    }
  }

  async #save(rollout: Rollout, changed: Record<string, RolloutCluster>): Promise<Rollout> {
    const next = { ...rollout, clusters: { ...rollout.clusters, ...changed } };
    await this.#store.saveRollout(next);
    return next;
  }
}

function clusterOutcome(upgrade: FleetUpgrade | undefined): RolloutCluster {
  if (upgrade === undefined) return { status: 'failed', message: 'the upgrade did not report this cluster' };
  const counts = { added: upgrade.added.length, modified: upgrade.modified.length, removed: upgrade.removed.length };
  if (upgrade.status === 'failed') return { status: 'failed', message: upgrade.message ?? 'the upgrade failed', ...(upgrade.findings !== undefined ? { findings: upgrade.findings } : {}) };
  if (upgrade.status === 'up_to_date') return { status: 'succeeded', outcome: 'up_to_date', ...counts };
  if (upgrade.commit === undefined) return { status: 'failed', message: 'the upgraded tree was not committed', ...counts };
  return { status: 'succeeded', outcome: 'upgraded', commit: upgrade.commit, ...counts };
}
