/**
 * One word for where a cluster stands, decided first from what its tree in Git
 * says and then from the service's last run for it. It exists because the
 * freshness alone (`up_to_date` / `behind`) compares platform commits only: a
 * scaffold cancelled or failed after its infrastructure pass leaves a tree
 * rendered from the current commit, with no sealed credentials, no database
 * and no apps, which freshness calls up to date.
 */
import type { RunAction } from '../model/run-action.js';
import type { ClusterEntry } from './cluster-registry.js';

/**
 * In order of precedence:
 * `removing`: the last run is a removal still pending or running.
 * `incomplete`: provenance.yaml records only the infrastructure pass (no sealed
 *   credentials, no layers that need them): the scaffold never finished.
 * `failed`: the tree is complete, but the last run failed or was cancelled.
 * `behind` / `up_to_date`: complete, rendered from an older / the current platform commit.
 * `complete`: complete, and whether it is behind is not known.
 */
export const CLUSTER_STATES = ['complete', 'incomplete', 'failed', 'behind', 'up_to_date', 'removing'] as const;
export type ClusterState = (typeof CLUSTER_STATES)[number];

/** What the state needs of the last run: its action and status (the service's; the CLI knows none). */
export interface LastRunOutcome {
  readonly action: RunAction;
  readonly status: 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
}

/** The state of a generated cluster; undefined for the reference and unmanaged directories. */
export function clusterStateOf(entry: Pick<ClusterEntry, 'kind' | 'provenance' | 'freshness'>, lastRun?: LastRunOutcome): ClusterState | undefined {
  if (entry.kind !== 'generated' || entry.provenance === undefined) return undefined;
  if (lastRun?.action === 'remove' && (lastRun.status === 'pending' || lastRun.status === 'running')) return 'removing';
  if (entry.provenance.pass !== 'all') return 'incomplete';
  if (lastRun !== undefined && (lastRun.status === 'failed' || lastRun.status === 'cancelled')) return 'failed';
  if (entry.freshness === 'behind') return 'behind';
  if (entry.freshness === 'up_to_date') return 'up_to_date';
  return 'complete';
}
