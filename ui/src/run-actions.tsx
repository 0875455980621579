/**
 * What an operator can do to a run from its page: cancel it while it is
 * active (after a confirmation), or retry it once it failed or was cancelled.
 * A retry is a new run; the service never stores secrets, so the retry form
 * asks again for the ones this run used (its certificate or kubeconfig, and
 * optionally a registry pull secret, a repository token or a GitHub App). An
 * upgrade or a removal asks for nothing: it seals nothing, and it reaches the
 * repository with the service's own forge credentials, as its first attempt did.
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError, cancelRun, retryRun, type RunDetail } from './api';
import { messageOf } from './components';
import { ConfirmedAction } from './confirmed-action';
import { navigate, paths } from './router';
import { actionName } from './run-action-view';
import { clearedSecrets, EMPTY_SECRETS, SECRET_FIELDS, SecretFields, secretIssues, secretsRequest, type SealingMode, type SecretValues } from './secret-fields';
import { sealingModesOf } from './secret-values';
import { forgeDescriptor, isForgeName } from '../../src/model/forges.js';

export function RunActions({ run, onChanged }: { run: RunDetail; onChanged: () => void }) {
  const active = run.status === 'pending' || run.status === 'running';
  const retryable = run.status === 'failed' || run.status === 'cancelled';
  if (active) return <CancelAction run={run} onChanged={onChanged} />;
  if (retryable) return <RetryAction run={run} />;
  return null;
}

function CancelAction({ run, onChanged }: { run: RunDetail; onChanged: () => void }) {
  const cancel = async () => {
    try {
      await cancelRun(run.id);
      onChanged();
    } catch (caught) {
      // 409: it finished meanwhile; the next poll shows how.
      if (caught instanceof ApiError && caught.status === 409) onChanged();
      throw caught;
    }
  };
  return (
    <ConfirmedAction
      id="cancel-question"
      testId="run-actions"
      label="Cancel the run"
      question="Cancel this run? Its job is stopped; commits already pushed stay."
      yes="Yes, cancel it"
      busy="Cancelling…"
      keep="Keep it running"
      failure="Could not cancel the run"
      act={cancel}
    />
  );
}

function RetryAction({ run }: { run: RunDetail }) {
  const modes: readonly SealingMode[] = sealingModesOf(run.sealing);
  // The runner reads a GitHub App only for pull requests on GitHub, as the run was started.
  const forge = run.delivery?.forge;
  const githubApp = run.delivery?.mode === 'pull_request' && forge !== undefined && isForgeName(forge) && forgeDescriptor(forge).acceptsGithubApp;
  const [open, setOpen] = useState(false);
  const [secrets, setSecrets] = useState<SecretValues>({ ...EMPTY_SECRETS, mode: modes[0] ?? 'certificate' });
  const [issues, setIssues] = useState<Map<string, string>>(new Map());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  // An upgrade or a removal takes no caller credential (the service refuses any): the retry sends none.
  const fleetRun = run.sealing === 'none';
  const submit = async (event: Event) => {
    event.preventDefault();
    const found = fleetRun ? new Map<string, string>() : secretIssues(secrets, githubApp);
    setIssues(found);
    if (found.size > 0) return;
    setBusy(true);
    setError(null);
    try {
      const accepted = await retryRun(run.id, fleetRun ? {} : secretsRequest(secrets, githubApp));
      setSecrets(clearedSecrets);
      navigate(paths.run(accepted.id));
    } catch (caught) {
      setBusy(false);
      if (caught instanceof ApiError && caught.fields.length > 0) {
        const fromApi = new Map<string, string>();
        for (const issue of caught.fields) {
          const id = SECRET_FIELDS.find((f) => f.api.includes(issue.field) || f.api.some((a) => issue.field.startsWith(`${a}.`)))?.id ?? 'form';
          fromApi.set(id, issue.message);
        }
        setIssues(fromApi);
      } else {
        setError(caught);
      }
    }
  };

  if (!open) {
    return (
      <div class="run-actions" data-testid="run-actions">
        <button
          type="button"
          class="primary"
          onClick={() => {
            setOpen(true);
            setTimeout(() => heading.current?.focus(), 0);
          }}
        >
          Retry the run
        </button>
      </div>
    );
  }
  return (
    <form class="card retry-form" onSubmit={submit} noValidate aria-labelledby="retry-heading" data-testid="retry-form">
      <h2 id="retry-heading" tabIndex={-1} ref={heading}>
        Retry {run.cluster.name}
      </h2>
      <p class="hint">
        {fleetRun ? (
          <>
            A new {actionName(run.action)} run (attempt {run.attempt + 1}) of the same cluster, repository and branch. It seals nothing and reaches the
            repository with the service&rsquo;s own forge credentials, as the first attempt did: there is nothing to give again.
          </>
        ) : (
          <>
            A new run (attempt {run.attempt + 1}) with the same cluster, repository, branch and reference. The service keeps no secret, so give this run’s{' '}
            {run.sealing === 'certificate' ? 'sealing certificate' : 'kubeconfig'} again.
          </>
        )}
      </p>
      {issues.has('form') && (
        <p class="error-box" role="alert">
          {issues.get('form')}
        </p>
      )}
      {!fleetRun && <SecretFields values={secrets} onChange={setSecrets} issues={issues} modes={modes} githubApp={githubApp} />}
      {error !== null && (
        <p class="error-box" role="alert">
          Could not retry the run: {messageOf(error)}
        </p>
      )}
      <div class="form-actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Starting…' : 'Start the retry'}
        </button>
        <button type="button" class="secondary" onClick={() => setOpen(false)} disabled={busy}>
          Close
        </button>
      </div>
    </form>
  );
}
