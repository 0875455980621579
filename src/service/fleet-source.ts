/**
 * The fleet port: the clusters of a target repository as its provenance files
 * record them, one cluster's SealedSecrets, and decommissioning one of them
 * as a commit. Used by `GET /api/v1/clusters`, `GET /api/v1/clusters/{name}`
 * and `DELETE /api/v1/clusters/{name}`; implemented by
 * `sources/git-fleet-source.ts`.
 */
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

/** A removal as pushed. */
export interface FleetRemoval extends RemovalPlan {
  /** The commit that removed the files, on the branch. */
  readonly commit: string;
}

/** One cluster's upgrade as reported: its diff summary and, when written, the pushed commit. */
export type FleetUpgrade = Pick<ClusterUpgrade, 'name' | 'status' | 'added' | 'modified' | 'removed' | 'credentialsKept' | 'message'> & {
  /** Verification findings of a render that failed (it was not written). */
  readonly findings?: readonly string[];
  /** The pushed commit of a written cluster (one commit per cluster). */
  readonly commit?: string;
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
   * Deletes the generator's files of `clusters/<cluster>/` in one commit and pushes it.
   * @throws ValidationError for the reference environment
   * @throws NotFoundError when the cluster does not exist
   * @throws ConflictError when it has no provenance file list
   * @throws UnavailableError when the repository cannot be read or pushed to
   */
  remove(target: FleetTarget & { readonly cluster: string; readonly requestedBy: string }): Promise<FleetRemoval>;
  /**
   * Re-renders `clusters` from the current reference with their recorded
   * identity, keeps sealed credentials, verifies each, and (unless `dryRun`)
   * commits each changed cluster on its own and pushes. Up-to-date clusters get
   * no commit; a cluster that fails is reported and left as it was.
   * @throws NotFoundError / ValidationError for a named cluster that is missing, the reference or unmanaged
   * @throws UnavailableError when the repository cannot be read or pushed to
   */
  upgrade(target: FleetTarget & { readonly clusters: readonly string[]; readonly dryRun: boolean; readonly requestedBy: string }): Promise<FleetUpgrade[]>;
}
