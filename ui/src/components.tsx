/** Small shared pieces: status badges, error boxes, visually hidden text. */
import type { ComponentChildren } from 'preact';
import type { FileChange, RunAction, RunStatus } from './api';
import { shownActionLabel, shownActionOf } from './run-action-view';
import type { Run } from './run-types';
import type { ShownStepStatus } from './steps';
import { ApiError } from './api';

const RUN_ICONS: Readonly<Record<RunStatus, string>> = { pending: '○', running: '●', succeeded: '✓', failed: '✕', cancelled: '⊘' };
const STEP_ICONS: Readonly<Record<ShownStepStatus, string>> = {
  pending: '○',
  running: '●',
  succeeded: '✓',
  skipped: '↷',
  failed: '✕',
  'not-run': '–',
  cancelled: '⊘',
};

export function StatusBadge({ status }: { status: RunStatus }) {
  return (
    <span class={`badge badge-${status}`} data-status={status}>
      <span aria-hidden="true">{RUN_ICONS[status]}</span> {status}
    </span>
  );
}

export function StepBadge({ status }: { status: ShownStepStatus }) {
  return (
    <span class={`badge badge-${status}`} data-status={status}>
      <span aria-hidden="true">{STEP_ICONS[status]}</span> {status === 'not-run' ? 'not run' : status}
    </span>
  );
}

/** What a run does: scaffold, upgrade, removal or rotation (the word is always shown; the shape is not the only cue). */
export function ActionBadge({ run }: { run: { readonly action: RunAction; readonly rotation: Run['rotation'] } }) {
  const shown = shownActionOf(run);
  const { noun, icon } = shownActionLabel(shown);
  return (
    <span class={`badge action action-${shown}`} data-action={shown}>
      <span aria-hidden="true">{icon}</span> {noun}
    </span>
  );
}

const CHANGE_LETTERS: Readonly<Record<FileChange, string>> = { added: 'A', modified: 'M', removed: 'D', unchanged: '=' };

/** A one-letter change mark; the word is there for screen readers and as the tooltip. */
export function ChangeBadge({ change }: { change: FileChange }) {
  return (
    <span class={`change change-${change}`} title={change} data-change={change}>
      <span aria-hidden="true">{CHANGE_LETTERS[change]}</span>
      <span class="sr-only">{change}</span>
    </span>
  );
}

export function SrOnly({ children }: { children: ComponentChildren }) {
  return <span class="sr-only">{children}</span>;
}

/** The message of an error, as the page shows it. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

export function ErrorBox({ title, error }: { title: string; error: unknown }) {
  return (
    <div class="error-box" role="alert">
      <p class="error-title">{title}</p>
      <p>{messageOf(error)}</p>
    </div>
  );
}

const CLUSTER_STATUS: Readonly<Record<string, { icon: string; label: string; badge: string }>> = {
  up_to_date: { icon: '✓', label: 'up to date', badge: 'succeeded' },
  behind: { icon: '↻', label: 'behind', badge: 'running' },
  unknown: { icon: '?', label: 'unknown', badge: 'pending' },
  not_applicable: { icon: '–', label: 'reference', badge: 'not-run' },
};

const CLUSTER_STATE: Readonly<Record<string, { icon: string; label: string; badge: string }>> = {
  up_to_date: { icon: '✓', label: 'up to date', badge: 'succeeded' },
  complete: { icon: '✓', label: 'complete', badge: 'succeeded' },
  behind: { icon: '↻', label: 'behind', badge: 'running' },
  incomplete: { icon: '◐', label: 'incomplete: infrastructure only', badge: 'failed' },
  failed: { icon: '✕', label: 'last run failed', badge: 'failed' },
  removing: { icon: '…', label: 'removing', badge: 'running' },
};

/**
 * Where a cluster stands: its `state` from what Git holds (complete, incomplete,
 * failed, behind, up to date, removing); the reference and unmanaged
 * directories, which have none, by their kind.
 */
export function ClusterStateBadge({ cluster }: { cluster: { readonly kind: string; readonly status: string; readonly state?: string } }) {
  if (cluster.state === undefined) {
    if (cluster.kind !== 'generated') {
      return (
        <span class="badge badge-not-run" data-cluster-state={cluster.kind}>
          <span aria-hidden="true">–</span> {cluster.kind}
        </span>
      );
    }
    return <ClusterStatusBadge status={cluster.status} />;
  }
  const shown = CLUSTER_STATE[cluster.state] ?? { icon: '?', label: cluster.state, badge: 'pending' };
  return (
    <span class={`badge badge-${shown.badge}`} data-cluster-state={cluster.state} data-cluster-status={cluster.status}>
      <span aria-hidden="true">{shown.icon}</span> {shown.label}
    </span>
  );
}

/** A cluster's standing against the reference: up to date, behind, unknown (the reference itself is not applicable). */
export function ClusterStatusBadge({ status }: { status: string }) {
  const shown = CLUSTER_STATUS[status] ?? { icon: '?', label: status, badge: 'pending' };
  return (
    <span class={`badge badge-${shown.badge}`} data-cluster-status={status}>
      <span aria-hidden="true">{shown.icon}</span> {shown.label}
    </span>
  );
}

const REVIEW_STATE: Readonly<Record<string, { icon: string; badge: string }>> = {
  open: { icon: '●', badge: 'running' },
  merged: { icon: '✓', badge: 'succeeded' },
  closed: { icon: '✕', badge: 'failed' },
};

/** A pull/merge request's state: open (waiting for review or checks), merged, or closed without merge. */
export function ReviewStateBadge({ state }: { state: string }) {
  const shown = REVIEW_STATE[state] ?? { icon: '?', badge: 'pending' };
  return (
    <span class={`badge badge-${shown.badge}`} data-review-state={state}>
      <span aria-hidden="true">{shown.icon}</span> {state}
    </span>
  );
}
