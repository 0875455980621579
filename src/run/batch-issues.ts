/** What makes a batch of clusters one upgrade run may not take. Pure. */
import { ERROR_CODES, type FieldIssue } from '../errors.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { BATCH_CLUSTER_STATUSES, MAX_BATCH_CLUSTERS, RESULT_MAX_BYTES, type RunResult } from './run-record.js';

const longest = <T extends string>(values: readonly T[]): T => values.reduce((a, b) => (b.length > a.length ? b : a));

/**
 * The bytes of the largest result a batch run of `clusters` can write (JSON
 * and its newline): every commit, with a SHA-256 id, and every status whole,
 * as `boundedResult` never cuts them; the longest error code and status; file
 * counts of seven digits; and of its message only the mark of a cut.
 */
export function batchResultBytes(clusters: readonly string[]): number {
  const worst: RunResult = {
    status: 'succeeded',
    message: '…',
    gitops_path: `clusters/${clusters[0] ?? ''}`,
    commits: clusters.map((cluster) => ({ pass: 'upgrade', sha: 'f'.repeat(64), cluster })),
    step: 99,
    changes: { added: 9_999_999, modified: 9_999_999, removed: 9_999_999, credentialsKept: 9_999_999 },
    error_code: longest(ERROR_CODES),
    transient: false,
    batch: Object.fromEntries(clusters.map((cluster) => [cluster, longest(BATCH_CLUSTER_STATUSES)])),
  };
  return Buffer.byteLength(`${JSON.stringify(worst)}\n`, 'utf8');
}

/** Whether one run may upgrade `clusters`: at most {@link MAX_BATCH_CLUSTERS}, and a result that always fits a termination message. */
export function batchResultFits(clusters: readonly string[]): boolean {
  return clusters.length <= MAX_BATCH_CLUSTERS && batchResultBytes(clusters) <= RESULT_MAX_BYTES;
}

/** The issues of a batch after `cluster`: names that are not cluster names, a repeat, too many. */
export function batchIssues(cluster: string, batch: readonly string[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const bad = batch.filter((name) => !clusterNameSchema.safeParse(name).success);
  if (bad.length > 0) issues.push({ field: 'batch', message: `not cluster names: ${bad.map((n) => JSON.stringify(n)).join(', ')}` });
  const all = [cluster, ...batch];
  if (new Set(all).size !== all.length) issues.push({ field: 'batch', message: 'names a cluster twice' });
  if (all.length > MAX_BATCH_CLUSTERS) issues.push({ field: 'batch', message: `at most ${MAX_BATCH_CLUSTERS} clusters per run` });
  else if (!batchResultFits(all)) {
    issues.push({
      field: 'batch',
      message: `too many clusters for their names: the run's result (a commit and a status each) must fit ${RESULT_MAX_BYTES} bytes`,
    });
  }
  return issues;
}
