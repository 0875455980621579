/**
 * What an operator can do to a generated cluster: upgrade it (a dry run first
 * shows what would change, each file's diff in the dry run's viewer, then a confirmation starts the rollout) or remove it
 * (the removal's dry run lists the files it deletes and keeps, the operator
 * types the cluster's name, as the API's `confirm` asks, and the page goes to
 * the removal run it started, as after any action). Each confirmation also asks
 * how the commit reaches the branch: pushed, or through a pull/merge request the service opens.
 * Both are the one confirmation of every irreversible action (`ConfirmedAction`).
 */
import { useState } from 'preact/hooks';
import { previewRemoval, previewUpgrade, removeCluster, startUpgrade, type RemovalPreview, type UpgradePreview } from './fleet-api';
import { fleetConfirmation } from './fleet-delivery';
import { useFleetDelivery } from './fleet-delivery-choice';
import { UpgradeDiff } from './fleet-upgrade';
import { ConfirmedAction } from './confirmed-action';
import { navigate, paths } from './router';
import { removalShown } from './run-action-view';
import { KeptFiles } from './run-changes';

/** One stable ref callback: Preact calls it on mount only, so choosing a delivery (a re-render) does not pull the focus back. */
const focusOnMount = (element: HTMLElement | null) => element?.focus();

export function UpgradeAction({ name }: { name: string }) {
  const [preview, setPreview] = useState<UpgradePreview | null>(null);
  const delivery = useFleetDelivery('upgrade', name);
  const entry = preview?.clusters.find((c) => c.name === name);
  const changed = entry?.status === 'changed';
  // No delivery yet: its fields say what is missing, and the question stays.
  const upgrade = async (): Promise<void | false> => {
    const body = delivery.take();
    if (body === null) return false;
    navigate(paths.upgrade((await startUpgrade(name, body)).id));
  };
  return (
    <ConfirmedAction
      id="upgrade-question"
      testId="upgrade-action"
      tone="primary"
      label="Upgrade…"
      preparing="Checking…"
      prepare={async () => setPreview(await previewUpgrade(name))}
      question={
        <>
          {entry === undefined && 'The dry run said nothing about this cluster.'}
          {entry?.status === 'up_to_date' && 'Already up to date: an upgrade would change nothing.'}
          {entry?.status === 'failed' && `The upgrade would fail: ${entry.message ?? 'no reason given'}.`}
          {entry?.status === 'changed' &&
            `Upgrading re-renders ${name} from the current reference: ${entry.files?.added.length ?? 0} added, ${entry.files?.modified.length ?? 0} modified, ${entry.files?.removed.length ?? 0} removed file(s); ${entry.credentials_kept ?? 0} sealed credential(s) kept as they are.`}
        </>
      }
      yes="Yes, upgrade it"
      busy="Starting…"
      keep={changed ? 'Not now' : 'Close'}
      failure="Upgrade refused"
      canConfirm={changed}
      act={upgrade}
      onKeep={() => {
        setPreview(null);
        delivery.reset();
      }}
      details={
        entry?.status === 'changed' && (
          <>
            <ul class="upgrade-files">
              {(['added', 'modified', 'removed'] as const).flatMap((change) =>
                (entry.files?.[change] ?? []).map((file) => (
                  <li key={file}>
                    {change}: <code>{file}</code>
                  </li>
                )),
              )}
            </ul>
            {entry.diff !== undefined && <UpgradeDiff cluster={entry} />}
            {delivery.fields}
            <p id="upgrade-delivery">{fleetConfirmation('upgrade', name, delivery.values)}</p>
          </>
        )
      }
    />
  );
}

export function RemoveAction({ name }: { name: string }) {
  // The removal's dry run: what the confirmation lists, read when "Remove…" is pressed.
  const [preview, setPreview] = useState<RemovalPreview | null>(null);
  const [typed, setTyped] = useState('');
  const [deleteData, setDeleteData] = useState(false);
  const [kubeconfig, setKubeconfig] = useState('');
  const delivery = useFleetDelivery('remove', name);
  // Deleting the data is pushed and needs the kubeconfig: the run waits for the cluster's Flux between its two commits.
  const ready = typed === name && (!deleteData || kubeconfig.trim() !== '');
  // As after every action: the run it started, which follows the removal to its commit.
  const remove = async (): Promise<void | false> => {
    if (!ready) return false;
    const body = deleteData ? undefined : delivery.take();
    // No delivery yet: its fields say what is missing, and the question stays.
    if (body === null) return false;
    const removal = deleteData ? await removeCluster(name, typed, undefined, { kubeconfig }) : await removeCluster(name, typed, body);
    navigate(paths.run(removal.run.id));
  };
  const shown = preview === null ? null : removalShown(preview);
  return (
    <ConfirmedAction
      id="remove-question"
      testId="remove-action"
      label="Remove…"
      preparing="Checking…"
      prepare={async () => setPreview(await previewRemoval(name))}
      question={<strong>Remove {name}?</strong>}
      describedBy="remove-explained"
      focus="details"
      yes={deleteData ? `Remove ${name} and its data` : `Remove ${name}`}
      busy="Starting the removal…"
      keep="Keep it"
      failure="Could not remove the cluster"
      canConfirm={ready}
      act={remove}
      onKeep={() => {
        setPreview(null);
        setTyped('');
        setDeleteData(false);
        setKubeconfig('');
        delivery.reset();
      }}
      details={
        shown !== null && (
          <>
            <div data-testid="removal-files">
              <p>{shown.summary}</p>
              <ul class="upgrade-files">
                {shown.removed.map((file) => (
                  <li key={file}>
                    <code class="wrap">{file}</code>
                  </li>
                ))}
              </ul>
            </div>
            <KeptFiles files={shown.kept} testId="removal-kept" lead="Kept, as they are not the generator's:" />
            {shown.fluxBootstrap !== undefined && <p class="notice">{shown.fluxBootstrap}</p>}
            <p id="remove-explained">{fleetConfirmation('remove', name, delivery.values)}</p>
            <div class="field">
              <label>
                <input
                  type="checkbox"
                  id="remove-delete-data"
                  checked={deleteData}
                  onChange={(event) => setDeleteData((event.currentTarget as HTMLInputElement).checked)}
                />{' '}
                Delete the data too
              </label>
              <p class="muted" id="remove-delete-data-hint">
                Namespaces, StatefulSets and volumes marked prune: disabled go as well. Needs the cluster’s kubeconfig: the run pushes a commit lifting that
                mark, waits until the cluster’s Flux has applied it, and only then pushes the removal (always pushed, no pull request).
              </p>
            </div>
            {deleteData ? (
              <div class="field">
                <label for="remove-kubeconfig">Kubeconfig of {name} (required to delete the data)</label>
                <textarea
                  id="remove-kubeconfig"
                  rows={6}
                  spellcheck={false}
                  autoComplete="off"
                  aria-describedby="remove-delete-data-hint"
                  value={kubeconfig}
                  onInput={(event) => setKubeconfig((event.currentTarget as HTMLTextAreaElement).value)}
                />
              </div>
            ) : (
              delivery.fields
            )}
            <div class="field inline">
              <label for="remove-confirm">Cluster name</label>
              <input
                id="remove-confirm"
                autoComplete="off"
                spellcheck={false}
                value={typed}
                ref={focusOnMount}
                onInput={(event) => setTyped((event.currentTarget as HTMLInputElement).value)}
              />
            </div>
          </>
        )
      }
    />
  );
}
