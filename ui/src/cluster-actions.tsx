/**
 * What an operator can do to a generated cluster: upgrade it (a dry run first
 * shows what would change, then a confirmation starts the rollout) or remove it
 * (the operator types the cluster's name, as the API's `confirm` asks, and a
 * removal run starts).
 */
import { useAction } from './hooks.js';
import { useState } from 'preact/hooks';
import { messageOf } from './components';
import { previewUpgrade, removeCluster, startUpgrade, type Removal, type UpgradePreview } from './fleet-api';
import { navigate, paths } from './router';

export function UpgradeAction({ name }: { name: string }) {
  const [preview, setPreview] = useState<UpgradePreview | null>(null);
  const { busy, error, run } = useAction();
  const entry = preview?.clusters.find((c) => c.name === name);
  return (
    <div class="run-actions" data-testid="upgrade-action">
      {preview === null ? (
        <button type="button" class="primary" disabled={busy} onClick={() => void run(async () => setPreview(await previewUpgrade(name)))}>
          {busy ? 'Checking…' : 'Upgrade…'}
        </button>
      ) : (
        <div class="confirm" role="group" aria-labelledby="upgrade-question">
          <p id="upgrade-question" role="status">
            {entry === undefined && 'The dry run said nothing about this cluster.'}
            {entry?.status === 'up_to_date' && 'Already up to date: an upgrade would change nothing.'}
            {entry?.status === 'failed' && `The upgrade would fail: ${entry.message ?? 'no reason given'}.`}
            {entry?.status === 'changed' &&
              `Upgrading re-renders ${name} from the current reference: ${entry.files?.added.length ?? 0} added, ${entry.files?.modified.length ?? 0} modified, ${entry.files?.removed.length ?? 0} removed file(s); ${entry.credentials_kept ?? 0} sealed credential(s) kept as they are.`}
          </p>
          {entry?.status === 'changed' && (
            <ul class="upgrade-files">
              {(['added', 'modified', 'removed'] as const).flatMap((change) =>
                (entry.files?.[change] ?? []).map((file) => (
                  <li key={file}>
                    {change}: <code>{file}</code>
                  </li>
                )),
              )}
            </ul>
          )}
          {entry?.status === 'changed' && (
            <button
              type="button"
              class="primary"
              disabled={busy}
              ref={(element) => element?.focus()}
              onClick={() => void run(async () => navigate(paths.upgrade((await startUpgrade(name)).id)))}
            >
              {busy ? 'Starting…' : 'Yes, upgrade it'}
            </button>
          )}
          <button type="button" class="secondary" disabled={busy} onClick={() => setPreview(null)}>
            {entry?.status === 'changed' ? 'Not now' : 'Close'}
          </button>
        </div>
      )}
      {error !== null && (
        <p class="error-box" role="alert">
          Upgrade refused: {messageOf(error)}
        </p>
      )}
    </div>
  );
}

export function RemoveAction({ name, onRemoved }: { name: string; onRemoved: (removal: Removal) => void }) {
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState('');
  const { busy, error, run } = useAction();
  const remove = async () => {
    if (typed !== name) return;
    await run(async () => onRemoved(await removeCluster(name, typed)));
  };
  return (
    <div class="run-actions" data-testid="remove-action">
      {!confirming ? (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Remove…
        </button>
      ) : (
        <form
          class="confirm"
          aria-labelledby="remove-question"
          aria-describedby="remove-explained"
          onSubmit={(event) => {
            event.preventDefault();
            void remove();
          }}
        >
          <p id="remove-question">
            <strong>Remove {name}?</strong>
          </p>
          <p id="remove-explained">
            This starts a removal run: one commit that deletes the files the generator wrote under <code>clusters/{name}/</code>, followed on the run's page.
            Flux on the cluster then prunes what they deployed. Type the cluster name to confirm.
          </p>
          <div class="field inline">
            <label for="remove-confirm">Cluster name</label>
            <input
              id="remove-confirm"
              autoComplete="off"
              spellcheck={false}
              value={typed}
              ref={(element) => element?.focus()}
              onInput={(event) => setTyped((event.currentTarget as HTMLInputElement).value)}
            />
          </div>
          <button type="submit" class="danger" disabled={busy || typed !== name}>
            {busy ? 'Starting the removal…' : `Remove ${name}`}
          </button>
          <button
            type="button"
            class="secondary"
            disabled={busy}
            onClick={() => {
              setConfirming(false);
              setTyped('');
            }}
          >
            Keep it
          </button>
        </form>
      )}
      {error !== null && (
        <p class="error-box" role="alert">
          Could not remove the cluster: {messageOf(error)}
        </p>
      )}
    </div>
  );
}
