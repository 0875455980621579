/**
 * The rollout port: an upgrade rollout (`POST /api/v1/upgrades`) as recorded
 * while its waves run, read back by `GET /api/v1/upgrades/{id}`. Implemented
 * by `db/pg-rollout-store.ts`.
 */
import type { DeliverySettings } from '../run/delivery.js';
import type { WaveRunStatus } from '../fleet/rollout-waves.js';

/** One cluster's upgrade in a rollout. */
export interface RolloutCluster {
  readonly status: WaveRunStatus;
  /** The run that upgrades it (absent until its wave starts, or when the run could not start). */
  readonly run?: string;
  /** `upgraded`: its run landed one commit; `up_to_date`: nothing to write, no commit. */
  readonly outcome?: 'upgraded' | 'up_to_date';
  /** The pushed commit of an upgraded cluster. */
  readonly commit?: string;
  readonly added?: number;
  readonly modified?: number;
  readonly removed?: number;
  /** Why it failed. */
  readonly message?: string;
}

/** Where a rollout stopped. */
export interface RolloutFailure {
  /** The wave (from 0) whose runs did not all succeed. */
  readonly wave: number;
  readonly failed: readonly string[];
  /** Clusters of later waves, never started. */
  readonly notStarted: readonly string[];
}

/** An upgrade rollout over a fleet, in waves. */
export interface Rollout {
  readonly id: string;
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly requestedBy: string;
  readonly waveSize: number;
  readonly waves: readonly (readonly string[])[];
  /** Every cluster of every wave; `pending` until its wave starts. */
  readonly clusters: Readonly<Record<string, RolloutCluster>>;
  /** `cancelled`: an operator stopped it (POST …/cancel); its runs under way were cancelled, later ones never started. */
  readonly state: 'running' | 'succeeded' | 'failed' | 'cancelled';
  readonly failure?: RolloutFailure;
  /** How each run's commit reaches the branch; absent: pushed. */
  readonly delivery?: DeliverySettings;
  readonly createdAt: Date;
  readonly finishedAt?: Date;
}

/** Stores rollouts. */
export interface RolloutStore {
  /** @throws ConflictError when the id exists */
  createRollout(rollout: Rollout): Promise<void>;
  /** Replaces the clusters, state, failure and finish time of a stored rollout. */
  saveRollout(rollout: Rollout): Promise<void>;
  getRollout(id: string): Promise<Rollout | undefined>;
  /** Rollouts still `running` (a driver was stopped with the service), oldest first. */
  runningRollouts(): Promise<Rollout[]>;
  /** The newest `limit` rollouts, newest first, only those in `state` when it is given. */
  listRollouts(options: { readonly limit: number; readonly state?: Rollout['state'] }): Promise<Rollout[]>;
}
