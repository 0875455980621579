/**
 * The executor port: where a run's scaffold-runner actually executes.
 * `kubernetes/kube-job-executor.ts` runs it as a Job; `service/local-executor.ts`
 * as a child process (embedded mode). The service only talks to this interface.
 */
import type { RunResult, RunSecrets, RunRecord } from '../run/run-record.js';

/** What the executor knows of a run's process right now. */
export type ExecutionState =
  | { readonly state: 'pending' }
  | { readonly state: 'running' }
  | { readonly state: 'succeeded'; readonly result: RunResult }
  | { readonly state: 'failed'; readonly result: RunResult }
  /** The executor has no trace of the run (never started, or cleaned up and lost). */
  | { readonly state: 'missing' };

/** Runs scaffold-runner for a run. */
export interface RunExecutor {
  /**
   * Starts the runner for `run`. Idempotent per run id: starting an already
   * started run returns its existing job name.
   * @returns the job name (`scaffold-<id>`)
   */
  start(run: RunRecord, secrets: RunSecrets): Promise<{ readonly job: string }>;
  /** Current state, derived from the executor (Job status / process exit and result file). */
  inspect(run: RunRecord): Promise<ExecutionState>;
  /**
   * The runner's stdout lines (JSON events). With `follow`, keeps yielding until the
   * run ends or `signal` aborts.
   *
   * Each call replays the output from its start. Output from several sources
   * (a Job's retried pods) comes source by source, each one from its own start and
   * preceded by its source line (`output-source.ts`); a source that is gone (a
   * deleted pod) may be missing from a later call. Output with no source line is
   * one unnamed source.
   */
  logs(run: RunRecord, options: { readonly follow: boolean; readonly signal?: AbortSignal }): AsyncIterable<string>;
  /** Stops the run's process (deletes the Job with its pods / kills the child). Idempotent. */
  cancel(run: RunRecord): Promise<void>;
}
