/**
 * The runner's steps as the page shows them: their titles, from the step
 * table of the run's action, and their states made consistent with the run's
 * summary. The API derives step states from log events, so a step that has not
 * logged yet is `pending` even when the summary already tells its fate: 4–5 are
 * skipped from the start of a scaffold that was given its certificate, and
 * nothing after a failure (or a cancellation) will run.
 */
import { type RunAction, runActionOf } from '../../src/model/run-action.js';
import type { StepName } from '../../src/model/run-step-tables.js';
import type { RunDetail, RunStep, StepStatus } from './run-types.js';

/** How the dashboard names step `step` of a run that does `action` (`step_name` in the API): the run contract's title; undefined beyond the table. */
export function stepTitle(action: RunAction, step: number): string | undefined {
  return runActionOf(action).steps[step - 1]?.title;
}

/** How many steps a run that does `action` has. */
export function stepCount(action: RunAction): number {
  return runActionOf(action).steps.length;
}

/**
 * A step's state on the page: the API's, plus "not run" for steps a final run
 * never reached and "cancelled" for the step a cancellation stopped.
 */
export type ShownStepStatus = StepStatus | 'not-run' | 'cancelled';

export interface ShownStep extends Omit<RunStep, 'status'> {
  readonly status: ShownStepStatus;
}

/** The steps that fetch the sealing certificate (a scaffold's 4–5): a run given one never runs them. */
const CERTIFICATE_STEPS: ReadonlySet<string> = new Set<StepName>(['wait-for-sealing-controller', 'fetch-sealing-certificate']);

/** The run's steps with the states its summary implies. */
export function shownSteps(run: Pick<RunDetail, 'action' | 'status' | 'sealing' | 'steps'>): ShownStep[] {
  const final = run.status === 'failed' || run.status === 'cancelled';
  return run.steps.map((step): ShownStep => {
    if (step.status === 'pending' && run.sealing === 'certificate' && CERTIFICATE_STEPS.has(runActionOf(run.action).steps[step.step - 1]?.name ?? '')) {
      return { ...step, status: 'skipped', message: step.message ?? 'The sealing certificate came with the request.' };
    }
    // The step in flight when the run was cancelled was stopped by it (the runner reports the stop as its failure).
    if (run.status === 'cancelled' && (step.status === 'running' || step.status === 'failed')) {
      return { ...step, status: 'cancelled', message: 'Stopped: the run was cancelled.' };
    }
    // A failed run's step still "running" is the one it failed in, whatever its last event said.
    if (run.status === 'failed' && step.status === 'running') return { ...step, status: 'failed' };
    if (final && step.status === 'pending') {
      return { ...step, status: 'not-run', message: step.message ?? `Not run: the run ${run.status === 'failed' ? 'failed' : 'was cancelled'}.` };
    }
    return step;
  });
}
