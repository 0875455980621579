/**
 * An irreversible action that asks first: pressed, the button turns into a
 * question, with what will change under it (`details`), and "yes" (focused)
 * and "keep" buttons; "yes" runs the action and shows its error, if any, under
 * the question. Cancelling a run or an upgrade and rotating credentials all look
 * and behave this way; an action that starts a run or a rollout then goes to
 * its page (`act` navigates).
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { messageOf } from './components';
import { useAction } from './hooks';

export interface ConfirmedActionProps {
  /** The id of the question, for aria-labelledby. */
  readonly id: string;
  readonly testId: string;
  readonly label: string;
  readonly question: string;
  readonly yes: string;
  readonly busy: string;
  readonly keep: string;
  /** What the error box starts with: "Could not …". */
  readonly failure: string;
  /** The action; a throw shows under the question. */
  readonly act: () => Promise<void>;
  /** What changes, shown under the question before anything is done. */
  readonly details?: ComponentChildren;
  /** The look of the first button: `danger` (default) or `primary`. */
  readonly tone?: 'danger' | 'primary';
  /** Whether "yes" can be pressed (details may say why not). */
  readonly canConfirm?: boolean;
  readonly disabled?: boolean;
}

export function ConfirmedAction(props: ConfirmedActionProps) {
  const [confirming, setConfirming] = useState(false);
  const { busy, error, run } = useAction();
  const confirm = () =>
    run(async () => {
      await props.act();
      setConfirming(false);
    });
  return (
    <div class="run-actions" data-testid={props.testId}>
      {!confirming ? (
        <button type="button" class={props.tone ?? 'danger'} onClick={() => setConfirming(true)} disabled={props.disabled === true}>
          {props.label}
        </button>
      ) : (
        <div class="confirm" role="group" aria-labelledby={props.id}>
          <p id={props.id}>{props.question}</p>
          {props.details}
          <button type="button" class="danger" onClick={() => void confirm()} disabled={busy || props.canConfirm === false} ref={(element) => element?.focus()}>
            {busy ? props.busy : props.yes}
          </button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)} disabled={busy}>
            {props.keep}
          </button>
        </div>
      )}
      {error !== null && (
        <p class="error-box" role="alert">
          {props.failure}: {messageOf(error)}
        </p>
      )}
    </div>
  );
}
