/** The list of runs (scaffolds, upgrades, removals), newest first, refreshed every two seconds. */
import { useRef, useState } from 'preact/hooks';
import { listRuns, type Run, type RunStatus } from './api';
import { ActionBadge, ErrorBox, StatusBadge } from './components';
import { formatAge, formatDateTime, formatDuration, runDuration } from './format';
import { useNow, usePolling, useTitle } from './hooks';
import { onLinkClick, paths, useSearchParam } from './router';
import { shownActionLabel, shownActionOf } from './run-action-view';
import { stepCount, stepTitle } from './steps';

const POLL_MS = 2000;
type Filter = 'all' | 'active' | RunStatus;
const FILTERS: readonly { value: Filter; label: string }[] = [
  { value: 'all', label: 'All runs' },
  { value: 'active', label: 'In flight (pending or running)' },
  { value: 'running', label: 'Running' },
  { value: 'succeeded', label: 'Succeeded' },
  { value: 'failed', label: 'Failed' },
  { value: 'cancelled', label: 'Cancelled' },
];

const FILTER_VALUES: readonly Filter[] = FILTERS.map((f) => f.value);

const isActive = (status: RunStatus) => status === 'pending' || status === 'running';

export function RunsPage() {
  useTitle('Runs');
  const [runs, setRuns] = useState<readonly Run[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  // In the address (`?status=failed`): kept on reload, shared links and back/forward.
  const [filter, setFilter] = useSearchParam<Filter>('status', FILTER_VALUES, 'all');
  const [query, setQuery] = useState('');
  const [announcement, setAnnouncement] = useState('');
  const [updatedAt, setUpdatedAt] = useState<number | null>(null);
  const known = useRef<Map<string, RunStatus> | null>(null);
  const now = useNow();

  usePolling(
    async (signal) => {
      try {
        const page = await listRuns(signal);
        const previous = known.current;
        const changes: string[] = [];
        const next = new Map<string, RunStatus>();
        for (const run of page.items) {
          next.set(run.id, run.status);
          const before = previous?.get(run.id);
          if (previous !== null && before !== run.status)
            changes.push(
              before === undefined
                ? `New ${shownActionLabel(shownActionOf(run)).noun} run for ${run.cluster.name}: ${run.status}.`
                : `${run.cluster.name} is now ${run.status}.`,
            );
        }
        known.current = next;
        if (changes.length > 0) setAnnouncement(changes.slice(0, 5).join(' '));
        setRuns(page.items);
        setError(null);
        setUpdatedAt(Date.now());
      } catch (caught) {
        if (!signal.aborted) setError(caught);
      }
    },
    POLL_MS,
    true,
    null,
  );

  const needle = query.trim().toLowerCase();
  const shown = (runs ?? []).filter(
    (run) =>
      (filter === 'all' || (filter === 'active' ? isActive(run.status) : run.status === filter)) &&
      (needle === '' || run.cluster.name.includes(needle) || run.cluster.domain.includes(needle) || run.id.startsWith(needle)),
  );
  const inFlight = (runs ?? []).filter((run) => isActive(run.status)).length;

  return (
    <>
      <div class="page-head">
        <div class="title-row">
          <h1 tabIndex={-1}>Runs</h1>
          <a href={paths.newScaffold} onClick={onLinkClick} class="button primary" data-testid="new-scaffold">
            New scaffold
          </a>
        </div>
        <p class="lede">
          {runs === null ? 'Loading…' : `${runs.length} run${runs.length === 1 ? '' : 's'}, ${inFlight} in flight.`}{' '}
          <span class="muted">
            Updates every {POLL_MS / 1000} s{updatedAt === null ? '' : `; last at ${new Date(updatedAt).toLocaleTimeString()}`}.
          </span>
        </p>
      </div>
      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>
      {error !== null && <ErrorBox title="The run list could not be refreshed" error={error} />}

      <form class="toolbar" role="search" aria-label="Filter runs" onSubmit={(event) => event.preventDefault()}>
        <div class="field inline">
          <label for="run-filter">Status</label>
          <select id="run-filter" value={filter} onChange={(event) => setFilter((event.currentTarget as HTMLSelectElement).value as Filter)}>
            {FILTERS.map((f) => (
              <option value={f.value} key={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field inline">
          <label for="run-search">Cluster</label>
          <input
            id="run-search"
            type="search"
            placeholder="name, domain or run id"
            value={query}
            onInput={(event) => setQuery((event.currentTarget as HTMLInputElement).value)}
          />
        </div>
      </form>

      {runs !== null && runs.length === 0 && (
        <div class="empty card">
          <p>No runs yet.</p>
          <p>
            <a href={paths.newScaffold} onClick={onLinkClick}>
              Start a new scaffold
            </a>
            : fill in the cluster, preview the files it would write, then start it.
          </p>
        </div>
      )}
      {runs !== null && runs.length > 0 && (
        <div class="table-wrap">
          <table class="runs">
            <caption class="sr-only">Runs, newest first{shown.length === runs.length ? '' : ` (${shown.length} of ${runs.length} shown)`}</caption>
            <thead>
              <tr>
                <th scope="col">Cluster</th>
                <th scope="col">Action</th>
                <th scope="col">Status</th>
                <th scope="col">Current step</th>
                <th scope="col">Age</th>
                <th scope="col">Duration</th>
                <th scope="col">Run</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((run) => {
                const duration = runDuration(run, now);
                return (
                  <tr key={run.id} data-run-id={run.id} data-status={run.status} data-action={shownActionOf(run)}>
                    <th scope="row">
                      <a href={paths.run(run.id)} onClick={onLinkClick} class="run-link">
                        {run.cluster.name}
                      </a>
                      <span class="sub">
                        {run.cluster.domain} · {run.cluster.region}
                      </span>
                    </th>
                    <td>
                      <ActionBadge run={run} />
                    </td>
                    <td>
                      <StatusBadge status={run.status} />
                    </td>
                    <td>
                      {run.step === 0 ? (
                        <span class="muted">not started</span>
                      ) : (
                        <>
                          <span class="step-count">
                            {run.step}/{stepCount(run.action)}
                          </span>{' '}
                          {stepTitle(run.action, run.step) ?? run.step_name}
                        </>
                      )}
                    </td>
                    <td>
                      <time dateTime={run.created_at} title={formatDateTime(run.created_at)}>
                        {formatAge(run.created_at, now)}
                      </time>
                    </td>
                    <td>{duration === undefined ? <span class="muted">–</span> : formatDuration(duration)}</td>
                    <td>
                      <code class="run-id" title={run.id}>
                        {run.id.slice(0, 8)}
                      </code>
                      {run.attempt > 1 && <span class="sub">attempt {run.attempt}</span>}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {shown.length === 0 && <p class="muted">No run matches the filter.</p>}
        </div>
      )}
    </>
  );
}
