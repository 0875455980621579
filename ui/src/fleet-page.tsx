/** The fleet: every cluster of the default repository's branch, whether it is behind the reference, and its last run; then the newest upgrades. */
import { useState } from 'preact/hooks';
import { ClusterStateBadge, ErrorBox, SrOnly, StatusBadge } from './components';
import { listClusters } from './fleet-api';
import { formatAge, formatDateTime } from './format';
import { useNow, usePolledValue, useTitle } from './hooks';
import { onLinkClick, paths } from './router';
import { FleetUpgradePanel } from './fleet-upgrade';
import { UpgradesList } from './upgrades-list';

const POLL_MS = 10_000;

export function FleetPage() {
  useTitle('Fleet');
  const { value: fleet, error } = usePolledValue(listClusters, POLL_MS, () => true, null);
  const now = useNow(5000);

  const behindNames = (fleet?.clusters ?? []).filter((c) => c.status === 'behind' && c.kind === 'generated').map((c) => c.name);
  const behind = (fleet?.clusters ?? []).filter((c) => c.status === 'behind').length;
  // The behind clusters chosen for a fleet-wide upgrade (a cluster no longer behind drops out).
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const selected = new Set(behindNames.filter((name) => picked.has(name)));
  const toggle = (name: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(name);
    else next.delete(name);
    setPicked(next);
  };
  const incomplete = (fleet?.clusters ?? []).filter((c) => c.state === 'incomplete').length;
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Fleet</h1>
        <p class="lede">
          {fleet === null ? (
            'Loading…'
          ) : (
            <>
              {fleet.clusters.length} cluster{fleet.clusters.length === 1 ? '' : 's'}, {behind} behind the reference
              {incomplete === 0 ? '' : `, ${incomplete} incomplete (infrastructure only)`}, in <code>{fleet.repository.url}</code> branch{' '}
              <code>{fleet.repository.branch}</code>
              {fleet.platform_commit !== null && (
                <>
                  {' '}
                  (platform at <code title={fleet.platform_commit}>{fleet.platform_commit.slice(0, 12)}</code>)
                </>
              )}
              .
            </>
          )}
        </p>
      </div>
      {error !== null && <ErrorBox title="The fleet could not be read" error={error} />}
      {fleet !== null && fleet.clusters.length === 0 && (
        <div class="empty card">
          <p>No cluster under clusters/ yet. A scaffold run adds one.</p>
        </div>
      )}
      {fleet !== null && fleet.clusters.length > 0 && (
        <div class="table-wrap">
          <table class="runs fleet">
            <caption class="sr-only">Clusters of the fleet, by name</caption>
            <thead>
              <tr>
                <th scope="col">
                  <SrOnly>Upgrade</SrOnly>
                </th>
                <th scope="col">Cluster</th>
                <th scope="col">Kind</th>
                <th scope="col">State</th>
                <th scope="col">Rendered from</th>
                <th scope="col">Attributes</th>
                <th scope="col">Last run</th>
              </tr>
            </thead>
            <tbody>
              {fleet.clusters.map((cluster) => {
                const from = cluster.behind?.rendered_from ?? cluster.provenance?.platform_commit;
                const attributes = [cluster.role, cluster.infra_provider, cluster.dns_provider].filter((a): a is string => a !== undefined);
                return (
                  <tr key={cluster.name} data-cluster={cluster.name} data-status={cluster.status} data-state={cluster.state ?? cluster.kind}>
                    <td class="select">
                      {behindNames.includes(cluster.name) && (
                        <input
                          type="checkbox"
                          aria-label={`Upgrade ${cluster.name}`}
                          checked={selected.has(cluster.name)}
                          onChange={(event) => toggle(cluster.name, (event.currentTarget as HTMLInputElement).checked)}
                        />
                      )}
                    </td>
                    <th scope="row">
                      <a href={paths.cluster(cluster.name)} onClick={onLinkClick} class="cluster-link">
                        {cluster.name}
                      </a>
                      {cluster.domain !== undefined && (
                        <span class="sub">
                          {cluster.domain} · {cluster.region}
                        </span>
                      )}
                    </th>
                    <td>{cluster.kind}</td>
                    <td>
                      <ClusterStateBadge cluster={cluster} />
                    </td>
                    <td>{from === undefined ? <span class="muted">–</span> : <code title={from}>{from.slice(0, 12)}</code>}</td>
                    <td>
                      {attributes.length === 0 ? <span class="muted">–</span> : attributes.join(' · ')}
                      {cluster.previews === true && (
                        <span class="badge previews" data-testid="previews-badge" title="Renders an environment per labelled pull/merge request">
                          previews
                        </span>
                      )}
                    </td>
                    <td>
                      {cluster.last_run === undefined ? (
                        <span class="muted">none</span>
                      ) : (
                        <>
                          <a href={paths.run(cluster.last_run.id)} onClick={onLinkClick}>
                            <SrOnly>Last run of {cluster.name}: </SrOnly>
                            <StatusBadge status={cluster.last_run.status} />
                          </a>{' '}
                          <time dateTime={cluster.last_run.created_at} title={formatDateTime(cluster.last_run.created_at)}>
                            {formatAge(cluster.last_run.created_at, now)}
                          </time>
                        </>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {fleet !== null && <FleetUpgradePanel behind={behindNames} selected={selected} onSelect={setPicked} />}
      <UpgradesList now={now} />
    </>
  );
}
