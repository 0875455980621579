/**
 * One upgrade rollout (`GET /api/v1/upgrades/{id}`): its waves and each
 * cluster's outcome, followed until the rollout ends. Each cluster's upgrade is
 * a run: its row links to the run's page, which shows its steps, its commit
 * and, when delivered through one, its pull request. A running rollout can be
 * cancelled from here. The page names who started it and when, and each
 * cluster's run start and duration.
 */
import { useState } from 'preact/hooks';
import { ErrorBox } from './components';
import { formatDateTime, formatDuration } from './format';
import { getUpgrade, type Rollout } from './fleet-api';
import { useNow, usePolledValue, useTitle } from './hooks';
import { onLinkClick, paths } from './router';
import { UpgradeCancel } from './upgrade-cancel';

export function UpgradePage({ id }: { id: string }) {
  useTitle('Upgrade');
  const { value: polled, error } = usePolledValue(
    (signal) => getUpgrade(id, signal),
    2000,
    (current) => current === null || current.state === 'running',
    id,
  );
  // The cancel's answer shows at once; the poll, which stops once the rollout ended, may still hold it running.
  const [cancelled, setCancelled] = useState<Rollout | null>(null);
  const rollout = cancelled?.id === id ? cancelled : polled;
  const now = useNow(1000);

  return (
    <>
      <div class="page-head">
        <p class="breadcrumbs">
          <a href={paths.fleet} onClick={onLinkClick}>
            Fleet
          </a>{' '}
          / upgrade <code>{id.slice(0, 8)}</code>
        </p>
        <h1 tabIndex={-1}>Upgrade {rollout === null ? '' : rollout.state}</h1>
        {rollout === null ? (
          <p class="lede">Loading…</p>
        ) : (
          <p class="lede" data-testid="rollout-summary">
            Started by <strong data-testid="rollout-author">{rollout.requested_by}</strong> <Time iso={rollout.created_at} />
            {rollout.finished_at !== undefined && (
              <>
                , ended <Time iso={rollout.finished_at} /> after {formatDuration(Date.parse(rollout.finished_at) - Date.parse(rollout.created_at))}
              </>
            )}
            ; {rollout.clusters.length} cluster{rollout.clusters.length === 1 ? '' : 's'} in {rollout.waves.length} wave{rollout.waves.length === 1 ? '' : 's'}{' '}
            of at most {rollout.wave_size}, on <code>{rollout.repository.url}</code> branch <code>{rollout.repository.branch}</code>.
          </p>
        )}
      </div>
      {error !== null && <ErrorBox title="The upgrade could not be read" error={error} />}
      {rollout?.state === 'running' && <UpgradeCancel id={id} onCancelled={setCancelled} />}
      {rollout?.delivery?.mode === 'pull_request' && (
        <p class="hint">Each wave's clusters go through pull requests: each one is on its cluster's run page, and the next wave starts once they are merged.</p>
      )}
      {rollout !== null && (
        <div class="table-wrap">
          <table class="runs" data-state={rollout.state}>
            <caption class="sr-only">Clusters of the rollout, by wave</caption>
            <thead>
              <tr>
                <th scope="col">Cluster</th>
                <th scope="col">Wave</th>
                <th scope="col">Status</th>
                <th scope="col">Outcome</th>
                <th scope="col">Started</th>
                <th scope="col">Took</th>
                <th scope="col">Run</th>
              </tr>
            </thead>
            <tbody>
              {rollout.clusters.map((c) => (
                <tr key={c.name} data-cluster={c.name} data-status={c.status}>
                  <th scope="row">
                    <a href={paths.cluster(c.name)} onClick={onLinkClick}>
                      {c.name}
                    </a>
                  </th>
                  <td>{c.wave + 1}</td>
                  <td>{c.status}</td>
                  <td>
                    {c.outcome === 'upgraded' && (
                      <>
                        commit <code>{c.commit?.slice(0, 12)}</code>: {c.added ?? 0} added, {c.modified ?? 0} modified, {c.removed ?? 0} removed
                      </>
                    )}
                    {c.outcome === 'up_to_date' && 'already up to date'}
                    {c.message !== undefined && <span class="sub">{c.message}</span>}
                  </td>
                  <td data-testid="cluster-started">{c.started_at === undefined ? <span class="muted">–</span> : <Time iso={c.started_at} />}</td>
                  <td data-testid="cluster-took">
                    {c.started_at === undefined ? (
                      <span class="muted">–</span>
                    ) : (
                      formatDuration((c.finished_at === undefined ? now : Date.parse(c.finished_at)) - Date.parse(c.started_at))
                    )}
                    {c.started_at !== undefined && c.finished_at === undefined && <span class="sub">so far</span>}
                  </td>
                  <td>
                    {c.run_id === undefined ? (
                      <span class="muted">{rollout.state === 'running' ? 'waiting for its wave' : 'not started'}</span>
                    ) : (
                      // The name starts with the visible text (an sr-only span inside would stretch the link's box out of the table cell).
                      <a
                        href={paths.run(c.run_id)}
                        onClick={onLinkClick}
                        aria-label={`${c.run_id.slice(0, 8)}: the upgrade run of ${c.name}`}
                        data-testid="upgrade-run-link"
                      >
                        <code>{c.run_id.slice(0, 8)}</code>
                      </a>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** A moment as the local date and time, machine-readable in `datetime`. */
function Time({ iso }: { iso: string }) {
  return <time dateTime={iso}>{formatDateTime(iso)}</time>;
}
