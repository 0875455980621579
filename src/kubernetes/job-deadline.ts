/**
 * How long a run's Job may be active (`activeDeadlineSeconds`) before
 * Kubernetes ends it with `DeadlineExceeded`: the run's work, plus every wait
 * the request asked for.
 *
 * A fixed 30 minutes ended runs that were doing what they were asked: a
 * scaffold that waits for the new cluster's Sealed Secrets controller (up to
 * the runner's --controller-timeout, 15 minutes) and then for Flux to report
 * Ready (ready_timeout_seconds, 15 minutes by default, up to 2 hours) went
 * past it with the defaults; a pull_request run, which waits for a person to
 * merge, was ended after 30 minutes of review.
 */
import { CONTROLLER_WAIT_MINUTES } from '../model/defaults.js';
import type { RunRecord, RunSecrets } from '../run/run-record.js';

/** The work of a run besides its waits: clone, renders, verifies, pushes. Measured runs take seconds; a slow remote, minutes. */
const RUN_WORK_SECONDS = 1800;

/**
 * The Job's active deadline for `run` with this attempt's options, in seconds;
 * undefined for none: a pull_request run waits for its review, which can take
 * days (cancelling the run deletes its Job).
 */
export function jobDeadlineSeconds(run: Pick<RunRecord, 'action' | 'delivery'>, secrets: RunSecrets): number | undefined {
  if (run.delivery?.mode === 'pull_request') return undefined;
  // Steps 4-5 of a scaffold (a rotation too) wait for the controller unless the certificate came with the request.
  // The runner's --controller-timeout default: a Job does not set it.
  const controllerWait = run.action === 'scaffold' && secrets.certificate === undefined ? CONTROLLER_WAIT_MINUTES * 60 : 0;
  return RUN_WORK_SECONDS + controllerWait + (secrets.waitForReady?.timeoutSeconds ?? 0) + (secrets.deleteData?.timeoutSeconds ?? 0);
}
