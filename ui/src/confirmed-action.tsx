/**
 * An irreversible action that asks first: pressed, the button turns into a
 * question, with what will change under it (`details`), and "yes" (focused)
 * and "keep" buttons; "yes" runs the action and shows its error, if any, under
 * the question. Cancelling a run or an upgrade, rotating credentials, a fleet
 * upgrade and removing a cluster all look and behave this way; an action that
 * starts a run or a rollout then goes to its page (`act` navigates).
 */
import type { ComponentChildren } from 'preact';
import { useCallback, useState } from 'preact/hooks';
import { messageOf } from './components';
import { useAction } from './hooks';

export interface ConfirmedActionProps {
  /** The id of the question, for aria-labelledby. */
  readonly id: string;
  readonly testId: string;
  readonly label: string;
  readonly question: ComponentChildren;
  readonly yes: string;
  readonly busy: string;
  readonly keep: string;
  /** What the error box starts with: "Could not …". */
  readonly failure: string;
  /** The action; a throw shows under the question; `false`: not done (the details say why), the question stays. */
  readonly act: () => Promise<void | false>;
  /** What changes, shown under the question before anything is done. */
  readonly details?: ComponentChildren;
  /**
   * Read what `details` shows before the question opens (a dry run), the first
   * button saying `preparing` meanwhile; a throw shows in the error box and the
   * question stays closed.
   */
  readonly prepare?: () => Promise<void>;
  readonly preparing?: string;
  /** Called when the question closes unanswered ("keep"), to forget what was typed or read. */
  readonly onKeep?: () => void;
  /** `details`: a field in the details takes the focus (the name to type), not "yes". */
  readonly focus?: 'yes' | 'details';
  /** The id of the text saying what "yes" does, for aria-describedby. */
  readonly describedBy?: string;
  /** The look of the first button: `danger` (default) or `primary`. */
  readonly tone?: 'danger' | 'primary';
  /** Whether "yes" can be pressed (details may say why not). */
  readonly canConfirm?: boolean;
  readonly disabled?: boolean;
}

export function ConfirmedAction(props: ConfirmedActionProps) {
  const [confirming, setConfirming] = useState(false);
  const { busy, error, run } = useAction();
  // One stable ref: Preact calls it on mount only, so a re-render (typing in the details) does not pull the focus back.
  const focusOnMount = useCallback((element: HTMLElement | null) => element?.focus(), []);
  const open = () => {
    if (props.prepare === undefined) {
      setConfirming(true);
      return;
    }
    const prepare = props.prepare;
    void run(async () => {
      await prepare();
      setConfirming(true);
    });
  };
  const confirm = () =>
    run(async () => {
      if ((await props.act()) !== false) setConfirming(false);
    });
  return (
    <div class="run-actions" data-testid={props.testId}>
      {!confirming ? (
        <button type="button" class={props.tone ?? 'danger'} onClick={open} disabled={busy || props.disabled === true}>
          {busy && props.preparing !== undefined ? props.preparing : props.label}
        </button>
      ) : (
        // A form, so Enter in a field of the details answers "yes" as the button would.
        <form
          class="confirm"
          aria-labelledby={props.id}
          {...(props.describedBy === undefined ? {} : { 'aria-describedby': props.describedBy })}
          onSubmit={(event) => {
            event.preventDefault();
            if (!busy && props.canConfirm !== false) void confirm();
          }}
        >
          <p id={props.id}>{props.question}</p>
          {props.details}
          <button type="submit" class="danger" disabled={busy || props.canConfirm === false} ref={props.focus === 'details' ? undefined : focusOnMount}>
            {busy ? props.busy : props.yes}
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setConfirming(false);
              props.onKeep?.();
            }}
            disabled={busy}
          >
            {props.keep}
          </button>
        </form>
      )}
      {error !== null && (
        <p class="error-box" role="alert">
          {props.failure}: {messageOf(error)}
        </p>
      )}
    </div>
  );
}
