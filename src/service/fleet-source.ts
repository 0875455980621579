/**
 * The fleet port: the clusters of a target repository as its provenance files
 * record them, and decommissioning one of them as a commit. Used by
 * `GET /api/v1/clusters` and `DELETE /api/v1/clusters/{name}`; implemented by
 * `app/git-fleet-source.ts`.
 */
import type { ClusterEntry } from '../fleet/cluster-registry.js';
import type { RemovalPlan } from '../fleet/plan-removal.js';

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

/** A removal as pushed. */
export interface FleetRemoval extends RemovalPlan {
  /** The commit that removed the files, on the branch. */
  readonly commit: string;
}

/** Reads and changes the fleet of a repository. */
export interface FleetSource {
  /**
   * Every cluster under `clusters/` of the branch head.
   * @throws UnavailableError when the repository cannot be read
   */
  fleet(target: FleetTarget): Promise<Fleet>;
  /**
   * Deletes the generator's files of `clusters/<cluster>/` in one commit and pushes it.
   * @throws ValidationError for the reference environment
   * @throws NotFoundError when the cluster does not exist
   * @throws ConflictError when it has no provenance file list
   * @throws UnavailableError when the repository cannot be read or pushed to
   */
  remove(target: FleetTarget & { readonly cluster: string; readonly requestedBy: string }): Promise<FleetRemoval>;
}
