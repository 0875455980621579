/**
 * The newest upgrade rollouts under the fleet (`GET /api/v1/upgrades`): where
 * an operator finds the one under way to follow or cancel, or a finished one
 * to read, without keeping its id.
 */
import { formatAge, formatDateTime } from './format';
import { listUpgrades, type RolloutSummary } from './fleet-api';
import { usePolledValue } from './hooks';
import { onLinkClick, paths } from './router';

const POLL_MS = 10_000;
const STATUS_ORDER = ['succeeded', 'running', 'pending', 'failed', 'cancelled'] as const;

/** "2 succeeded · 1 running · 3 pending": the clusters of a rollout by status. */
export function clusterCounts(clusters: RolloutSummary['clusters']): string {
  return STATUS_ORDER.flatMap((status) => (clusters[status] ? [`${clusters[status]} ${status}`] : [])).join(' · ');
}

export function UpgradesList({ now }: { now: number }) {
  const { value: rollouts } = usePolledValue(listUpgrades, POLL_MS, () => true, null);
  if (rollouts === null || rollouts.length === 0) return null;
  return (
    <section aria-labelledby="upgrades-heading">
      <h2 id="upgrades-heading">Upgrades</h2>
      <div class="table-wrap">
        <table class="runs" data-testid="upgrades-list">
          <caption class="sr-only">The newest upgrade rollouts, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Upgrade</th>
              <th scope="col">State</th>
              <th scope="col">Clusters</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {rollouts.map((rollout) => (
              <tr key={rollout.id} data-state={rollout.state}>
                <th scope="row">
                  <a href={paths.upgrade(rollout.id)} onClick={onLinkClick} aria-label={`Upgrade ${rollout.id.slice(0, 8)}, ${rollout.state}`}>
                    <code>{rollout.id.slice(0, 8)}</code>
                  </a>
                </th>
                <td>{rollout.state}</td>
                <td>
                  {clusterCounts(rollout.clusters)}
                  <span class="sub">
                    {rollout.clusters['total']} in {rollout.waves} wave{rollout.waves === 1 ? '' : 's'}
                  </span>
                </td>
                <td>
                  <time dateTime={rollout.created_at} title={formatDateTime(rollout.created_at)}>
                    {formatAge(rollout.created_at, now)}
                  </time>{' '}
                  by {rollout.requested_by}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
