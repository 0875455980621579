/**
 * The fleet port: the clusters of a target repository as its provenance files
 * record them, one cluster's SealedSecrets, and decommissioning one of them
 * as a commit. Used by `GET /api/v1/clusters`, `GET /api/v1/clusters/{name}`
 * and `DELETE /api/v1/clusters/{name}`; implemented by
 * `sources/git-fleet-source.ts`.
 */
import type { DeliverySettings, ReviewRequestRef } from '../delivery/delivery.js';
import type { UpgradeWave } from '../delivery/fleet-request-text.js';
import type { ClusterEntry } from '../fleet/cluster-registry.js';
import type { RemovalPlan } from '../fleet/plan-removal.js';
import type { ClusterUpgrade } from '../fleet/plan-upgrade.js';
import type { SealedSecretRecord } from '../gitops/sealed-with.js';

/** Which repository and branch. */
export interface FleetTarget {
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly signal?: AbortSignal;
}

/** The clusters of a branch, read at one commit. */
export interface Fleet {
  readonly clusters: readonly ClusterEntry[];
  /** The newest commit that touched the platform (base/, the reference, scaffold.yaml); undefined on an empty branch. */
  readonly platformCommit?: string;
  /** The branch head they were read at. */
  readonly commit: string;
}

/** How a change reaches the branch (absent settings: one push), and who hears about its request. */
export interface FleetDelivery {
  readonly settings?: DeliverySettings;
  /** Told when the change's pull/merge request is opened or reused, merged, or found closed. */
  readonly onRequest?: (request: ReviewRequestRef) => void | Promise<void>;
}

/** A removal as delivered. */
export interface FleetRemoval extends RemovalPlan {
  /** The commit that removed the files, on the branch (the merge commit of a merged request). */
  readonly commit: string;
  /** The pull/merge request it was delivered through (pull_request mode). */
  readonly request?: ReviewRequestRef;
}

/** One cluster's upgrade as reported: its diff summary and, when written, the pushed commit. */
export type FleetUpgrade = Pick<ClusterUpgrade, 'name' | 'status' | 'added' | 'modified' | 'removed' | 'credentialsKept' | 'message'> & {
  /** Verification findings of a render that failed (it was not written). */
  readonly findings?: readonly string[];
  /** The pushed commit of a written cluster (one commit per cluster). */
  readonly commit?: string;
  /** The request its wave was delivered through (pull_request mode). */
  readonly request?: ReviewRequestRef;
};

/** Reads and changes the fleet of a repository. */
export interface FleetSource {
  /**
   * Every cluster under `clusters/` of the branch head.
   * @throws UnavailableError when the repository cannot be read
   */
  fleet(target: FleetTarget): Promise<Fleet>;
  /**
   * The SealedSecrets under `clusters/<cluster>/` of the branch head, with the
   * certificate each records (`sealed-with`); empty for a missing cluster.
   * `commit` is the head a fleet read just saw: an answer read at it may be
   * reused while the branch stays there (a detail page polls).
   * @throws UnavailableError when the repository cannot be read
   */
  sealedSecrets(target: FleetTarget & { readonly cluster: string; readonly commit?: string }): Promise<readonly SealedSecretRecord[]>;
  /**
   * Checks that changes to `repositoryUrl` can be delivered as `settings` ask, before anything starts.
   * @throws UnavailableError when this service cannot (pull_request without forge credentials)
   */
  checkDelivery(settings: DeliverySettings | undefined, repositoryUrl: string): void;
  /**
   * Deletes the generator's files of `clusters/<cluster>/` in one commit and
   * delivers it: one push, or a request on `scaffold/remove/<cluster>` merged
   * before this returns.
   * @throws ValidationError for the reference environment
   * @throws NotFoundError when the cluster does not exist
   * @throws ConflictError when it has no provenance file list
   * @throws UnavailableError when the repository cannot be read or pushed to
   * @throws ForbiddenError when the branch refuses a direct push (use pull_request)
   * @throws ConflictError when its request was closed without being merged
   */
  remove(target: FleetTarget & { readonly cluster: string; readonly requestedBy: string; readonly delivery?: FleetDelivery }): Promise<FleetRemoval>;
  /**
   * Re-renders `clusters` from the current reference with their recorded
   * identity, keeps sealed credentials, verifies each, and (unless `dryRun`)
   * commits each changed cluster on its own and delivers them together (one
   * push, or one request per wave on `scaffold/upgrade/<rollout>/wave-<n>`,
   * merged before this returns). Up-to-date clusters get
   * no commit; a cluster that fails is reported and left as it was.
   * @throws NotFoundError / ValidationError for a named cluster that is missing, the reference or unmanaged
   * @throws UnavailableError when the repository cannot be read or pushed to
   */
  upgrade(
    target: FleetTarget & { readonly clusters: readonly string[]; readonly dryRun: boolean; readonly requestedBy: string; readonly delivery?: FleetDelivery & { readonly wave: UpgradeWave } },
  ): Promise<FleetUpgrade[]>;
}
