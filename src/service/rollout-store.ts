/**
 * The rollout port: an upgrade rollout (`POST /api/v1/upgrades`) as recorded
 * while its waves run, read back by `GET /api/v1/upgrades/{id}`. Implemented
 * by `db/pg-rollout-store.ts`.
 */
import type { DeliverySettings, ReviewRequestRef } from '../delivery/delivery.js';
import type { WaveRunStatus } from '../fleet/rollout-waves.js';

/** One cluster's upgrade in a rollout. */
export interface RolloutCluster {
  readonly status: WaveRunStatus;
  /** `upgraded`: one commit was pushed; `up_to_date`: nothing to write, no commit. */
  readonly outcome?: 'upgraded' | 'up_to_date';
  /** The pushed commit of an upgraded cluster. */
  readonly commit?: string;
  readonly added?: number;
  readonly modified?: number;
  readonly removed?: number;
  /** Why it failed. */
  readonly message?: string;
  /** Verification findings of a tree that failed (it was not written). */
  readonly findings?: readonly string[];
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
  readonly state: 'running' | 'succeeded' | 'failed';
  readonly failure?: RolloutFailure;
  /** How each wave reaches the branch; absent: one push per wave. */
  readonly delivery?: DeliverySettings;
  /** pull_request mode: each wave's request (key: the wave, from 0), as last seen. */
  readonly requests?: Readonly<Record<string, ReviewRequestRef>>;
  readonly createdAt: Date;
  readonly finishedAt?: Date;
}

/** Stores rollouts. */
export interface RolloutStore {
  /** @throws ConflictError when the id exists */
  createRollout(rollout: Rollout): Promise<void>;
  /** Replaces the clusters, requests, state, failure and finish time of a stored rollout. */
  saveRollout(rollout: Rollout): Promise<void>;
  getRollout(id: string): Promise<Rollout | undefined>;
  /** Rollouts still `running` (a driver was stopped with the service), oldest first. */
  runningRollouts(): Promise<Rollout[]>;
}
