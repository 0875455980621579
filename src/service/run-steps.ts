/**
 * A run's steps as a timeline, derived from the runner's JSON log events
 * (`step_started`, `step_finished`, `step_skipped`, `step_failed`). Pure: the
 * HTTP edge reads the stored lines and hands them here.
 *
 * Only the step fields of an event are read (event, step, step_name, time,
 * duration_ms, msg); everything else on a line is ignored.
 */
import { type RunAction, runActionOf } from '../model/run-action.js';
import { STEPS } from '../model/run-step-tables.js';
import { isStepEvent, parseRunEvent } from '../run-contract/run-events.js';
import type { RunStatus } from '../run/run-record.js';

/** Where a step stands. */
export type StepStatus = 'pending' | 'running' | 'succeeded' | 'skipped' | 'failed';

/** One step of the timeline. */
export interface RunStep {
  /** 1 to the number of steps (`model/run-step-tables.ts`). */
  readonly step: number;
  readonly name: string;
  readonly status: StepStatus;
  readonly startedAt?: Date;
  readonly finishedAt?: Date;
  /** As the runner measured it; else finished minus started. */
  readonly durationMs?: number;
  /** The runner's message for a failed or skipped step. */
  readonly message?: string;
}

/** A scaffold's step names, numbered as in the design (the runner's {@link STEPS}). */
export const STEP_NAMES: Readonly<Record<number, string>> = STEPS;

interface MutableStep {
  step: number;
  name: string;
  status: StepStatus;
  startedAt?: Date;
  finishedAt?: Date;
  durationMs?: number;
  message?: string;
}

/**
 * Folds a run's log lines into its steps.
 *
 * A step still `running` when the run failed or was cancelled did not finish:
 * it is reported `failed` (the runner died or was stopped mid-step). Steps the
 * run never reached stay `pending`.
 *
 * @param lines - the stored lines, in order; `time` is when the service stored each
 * @param status - the run's status, to close steps of a final run
 * @param action - what the run does: its step table (the run action's definition)
 */
export function runStepsOf(lines: Iterable<{ readonly time: Date; readonly line: string }>, status: RunStatus, action: RunAction = 'scaffold'): RunStep[] {
  const steps: MutableStep[] = runActionOf(action).steps.map(({ name }, index) => ({ step: index + 1, name, status: 'pending' }));

  for (const { time, line } of lines) {
    const event = parseStepEvent(line);
    if (event === undefined) continue;
    const step = steps[event.step - 1];
    // A step number beyond this action's table is not this run's event.
    if (step === undefined) continue;
    const at = event.time ?? time;
    switch (event.event) {
      case 'step_started':
        // A step started again (not expected from one runner process) starts over.
        step.status = 'running';
        step.startedAt = at;
        delete step.finishedAt;
        delete step.durationMs;
        delete step.message;
        break;
      case 'step_finished':
      case 'step_failed':
        step.status = event.event === 'step_finished' ? 'succeeded' : 'failed';
        step.finishedAt = at;
        if (event.durationMs !== undefined) step.durationMs = event.durationMs;
        else if (step.startedAt !== undefined) step.durationMs = Math.max(0, at.getTime() - step.startedAt.getTime());
        if (step.startedAt === undefined && event.durationMs !== undefined) step.startedAt = new Date(at.getTime() - event.durationMs);
        if (event.event === 'step_failed' && event.msg !== undefined) step.message = event.msg;
        break;
      case 'step_skipped':
        step.status = 'skipped';
        step.finishedAt = at;
        if (event.msg !== undefined) step.message = event.msg;
        break;
    }
  }

  if (status === 'failed' || status === 'cancelled') {
    for (const step of steps) if (step.status === 'running') step.status = 'failed';
  }
  return steps.map((s) => ({ ...s }));
}

interface StepEvent {
  readonly event: string;
  readonly step: number;
  readonly time?: Date;
  readonly durationMs?: number;
  readonly msg?: string;
}

/** A step event with a step number, through the run contract. */
function parseStepEvent(line: string): StepEvent | undefined {
  const event = parseRunEvent(line);
  if (event === undefined || !isStepEvent(event) || event.step === undefined) return undefined;
  return {
    event: event.event,
    step: event.step,
    ...(event.time === undefined ? {} : { time: event.time }),
    ...(event.duration_ms === undefined ? {} : { durationMs: event.duration_ms }),
    ...(event.msg === undefined ? {} : { msg: event.msg }),
  };
}
