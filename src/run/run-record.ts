/**
 * A scaffold run as the service tracks it, and the transitions it may take.
 * Pure: no I/O.
 */
import type { ClusterSpec } from '../model/cluster-spec.js';
import type { DeliverySettings } from './delivery.js';
import type { ForgeName } from '../model/forges.js';
import type { RunAction, RunPass } from '../model/run-action.js';
import type { ErrorCode, Failure } from '../errors.js';

/** Lifecycle of a run. `pending` and `running` are active; the rest are final. */
export type RunStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** The statuses in which a run holds its cluster (a second run for it gets 409). */
export const ACTIVE_STATUSES: readonly RunStatus[] = ['pending', 'running'];

/** A commit a run pushed. */
export interface RunCommit {
  readonly pass: RunPass;
  readonly sha: string;
  /** A batch run's commit: the cluster it upgrades (each cluster of a batch lands its own commit). Absent: the run's cluster. */
  readonly cluster?: string;
}

/** What became of one cluster of a batch upgrade run (its commit, if any, is in the run's `commits`). */
export const BATCH_CLUSTER_STATUSES = ['upgraded', 'up_to_date', 'failed', 'not_started'] as const;
export type BatchClusterStatus = (typeof BATCH_CLUSTER_STATUSES)[number];

/** One cluster's outcome in a batch upgrade run. */
export interface BatchClusterOutcome {
  readonly status: BatchClusterStatus;
  /** Why it failed or was not started; a failure's verify findings, cut short. */
  readonly message?: string;
  /** What its commit changed, in files. */
  readonly changes?: Pick<RunChanges, 'added' | 'modified' | 'removed'>;
}

/**
 * The most clusters one batch upgrade run upgrades (its own and those of
 * `batch`), whatever their names; fewer when its result would not fit
 * {@link RESULT_MAX_BYTES} (batch-issues.ts `batchResultFits`: a commit and a
 * status each, so 15 names of 63 characters, 27 of 10, with SHA-256 ids).
 * Each run has its fixed costs (a process, a clone, a push): at 320 clusters,
 * batches of 32 cost 0.43 CPU-s a cluster against 0.47 for batches of 16.
 */
export const MAX_BATCH_CLUSTERS = 32;

/**
 * What a result may weigh, as written: Kubernetes keeps at most 4096 bytes of
 * a container's termination message and cuts the rest, which would leave a
 * finished run without a readable result.
 */
export const RESULT_MAX_BYTES = 4096;

/** A pull/merge request a run opened or reused for a pass (`pull_request` delivery), as last reported. */
export interface RunReviewRequest {
  readonly pass: RunPass;
  readonly forge: ForgeName;
  /** GitHub and Gitea: the pull number; GitLab: the merge request iid. */
  readonly number: number;
  readonly url: string;
  readonly state: 'open' | 'merged' | 'closed';
  /** The branch the pass was pushed to (`scaffold/<cluster>/<pass>`). */
  readonly branch?: string;
  /** When the runner last reported on it. */
  readonly updatedAt: Date;
}

/**
 * `requests` with `latest` recorded: the entry for the same request (forge and
 * number) is replaced in place, a new one is appended. Pure; an older report
 * than the one kept (a replayed log) changes nothing.
 */
export function withReviewRequest(requests: readonly RunReviewRequest[], latest: RunReviewRequest): readonly RunReviewRequest[] {
  const index = requests.findIndex((r) => r.forge === latest.forge && r.number === latest.number);
  if (index === -1) return [...requests, latest];
  const kept = requests[index];
  if (kept === undefined || kept.updatedAt.getTime() > latest.updatedAt.getTime()) return requests;
  return requests.map((r, i) =>
    i === index ? { ...latest, ...(latest.branch === undefined && kept.branch !== undefined ? { branch: kept.branch } : {}) } : r,
  );
}

/** What the runner reports when it ends (its result file / termination message). */
export interface RunResult {
  readonly status: 'succeeded' | 'failed';
  readonly message: string;
  readonly gitops_path?: string;
  readonly commits?: readonly RunCommit[];
  /** The step the run was on when it ended (1 to its action's step count). */
  readonly step?: number;
  /** An upgrade or removal: the files its commit added, changed and deleted (counts), absent for a scaffold. */
  readonly changes?: RunChanges;
  /** A failed run: what kind of failure (`errors.ts` `failureOf`). */
  readonly error_code?: ErrorCode;
  /** A failed run: whether running it again later may succeed. */
  readonly transient?: boolean;
  /** A batch upgrade run: each cluster's status (its commit is in `commits`, a failure's words in its `batch_cluster` event). */
  readonly batch?: Readonly<Record<string, BatchClusterStatus>>;
}

/** What an upgrade's or a removal's commit changed, in files; all zero when there was nothing to commit. */
export interface RunChanges {
  readonly added: number;
  readonly modified: number;
  readonly removed: number;
  /** An upgrade: sealed credentials carried over byte for byte. */
  readonly credentialsKept?: number;
  /** A removal: files under the cluster's directory left in place (not the generator's, e.g. flux-system/). */
  readonly kept?: readonly string[];
}

/** A run, as stored. Holds no credential: secrets travel separately (`RunSecrets`). */
export interface RunRecord {
  readonly id: string;
  /** What the run does to the cluster's directory. */
  readonly action: RunAction;
  readonly cluster: ClusterSpec;
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly reference: string;
  readonly status: RunStatus;
  /** The step the run is on or ended on, 0 before it started. */
  readonly step: number;
  readonly stepName?: string;
  readonly message: string;
  readonly job: string;
  readonly gitopsPath?: string;
  readonly commits: readonly RunCommit[];
  readonly attempt: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly startedAt?: Date;
  readonly finishedAt?: Date;
  /** Which caller created the run (service identity), for the audit trail. */
  readonly createdBy: string;
  /** How the sealing certificate is obtained: from the request or from the cluster; `none` for an upgrade or a removal, which seal nothing. */
  readonly sealing: RunSealing;
  /**
   * A run started to rotate credentials (a scaffold run by every other
   * measure): the values its rotated SealedSecrets hold, `same` (re-encrypted
   * by the cluster's controller) or `fresh`. Absent: not a rotation.
   */
  readonly rotation?: RunRotation;
  /** How passes reach the branch; absent: pushed straight to it. */
  readonly delivery?: DeliverySettings;
  /** The pull/merge requests of its passes, in the order they were first reported; absent: none (push delivery). */
  readonly reviewRequests?: readonly RunReviewRequest[];
  /** An upgrade or removal that ended: what its commit changed. */
  readonly changes?: RunChanges;
  /** A failed run: its error code and whether a retry may succeed; absent otherwise. */
  readonly failure?: Failure;
  /**
   * A batch upgrade run (a rollout's): the clusters it upgrades after `cluster`,
   * each from the same clone, each verified and committed on its own, all landed in one push.
   * Absent: the run is about `cluster` alone.
   */
  readonly batch?: readonly string[];
  /** A batch upgrade run: each cluster's outcome so far, `cluster`'s included. */
  readonly batchOutcomes?: Readonly<Record<string, BatchClusterOutcome>>;
}

/** Every cluster a run is about: its own, then its batch's. */
export function clustersOf(run: Pick<RunRecord, 'cluster' | 'batch'>): readonly string[] {
  return [run.cluster.name, ...(run.batch ?? [])];
}

/** What a rotation run's resealed credentials hold: the same values, or fresh ones. */
export type RunRotation = 'same' | 'fresh';

/** Where a run's sealing certificate comes from. */
export type RunSealing = 'certificate' | 'kubeconfig' | 'none';

/**
 * Secrets a run needs, kept out of the database: in Kubernetes mode they go into
 * a Secret owned by the Job, in embedded mode they pass to the child process.
 */
export interface RunSecrets {
  readonly repositoryCredentials?: { readonly username?: string; readonly token: string };
  readonly kubeconfig?:
    | { readonly kind: 'secretRef'; readonly namespace: string; readonly name: string; readonly key: string }
    | { readonly kind: 'inline'; readonly value: string };
  readonly certificate?: string;
  readonly registryDockerconfigjson?: string;
  /**
   * Failure notifications: the Provider type (not secret, travels with it) and
   * its webhook address, which is a credential (sealed by the runner into the
   * cluster's tree, never stored or logged).
   */
  readonly notifications?: { readonly provider: string; readonly address: string };
  /**
   * A GitHub App the runner authenticates to GitHub with (`pull_request`
   * delivery, forge github): it mints an installation token for the API and for git.
   */
  readonly githubApp?: { readonly appId: string; readonly installationId: string; readonly privateKey: string };
  /**
   * Not a secret, but like the secrets it belongs to one attempt and is not
   * stored (a retry sends it again): after the last push, wait this long for
   * the cluster's Flux to report Ready at the pushed commit (needs the kubeconfig).
   */
  readonly waitForReady?: { readonly timeoutSeconds: number };
  /**
   * Per attempt too (`POST /clusters/{name}/rotate`): seal fresh values for
   * every credential (`true`) or the ones named (`name` or `namespace/name`).
   */
  readonly rotateCredentials?: true | readonly string[];
  /**
   * What the rotated SealedSecrets hold: the `same` values, re-encrypted by the
   * cluster's own controller (`/v1/rotate`; needs the kubeconfig), or `fresh` ones.
   * @default 'same': databases that set a password only at first start keep working
   */
  readonly rotateValues?: 'same' | 'fresh';
  /**
   * Per attempt, with `rotateCredentials`: the values are fresh, so also write
   * the Jobs that set them where the databases keep them (`rotate --fresh-values`).
   */
  readonly freshValues?: true;
  /**
   * Per attempt, a removal only: delete the data too. The run lands the lift of
   * the prune protection, waits this long for the cluster's Flux (read with
   * `kubeconfig`) to apply it, then lands the removal.
   */
  readonly deleteData?: { readonly timeoutSeconds: number };
}

/** Final statuses cannot change again. */
export function isFinal(status: RunStatus): boolean {
  return !ACTIVE_STATUSES.includes(status);
}

const TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  pending: ['running', 'succeeded', 'failed', 'cancelled'],
  running: ['succeeded', 'failed', 'cancelled'],
  succeeded: [],
  failed: [],
  cancelled: [],
};

/** Whether a run may move from `from` to `to`. Staying in the same active status is allowed (progress updates). */
export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return (from === to && !isFinal(from)) || TRANSITIONS[from].includes(to);
}

/** The Kubernetes Job (and child-process) name of a run. */
export function jobNameOf(id: string): string {
  return `scaffold-${id}`;
}
