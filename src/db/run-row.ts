/**
 * A `scaffold_runs` row and the run it stands for: the columns read, the mapping
 * both ways, the list cursor, and text PostgreSQL can store.
 */
import type { DeliverySettings } from '../run/delivery.js';
import { ValidationError, type ErrorCode } from '../errors.js';
import type { RunAction } from '../model/run-action.js';
import type { BatchClusterOutcome, RunChanges, RunCommit, RunReviewRequest, RunRotation, RunSealing, RunStatus, RunRecord } from '../run/run-record.js';

export const COLUMNS = `id, cluster_name, cluster_domain, cluster_region, cluster_role, cluster_infra_provider, cluster_dns_provider, repository_url, branch, reference,
  status, step, step_name, message, job, gitops_path, commits, attempt, sealing, created_by,
  created_at, updated_at, started_at, finished_at, delivery, review_requests, action, changes, error_code, transient, rotation,
  batch, batch_outcomes`;

export interface RunRow {
  id: string;
  cluster_name: string;
  cluster_domain: string;
  cluster_region: string;
  cluster_role: string | null;
  cluster_infra_provider: string | null;
  cluster_dns_provider: string | null;
  repository_url: string;
  branch: string;
  reference: string;
  status: RunStatus;
  step: number;
  step_name: string | null;
  message: string;
  job: string;
  gitops_path: string | null;
  commits: RunCommit[];
  attempt: number;
  sealing: RunSealing;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  delivery: DeliverySettings | null;
  review_requests: StoredReviewRequest[];
  action: RunAction;
  changes: RunChanges | null;
  error_code: ErrorCode | null;
  transient: boolean | null;
  rotation: RunRotation | null;
  batch: string[] | null;
  batch_outcomes: Record<string, BatchClusterOutcome> | null;
}

/** A review request as the `review_requests` column holds it (JSON: the time as ISO text). */
export interface StoredReviewRequest extends Omit<RunReviewRequest, 'updatedAt'> {
  readonly updatedAt: string;
}

/** What the column stores for `requests`; the texts came from a runner's output, so they are made storable. */
export function storedReviewRequestsOf(requests: readonly RunReviewRequest[]): StoredReviewRequest[] {
  return requests.map((r) => ({
    ...r,
    url: storableText(r.url),
    ...(r.branch === undefined ? {} : { branch: storableText(r.branch) }),
    updatedAt: isoOf(r.updatedAt, 'reviewRequests.updatedAt'),
  }));
}

/** What the `batch_outcomes` column stores: a failure's words came from a runner's output, so they are made storable. */
export function storableOutcomes(outcomes: Readonly<Record<string, BatchClusterOutcome>>): Record<string, BatchClusterOutcome> {
  return Object.fromEntries(
    Object.entries(outcomes).map(([name, outcome]) => [name, outcome.message === undefined ? outcome : { ...outcome, message: storableText(outcome.message) }]),
  );
}

/** What the `commits` column stores: a commit's id came from a runner's output, so it is made storable. */
export function storableCommits(commits: readonly RunCommit[]): RunCommit[] {
  return commits.map((c) => ({ ...c, sha: storableText(c.sha), ...(c.cluster === undefined ? {} : { cluster: storableText(c.cluster) }) }));
}

/** What the `changes` column stores: the kept files' paths came from a runner's output, so they are made storable. */
export function storableChanges(changes: RunChanges): RunChanges {
  return changes.kept === undefined ? changes : { ...changes, kept: changes.kept.map(storableText) };
}

function reviewRequestOf(stored: StoredReviewRequest): RunReviewRequest {
  return {
    pass: stored.pass,
    forge: stored.forge,
    number: stored.number,
    url: stored.url,
    state: stored.state,
    ...(stored.branch === undefined ? {} : { branch: stored.branch }),
    updatedAt: new Date(stored.updatedAt),
  };
}

// Optional attributes are absent rather than undefined-valued, so runs compare
// equal however they were built (a fresh create and a read of the row).
export function clusterOf(
  name: string,
  domain: string,
  region: string,
  role: string | null | undefined,
  infraProvider: string | null | undefined,
  dnsProvider: string | null | undefined,
): RunRecord['cluster'] {
  return {
    name,
    domain,
    region,
    ...(role ? { role } : {}),
    ...(infraProvider ? { infra_provider: infraProvider } : {}),
    ...(dnsProvider ? { dns_provider: dnsProvider } : {}),
  };
}

export function runOf(row: RunRow): RunRecord {
  return {
    id: row.id,
    action: row.action,
    cluster: clusterOf(row.cluster_name, row.cluster_domain, row.cluster_region, row.cluster_role, row.cluster_infra_provider, row.cluster_dns_provider),
    repositoryUrl: row.repository_url,
    branch: row.branch,
    reference: row.reference,
    status: row.status,
    step: row.step,
    // Absent rather than undefined-valued, so runs compare equal however they were built.
    ...(row.step_name !== null ? { stepName: row.step_name } : {}),
    message: row.message,
    job: row.job,
    ...(row.gitops_path !== null ? { gitopsPath: row.gitops_path } : {}),
    commits: row.commits.map((c) => ({ pass: c.pass, sha: c.sha, ...(c.cluster !== undefined ? { cluster: c.cluster } : {}) })),
    attempt: row.attempt,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.started_at !== null ? { startedAt: row.started_at } : {}),
    ...(row.finished_at !== null ? { finishedAt: row.finished_at } : {}),
    createdBy: row.created_by,
    sealing: row.sealing,
    ...(row.rotation !== null ? { rotation: row.rotation } : {}),
    ...(row.delivery !== null ? { delivery: row.delivery } : {}),
    ...(row.review_requests.length > 0 ? { reviewRequests: row.review_requests.map(reviewRequestOf) } : {}),
    ...(row.changes !== null ? { changes: row.changes } : {}),
    ...(row.error_code !== null && row.transient !== null ? { failure: { code: row.error_code, transient: row.transient } } : {}),
    ...(row.batch !== null ? { batch: row.batch } : {}),
    ...(row.batch_outcomes !== null ? { batchOutcomes: row.batch_outcomes } : {}),
  };
}

/** Opaque to callers; base64url of `[createdAt ISO, id]` of the page's last run. */
export function encodeCursor(run: RunRecord): string {
  return Buffer.from(JSON.stringify([run.createdAt.toISOString(), run.id])).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2) {
      const [createdAt, id] = value as unknown[];
      if (typeof createdAt === 'string' && typeof id === 'string' && !Number.isNaN(Date.parse(createdAt))) return { createdAt, id };
    }
  } catch {
    // fall through: not JSON
  }
  throw new ValidationError([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
}

export function isoOf(date: Date, field: string): string {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) throw new ValidationError([{ field, message: 'must be a valid date' }]);
  return date.toISOString();
}

// PostgreSQL text cannot hold NUL, and jsonb refuses unpaired UTF-16 surrogates;
// a runner's output may contain either. Replace them rather than lose the line.
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\uFFFD');
}
