/** What makes a batch of clusters one upgrade run may not take. Pure. */
import type { FieldIssue } from '../errors.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { MAX_BATCH_CLUSTERS } from './run-record.js';

/** The issues of a batch after `cluster`: names that are not cluster names, a repeat, too many. */
export function batchIssues(cluster: string, batch: readonly string[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const bad = batch.filter((name) => !clusterNameSchema.safeParse(name).success);
  if (bad.length > 0) issues.push({ field: 'batch', message: `not cluster names: ${bad.map((n) => JSON.stringify(n)).join(', ')}` });
  const all = [cluster, ...batch];
  if (new Set(all).size !== all.length) issues.push({ field: 'batch', message: 'names a cluster twice' });
  if (all.length > MAX_BATCH_CLUSTERS) issues.push({ field: 'batch', message: `at most ${MAX_BATCH_CLUSTERS} clusters per run` });
  return issues;
}
