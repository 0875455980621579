/**
 * Stopping a rollout from its page, after a confirmation: no further wave
 * starts and the runs under way are cancelled. Commits already landed stay.
 */
import { useState } from 'preact/hooks';
import { messageOf } from './components';
import { cancelUpgrade, type Rollout } from './fleet-api';
import { useAction } from './hooks';

export function UpgradeCancel({ id, onCancelled }: { id: string; onCancelled: (rollout: Rollout) => void }) {
  const [confirming, setConfirming] = useState(false);
  const { busy, error, run } = useAction();
  const confirm = () =>
    run(async () => {
      const cancelled = await cancelUpgrade(id);
      setConfirming(false);
      onCancelled(cancelled);
    });
  return (
    <div class="run-actions" data-testid="upgrade-cancel">
      {!confirming ? (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Cancel the upgrade
        </button>
      ) : (
        <div class="confirm" role="group" aria-labelledby="upgrade-cancel-question">
          <p id="upgrade-cancel-question">Cancel this upgrade? Its runs under way are cancelled and no further wave starts; commits already landed stay.</p>
          <button type="button" class="danger" onClick={() => void confirm()} disabled={busy} ref={(element) => element?.focus()}>
            {busy ? 'Cancelling…' : 'Yes, cancel it'}
          </button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)} disabled={busy}>
            Keep it going
          </button>
        </div>
      )}
      {error !== null && (
        <p class="error-box" role="alert">
          Could not cancel the upgrade: {messageOf(error)}
        </p>
      )}
    </div>
  );
}
