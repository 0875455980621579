/**
 * Stopping a rollout from its page, after a confirmation: no further wave
 * starts and the runs under way are cancelled. Commits already landed stay.
 */
import { ConfirmedAction } from './confirmed-action';
import { cancelUpgrade, type Rollout } from './fleet-api';

export function UpgradeCancel({ id, onCancelled }: { id: string; onCancelled: (rollout: Rollout) => void }) {
  return (
    <ConfirmedAction
      id="upgrade-cancel-question"
      testId="upgrade-cancel"
      label="Cancel the upgrade"
      question="Cancel this upgrade? Its runs under way are cancelled and no further wave starts; commits already landed stay."
      yes="Yes, cancel it"
      busy="Cancelling…"
      keep="Keep it going"
      failure="Could not cancel the upgrade"
      act={async () => onCancelled(await cancelUpgrade(id))}
    />
  );
}
