/**
 * One upgrade rollout (`GET /api/v1/upgrades/{id}`): its waves and each
 * cluster's outcome, and, when it is delivered through pull requests, each
 * wave's request with its state, followed until the rollout ends.
 */
import { ErrorBox } from './components';
import { getUpgrade, type Rollout } from './fleet-api';
import { usePolledValue, useTitle } from './hooks';
import { RequestTable } from './request-table';
import { rolloutDeliversThroughRequests, shownWaveRequests } from './review-requests';
import { onLinkClick, paths } from './router';

export function UpgradePage({ id }: { id: string }) {
  useTitle('Upgrade');
  const { value: rollout, error } = usePolledValue((signal) => getUpgrade(id, signal), 2000, (current) => current === null || current.state === 'running', id);

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
        <p class="lede">
          The rollout as <code>GET /api/v1/upgrades/{id}</code> reports it.
        </p>
      </div>
      {error !== null && <ErrorBox title="The upgrade could not be read" error={error} />}
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
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {rollout !== null && rolloutDeliversThroughRequests(rollout) && <WaveRequests rollout={rollout} />}
    </>
  );
}

/** Each wave's pull/merge request: the next wave starts only once it is merged. */
function WaveRequests({ rollout }: { rollout: Rollout }) {
  const requests = shownWaveRequests(rollout);
  return (
    <section class="card" aria-labelledby="wave-requests-heading" data-testid="wave-requests">
      <h2 id="wave-requests-heading">Pull requests</h2>
      <p class="hint">One request per wave{rollout.delivery?.auto_merge === true ? ', merged by the service once its checks pass' : ''}; the next wave starts once it is merged.</p>
      {requests.length === 0 ? (
        <p class="muted">{rollout.state === 'running' ? 'None opened yet.' : 'This rollout opened no request.'}</p>
      ) : (
        <RequestTable
          caption="Pull and merge requests of this rollout's waves"
          column="Wave"
          rows={requests.map((request) => ({ request, what: <>{request.wave}<span class="sub">{request.clusters.join(', ')}</span></> }))}
        />
      )}
    </section>
  );
}
