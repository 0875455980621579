/**
 * One run (a scaffold, an upgrade or a removal): its status and error, its
 * action's steps as a timeline, the commits it pushed, an upgrade's or a
 * removal's changes, its pull/merge requests (pull_request delivery), the Flux
 * graph of the tree it produced (not for a removal), what Flux reported while
 * the run waited for Ready (`wait_for_ready`) and its live log.
 * The run is polled every 1.5 s until it is final.
 */
import { useCallback, useRef, useState } from 'preact/hooks';
import { runActionOf } from '../../src/model/run-action.js';
import { ApiError, getRun, type RunDetail } from './api';
import { ActionBadge, ErrorBox, StatusBadge, StepBadge } from './components';
import { fluxReadinessOf } from './flux-readiness';
import { formatDateTime, formatDuration, runDuration } from './format';
import { GraphPanel } from './graph-panel';
import { useNow, usePolling, useTitle } from './hooks';
import type { KustomizationState, LogEntry } from './log-events';
import { LogPanel } from './log-panel';
import { onLinkClick, paths } from './router';
import { commitUrl } from './repository-links';
import { RequestTable } from './request-table';
import { deliversThroughRequests, shownReviewRequests } from './review-requests';
import { RunActions } from './run-actions';
import { runHeading, sealingShown, shownActionOf } from './run-action-view';
import { resealedCredentialsOf, type ResealedCredential } from './resealed-credentials';
import { RunChanges } from './run-changes';
import { shownSteps, stepTitle, type ShownStep } from './steps';

const POLL_MS = 1500;

export function RunPage({ id }: { id: string }) {
  const [run, setRun] = useState<RunDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [announcement, setAnnouncement] = useState('');
  // Bumped after an action (cancel) so the page reads the run again at once.
  const [refresh, setRefresh] = useState(0);
  const lastStatus = useRef<string | null>(null);
  // Folded from the log the LogPanel follows: the runner's `kustomization` and `credential` events.
  const [kustomizations, setKustomizations] = useState<readonly KustomizationState[]>([]);
  const [resealed, setResealed] = useState<readonly ResealedCredential[]>([]);
  const onEntries = useCallback((entries: readonly LogEntry[]) => {
    setKustomizations(fluxReadinessOf(entries));
    setResealed(resealedCredentialsOf(entries));
  }, []);
  const now = useNow();
  const final = run !== null && run.status !== 'pending' && run.status !== 'running';
  const missing = error instanceof ApiError && error.status === 404;
  useTitle(run === null ? 'Run' : `${runHeading(run)} (${run.status})`);

  usePolling(
    async (signal) => {
      try {
        const fresh = await getRun(id, signal);
        if (lastStatus.current !== null && lastStatus.current !== fresh.status) {
          setAnnouncement(`Run ${fresh.cluster.name} is now ${fresh.status}.${fresh.status === 'failed' ? ` ${fresh.message}` : ''}`);
        }
        lastStatus.current = fresh.status;
        setRun(fresh);
        setError(null);
      } catch (caught) {
        if (!signal.aborted) setError(caught);
      }
    },
    POLL_MS,
    !final && !missing,
    `${id}:${refresh}`,
  );

  if (run === null) {
    return (
      <>
        <p class="breadcrumbs">
          <a href={paths.runs} onClick={onLinkClick}>
            Runs
          </a>
        </p>
        <h1 tabIndex={-1}>Run</h1>
        {error === null ? <p class="muted">Loading run {id}…</p> : <ErrorBox title={missing ? 'No such run' : 'The run could not be loaded'} error={error} />}
      </>
    );
  }

  const duration = runDuration(run, now);
  return (
    <>
      <p class="breadcrumbs">
        <a href={paths.runs} onClick={onLinkClick}>
          Runs
        </a>{' '}
        <span aria-hidden="true">/</span> {run.cluster.name}
      </p>
      <div class="page-head run-head">
        <h1 tabIndex={-1}>
          {runHeading(run)} <StatusBadge status={run.status} />
        </h1>
        <p class="lede">
          <ActionBadge run={run} /> {run.cluster.domain} · {run.cluster.region} · run <code>{run.id}</code>
          {run.attempt > 1 ? ` · attempt ${run.attempt}` : ''}
        </p>
      </div>
      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>
      {error !== null && <ErrorBox title="The run could not be refreshed" error={error} />}
      <RunActions run={run} onChanged={() => setRefresh((n) => n + 1)} />

      {run.status === 'failed' || run.status === 'cancelled' ? (
        <div class="error-box run-error" role="alert" data-testid="run-error">
          <p class="error-title">
            {run.status === 'failed'
              ? `The run failed${run.step > 0 ? ` at step ${run.step} (${run.step_name ?? stepTitle(run.action, run.step) ?? ''})` : ''}`
              : 'The run was cancelled'}
          </p>
          <p>{run.message}</p>
        </div>
      ) : (
        run.message !== '' && (
          <p class={`run-message ${run.status === 'succeeded' ? 'success-box' : 'notice'}`} data-testid="run-message">
            {run.message}
          </p>
        )
      )}

      <div class="run-grid">
        <section class="card timeline-card" aria-labelledby="timeline-heading">
          <h2 id="timeline-heading">Steps</h2>
          <Timeline action={run.action} steps={shownSteps(run)} now={now} />
        </section>

        <div class="run-side">
          <section class="card" aria-labelledby="summary-heading">
            <h2 id="summary-heading">Summary</h2>
            <dl class="facts">
              <dt>gitops_path</dt>
              <dd data-testid="gitops-path">{run.gitops_path === null ? <span class="muted">not yet</span> : <code>{run.gitops_path}</code>}</dd>
              <dt>Repository</dt>
              <dd>
                <code class="wrap">{run.repository.url}</code> <span class="muted">branch</span> <code>{run.repository.branch}</code>
              </dd>
              <dt>Reference</dt>
              <dd>
                <code>clusters/{run.reference}</code>
              </dd>
              <dt>Sealing</dt>
              <dd>{sealingShown(run)}</dd>
              <dt>Created</dt>
              <dd>
                {formatDateTime(run.created_at)} <span class="muted">by {run.created_by}</span>
              </dd>
              <dt>Started</dt>
              <dd>{formatDateTime(run.started_at)}</dd>
              <dt>Finished</dt>
              <dd>{formatDateTime(run.finished_at)}</dd>
              <dt>Duration</dt>
              <dd>{duration === undefined ? '–' : formatDuration(duration)}</dd>
              <dt>Job</dt>
              <dd>
                <code class="wrap">{run.job}</code>
              </dd>
            </dl>
          </section>

          <RunChanges run={run} />

          <section class="card" aria-labelledby="commits-heading">
            <h2 id="commits-heading">{runActionOf(run.action).passes.length > 1 ? 'Commits' : 'Commit'}</h2>
            {run.commits.length === 0 ? (
              <p class="muted">{final ? 'This run pushed no commit.' : 'None yet.'}</p>
            ) : (
              <table class="commits">
                <caption class="sr-only">Commits pushed by this run</caption>
                <thead>
                  <tr>
                    <th scope="col">Pass</th>
                    <th scope="col">SHA</th>
                  </tr>
                </thead>
                <tbody>
                  {run.commits.map((commit) => (
                    <tr key={commit.sha}>
                      <td>{commit.pass}</td>
                      <td>
                        <CommitSha repository={run.repository.url} sha={commit.sha} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>

          {deliversThroughRequests(run) && <ReviewRequests run={run} final={final} />}
          {shownActionOf(run) === 'rotate' && <ResealedCredentials credentials={resealed} final={final} />}
          {kustomizations.length > 0 && <FluxReadiness kustomizations={kustomizations} />}
        </div>
      </div>

      {/* A removal leaves no tree to draw. */}
      {runActionOf(run.action).leavesTree && <GraphPanel run={run} />}
      <LogPanel runId={run.id} active={!final} onEntries={onEntries} />
    </>
  );
}

/** The run's pull/merge requests with their state; polled with the run, so a merge shows while the run waits. */
function ReviewRequests({ run, final }: { run: RunDetail; final: boolean }) {
  const requests = shownReviewRequests(run);
  return (
    <section class="card" aria-labelledby="requests-heading" data-testid="review-requests">
      <h2 id="requests-heading">Pull requests</h2>
      {requests.length === 0 ? (
        <p class="muted">{final ? 'This run opened no request.' : 'None opened yet.'}</p>
      ) : (
        <RequestTable
          caption="Pull and merge requests of this run's passes"
          column="Pass"
          rows={requests.map((request) => ({ request, what: request.pass }))}
        />
      )}
    </section>
  );
}

/** A rotation run's resealed credentials, each with its SealedSecret's file and whether its value is the same or fresh. */
function ResealedCredentials({ credentials, final }: { credentials: readonly ResealedCredential[]; final: boolean }) {
  return (
    <section class="card" aria-labelledby="resealed-heading" data-testid="resealed-credentials">
      <h2 id="resealed-heading">Resealed credentials</h2>
      {credentials.length === 0 ? (
        <p class="muted">{final ? 'This run resealed no credential.' : 'None resealed yet.'}</p>
      ) : (
        <ul class="resealed">
          {credentials.map((c) => (
            <li key={c.credential} data-credential={c.credential}>
              <code>{c.credential}</code>: {c.how}
              {c.file !== undefined && (
                <>
                  {' '}
                  in <code class="wrap">{c.file}</code>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Each Kustomization's Ready condition and applied revision, as the runner last saw it while waiting for Flux. */
function FluxReadiness({ kustomizations }: { kustomizations: readonly KustomizationState[] }) {
  return (
    <section class="card" aria-labelledby="flux-heading" data-testid="flux-readiness">
      <h2 id="flux-heading">Flux readiness</h2>
      <div class="table-scroll">
        <table class="flux-readiness">
          <caption class="sr-only">Flux Kustomizations of this run's repository, as last observed</caption>
          <thead>
            <tr>
              <th scope="col">Kustomization</th>
              <th scope="col">Ready</th>
              <th scope="col">Reason</th>
              <th scope="col">Revision</th>
            </tr>
          </thead>
          <tbody>
            {kustomizations.map((k) => (
              <tr key={`${k.namespace}/${k.name}`} data-kustomization={k.name} data-phase={k.phase}>
                <td>
                  <code>
                    {k.namespace}/{k.name}
                  </code>
                </td>
                <td class={`flux-${k.phase}`}>{k.ready ?? 'no condition yet'}</td>
                <td>{k.reason ?? '–'}</td>
                <td>{k.revision === undefined ? <span class="muted">nothing applied</span> : <code class="wrap">{k.revision}</code>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The full SHA, linked to the commit's page when the repository's host is known. */
function CommitSha({ repository, sha }: { repository: string; sha: string }) {
  const code = (
    <code class="sha" data-testid="commit-sha">
      {sha}
    </code>
  );
  const href = commitUrl(repository, sha);
  return href === undefined ? (
    code
  ) : (
    <a href={href} target="_blank" rel="noopener noreferrer" data-testid="commit-link">
      {code}
      <span class="sr-only"> (opens the commit in a new tab)</span>
    </a>
  );
}

function Timeline({ action, steps, now }: { action: RunDetail['action']; steps: readonly ShownStep[]; now: number }) {
  return (
    <ol class="timeline">
      {steps.map((step) => {
        const duration = step.duration_ms ?? (step.status === 'running' && step.started_at !== undefined ? now - Date.parse(step.started_at) : undefined);
        return (
          <li
            key={step.step}
            class={`step step-${step.status}`}
            data-step={step.step}
            data-status={step.status}
            aria-current={step.status === 'running' ? 'step' : undefined}
          >
            <span class="step-marker" aria-hidden="true">
              {step.step}
            </span>
            <div class="step-body">
              <p class="step-title">
                <span class="sr-only">Step {step.step}: </span>
                {stepTitle(action, step.step) ?? step.name} <code class="step-name">{step.name}</code>
              </p>
              <p class="step-meta">
                <StepBadge status={step.status} />
                {duration !== undefined && <span class="step-duration">{formatDuration(duration)}</span>}
              </p>
              {step.message !== undefined && <p class={`step-message${step.status === 'failed' ? ' failed' : ''}`}>{step.message}</p>}
            </div>
          </li>
        );
      })}
    </ol>
  );
}
