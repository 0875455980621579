/**
 * The run store port: where the service keeps runs, their progress and logs.
 * Implemented by `db/pg-run-store.ts` (PostgreSQL or PGlite).
 */
import type { ClusterSpec } from '../model/cluster-spec.js';
import type { DeliverySettings } from '../run/delivery.js';
import type { Failure } from '../errors.js';
import type { RunAction } from '../model/run-action.js';
import type { BatchClusterOutcome, RunChanges, RunCommit, RunReviewRequest, RunRotation, RunSealing, RunStatus, RunRecord } from '../run/run-record.js';

/** What a caller supplies to create a run; the store assigns timestamps, status `pending`, step 0, attempt 1. */
export interface NewRun {
  readonly id: string;
  /** @default 'scaffold' */
  readonly action?: RunAction;
  readonly cluster: ClusterSpec;
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly reference: string;
  readonly job: string;
  readonly createdBy: string;
  readonly sealing: RunSealing;
  /** A credential rotation: the values it reseals with. Absent: not a rotation. */
  readonly rotation?: RunRotation;
  /** Absent: push. */
  readonly delivery?: DeliverySettings;
  /** A batch upgrade run: the clusters it upgrades after `cluster` (names). */
  readonly batch?: readonly string[];
}

/** Fields a progress or outcome update may change. */
export interface RunUpdate {
  readonly status?: RunStatus;
  readonly step?: number;
  readonly stepName?: string;
  readonly message?: string;
  readonly gitopsPath?: string;
  readonly commits?: readonly RunCommit[];
  /** An upgrade's or removal's file counts (from its result). */
  readonly changes?: RunChanges;
  /** A failed outcome: its error code and whether a retry may succeed (only with status `failed`). */
  readonly failure?: Failure;
  /** The whole list (replaces the stored one). */
  readonly reviewRequests?: readonly RunReviewRequest[];
  /** A batch run: every cluster's outcome so far (replaces the stored map). */
  readonly batchOutcomes?: Readonly<Record<string, BatchClusterOutcome>>;
  readonly attempt?: number;
  readonly job?: string;
  readonly startedAt?: Date;
  readonly finishedAt?: Date;
}

/** One stored log line of a run. `seq` increases by one per line within a run, from 1. */
export interface LogLine {
  readonly seq: number;
  readonly time: Date;
  readonly line: string;
}

/** A page of runs, newest first. */
export interface RunPage {
  readonly runs: readonly RunRecord[];
  /** Opaque cursor for the next page, absent on the last page. */
  readonly nextCursor?: string;
}

/** Filter for listing runs. */
export interface RunFilter {
  readonly cluster?: string;
  /** Only runs on this repository (compared as stored: callers pass the normal form of `cluster-key.ts`). */
  readonly repositoryUrl?: string;
  /** Only runs on this branch. */
  readonly branch?: string;
  readonly status?: RunStatus;
  /** @default 50 */
  readonly limit?: number;
  readonly cursor?: string;
}

/**
 * A condition on a run's age, checked by the store in the same statement as
 * the update and on the store's own clock (the database's `now()`, the clock
 * that wrote `created_at`), never on the caller's: two machines' clocks are
 * never compared.
 */
export interface RunGuard {
  /** Only a run created at least this many milliseconds ago. */
  readonly createdAtLeastMsAgo?: number;
}

/** Persistent state of scaffold runs. */
export interface RunStore {
  /**
   * Creates a pending run.
   * @throws ConflictError when the cluster (its repository, branch and name) already has an active (pending or running) run
   */
  create(run: NewRun): Promise<RunRecord>;
  get(id: string): Promise<RunRecord | undefined>;
  list(filter: RunFilter): Promise<RunPage>;
  /** Every run in an active status, oldest first: what the reconciler looks at after a restart. */
  listActive(): Promise<RunRecord[]>;
  /**
   * Applies `update` if the run's current status is one of `from` (when given),
   * the status transition is allowed and `guard` (when given) holds.
   * @returns the updated run, or undefined when the run is missing or the condition failed
   */
  update(id: string, update: RunUpdate, from?: readonly RunStatus[], guard?: RunGuard): Promise<RunRecord | undefined>;
  /**
   * Appends lines, numbering them after the last stored one; with `afterSeq`,
   * numbering them `afterSeq + 1…` instead and skipping any number already
   * stored, so a write repeated after a lost acknowledgement stores nothing twice.
   */
  appendLogs(id: string, lines: readonly { readonly time: Date; readonly line: string }[], options?: { readonly afterSeq?: number }): Promise<void>;
  /** Lines with `seq > afterSeq`, in order, at most `limit`. */
  readLogs(id: string, options?: { readonly afterSeq?: number; readonly limit?: number }): Promise<LogLine[]>;
  /** Cheap round trip, for /healthz. @throws UnavailableError */
  ping(): Promise<void>;
  close(): Promise<void>;
}
