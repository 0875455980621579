/** One cluster of the fleet: its provenance, status and last run, its SealedSecrets against the controller's certificate, and the upgrade and remove actions. */
import { Fragment } from 'preact';
import { ApiError } from './api';
import { RemoveAction, UpgradeAction } from './cluster-actions';
import { ClusterStateBadge, ErrorBox, StatusBadge } from './components';
import { getCluster } from './fleet-api';
import { formatDateTime } from './format';
import { usePolledValue, useTitle } from './hooks';
import { onLinkClick, paths } from './router';
import { SealingPanel } from './sealing-panel';

export function ClusterPage({ name }: { name: string }) {
  useTitle(`Cluster ${name}`);
  const { value: cluster, error } = usePolledValue(
    (signal) => getCluster(name, signal),
    10_000,
    () => true,
    name,
  );

  const missing = error instanceof ApiError && error.status === 404;
  return (
    <>
      <div class="page-head">
        <p class="breadcrumbs">
          <a href={paths.fleet} onClick={onLinkClick}>
            Fleet
          </a>{' '}
          / {name}
        </p>
        <h1 tabIndex={-1}>
          Cluster {name} {cluster !== null && <ClusterStateBadge cluster={cluster} />}
        </h1>
      </div>
      {error !== null && <ErrorBox title={missing ? 'No such cluster on the branch' : 'The cluster could not be read'} error={error} />}
      {cluster !== null && (
        <>
          {cluster.state === 'incomplete' && (
            <p class="notice" data-testid="cluster-incomplete">
              Only the infrastructure pass is in Git (<code>provenance.yaml</code> records <code>pass: infrastructure</code>): no sealed credentials, no
              database and no apps. The scaffold that wrote it did not finish;{' '}
              {cluster.last_run === undefined ? (
                'start it again'
              ) : (
                <a href={paths.run(cluster.last_run.id)} onClick={onLinkClick}>
                  retry its run
                </a>
              )}{' '}
              to complete the tree.
            </p>
          )}
          <section class="card" aria-labelledby="cluster-facts">
            <h2 id="cluster-facts">Details</h2>
            <dl class="facts">
              <dt>Kind</dt>
              <dd>{cluster.kind}</dd>
              <dt>gitops_path</dt>
              <dd>
                <code>{cluster.gitops_path}</code>
              </dd>
              {cluster.domain !== undefined && (
                <>
                  <dt>Domain</dt>
                  <dd>{cluster.domain}</dd>
                  <dt>Region</dt>
                  <dd>{cluster.region}</dd>
                </>
              )}
              {(['role', 'infra_provider', 'dns_provider'] as const).map((key) =>
                cluster[key] === undefined ? null : (
                  <Fragment key={key}>
                    <dt>{key}</dt>
                    <dd>{cluster[key]}</dd>
                  </Fragment>
                ),
              )}
              {cluster.kind === 'generated' && (
                <>
                  <dt>Opt-in layers</dt>
                  <dd data-testid="enabled-layers">
                    {cluster.enabled_layers === undefined ? (
                      <span class="muted">none enabled: every opt-in layer ships suspended</span>
                    ) : (
                      cluster.enabled_layers.join(', ')
                    )}
                  </dd>
                  <dt>Previews</dt>
                  <dd data-testid="previews">{cluster.previews === true ? 'an environment per labelled pull/merge request' : 'off'}</dd>
                </>
              )}
              {cluster.provenance !== undefined && (
                <>
                  <dt>Rendered from</dt>
                  <dd>
                    <code>{cluster.provenance.platform_commit ?? 'unknown'}</code>
                    {cluster.behind?.current !== undefined && (
                      <span class="sub">
                        current platform commit <code>{cluster.behind.current}</code>
                      </span>
                    )}
                  </dd>
                  <dt>Generator</dt>
                  <dd>
                    {cluster.provenance.generator_version ?? '–'}, reference {cluster.provenance.reference ?? '–'}, pass {cluster.provenance.pass ?? '–'},{' '}
                    {cluster.provenance.files ?? 0} files
                  </dd>
                </>
              )}
              <dt>Last run</dt>
              <dd>
                {cluster.last_run === undefined ? (
                  <span class="muted">none from this service</span>
                ) : (
                  <>
                    <a href={paths.run(cluster.last_run.id)} onClick={onLinkClick}>
                      <code>{cluster.last_run.id.slice(0, 8)}</code>
                    </a>{' '}
                    <StatusBadge status={cluster.last_run.status} /> {formatDateTime(cluster.last_run.created_at)}
                  </>
                )}
              </dd>
            </dl>
          </section>
          {cluster.sealing !== undefined && <SealingPanel key={name} name={cluster.name} sealing={cluster.sealing} generated={cluster.kind === 'generated'} />}
          {cluster.kind === 'generated' ? (
            <section class="card" aria-labelledby="cluster-actions">
              <h2 id="cluster-actions">Actions</h2>
              <UpgradeAction name={cluster.name} />
              <RemoveAction name={cluster.name} />
            </section>
          ) : (
            <p class="muted">
              {cluster.kind === 'reference'
                ? 'The reference environment is not upgraded or removed from here.'
                : 'A directory without provenance: the service neither upgrades nor removes it.'}
            </p>
          )}
        </>
      )}
    </>
  );
}
