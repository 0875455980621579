/**
 * The fleet port: the clusters of a target repository as its provenance files
 * record them, one cluster's SealedSecrets, and what an upgrade or a removal
 * would change. Read only: upgrades and removals are written by runs. Used by
 * `GET /api/v1/clusters[/{name}]`, `POST /api/v1/upgrades` (dry run, targets)
 * and `DELETE /api/v1/clusters/{name}` (the plan it answers with); implemented
 * by `sources/git-fleet-source.ts`.
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

/** What an upgrade would change in one cluster: its diff summary and, for a changed cluster, its render (`tree`) and its files before (`before`), for a diff. */
export type FleetUpgrade = Pick<ClusterUpgrade, 'name' | 'status' | 'added' | 'modified' | 'removed' | 'credentialsKept' | 'message' | 'tree' | 'before'>;

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
   * What removing `clusters/<cluster>/` would delete and keep, read from the branch head; nothing is written.
   * @throws ValidationError for the reference environment
   * @throws NotFoundError when the cluster does not exist
   * @throws ConflictError when it has no provenance file list
   * @throws UnavailableError when the repository cannot be read
   */
  planRemoval(target: FleetTarget & { readonly cluster: string }): Promise<RemovalPlan>;
  /**
   * What re-rendering `clusters` from the current reference with their
   * recorded identity would change (sealed credentials kept, nothing written).
   * Writing is an upgrade run's (one per cluster).
   * @throws NotFoundError / ValidationError for a named cluster that is missing, the reference or unmanaged
   * @throws UnavailableError when the repository cannot be read
   */
  previewUpgrade(target: FleetTarget & { readonly clusters: readonly string[] }): Promise<FleetUpgrade[]>;
}
