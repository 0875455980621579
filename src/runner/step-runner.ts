/**
 * Running a step table (`model/run-step-tables.ts`) the way every run does:
 * each step logged as `step_started` / `step_finished` / `step_skipped` /
 * `step_failed` with its number and name, a failure wrapped in a StepError that
 * says which step, and the failed result written from it. A scaffold and a
 * fleet change (upgrade, removal) differ only in their tables and the work of
 * each row.
 */
import { failureOf } from '../errors.js';
import type { Logger } from '../logger.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import type { RunStepDefinition, StepNumber } from '../model/run-step-tables.js';
import type { BatchClusterStatus, RunCommit, RunResult } from '../run/run-record.js';

/** What the runner does for one step of the table: the message it starts with, when it is skipped (and why), and its work. */
export interface StepWork {
  readonly message: () => string;
  /** A reason to skip the step, or undefined/empty to run it. */
  readonly skip?: () => string | undefined;
  readonly run: () => Promise<unknown>;
}

/** The error a step ended with, and which step. */
export class StepError extends Error {
  /** Commits the run had pushed before the step failed. */
  commits: readonly RunCommit[] = [];
  /** A batch run: each cluster's status when the step failed. */
  batch: Readonly<Record<string, BatchClusterStatus>> | undefined;

  constructor(
    readonly step: StepNumber,
    override readonly cause: unknown,
    /** The step's event name (its row of the action's table). */
    readonly stepName: string,
  ) {
    super(`step ${step} (${stepName}) failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'StepError';
  }
}

/** How steps are run: where they log, the clock, and the run's cancellation. */
export interface StepContext {
  readonly log: Logger;
  readonly now: () => number;
  readonly signal?: AbortSignal;
}

/**
 * Runs the rows of `table` in order, each through its entry in `work`, skipping
 * those whose rule says so.
 * @throws StepError carrying the step, its name and the original error
 */
export async function runSteps<Name extends string>(
  table: readonly (RunStepDefinition & { readonly name: Name })[],
  work: Readonly<Record<Name, StepWork>>,
  context: StepContext,
): Promise<void> {
  const { log, now, signal } = context;
  for (const [index, { name }] of table.entries()) {
    const step = index + 1;
    const { skip, message, run } = work[name];
    const why = skip?.();
    if (why) {
      log.info({ event: 'step_skipped', step, step_name: name }, why);
      continue;
    }
    const started = now();
    log.info({ event: 'step_started', step, step_name: name }, message());
    try {
      // Steps that do not take the signal themselves (render, commit) still stop here.
      signal?.throwIfAborted();
      await run();
      log.info({ event: 'step_finished', step, step_name: name, duration_ms: now() - started }, `${name} done`);
    } catch (thrown) {
      // A cancel also signals the run's children (git, kubectl share its process
      // group): a child killed by it fails the step with its own error, but the
      // run ended because it was cancelled, and says so.
      const error: unknown = signal?.aborted === true && signal.reason !== undefined ? signal.reason : thrown;
      log.error(
        { event: 'step_failed', step, step_name: name, duration_ms: now() - started, error_code: failureOf(error).code },
        `${name} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      throw new StepError(step, error, name);
    }
  }
}

/** The failed-run result for an error out of a run. Never carries a credential: messages don't. */
export function failedResult(error: unknown, cluster: { readonly name: string }): RunResult {
  const step = error instanceof StepError ? error.step : undefined;
  const { code, transient } = failureOf(error);
  return {
    status: 'failed',
    // A StepError's own message already says "step N (name) failed: …".
    message: error instanceof Error ? error.message : String(error),
    ...(clusterNameSchema.safeParse(cluster.name).success ? { gitops_path: `clusters/${cluster.name}` } : {}),
    commits: error instanceof StepError ? error.commits : [],
    ...(error instanceof StepError && error.batch !== undefined ? { batch: error.batch } : {}),
    ...(step ? { step } : {}),
    error_code: code,
    transient,
  };
}
