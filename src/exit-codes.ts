/**
 * Process exit codes shared by the CLIs, so callers (a Job's backoff policy,
 * a CI step) can tell bad input from a transient failure from a permanent one.
 */
import { isAppError } from './errors.js';

/** Finished, nothing wrong. */
export const EXIT_OK = 0;
/** A permanent failure, or `verify` found problems. */
export const EXIT_FAILURE = 1;
/** The input was bad (flags, spec, files): retrying the same call cannot help. */
export const EXIT_BAD_INPUT = 2;
/** A dependency was unreachable or a wait timed out: retrying later may help (EX_TEMPFAIL). */
export const EXIT_TRANSIENT = 75;
/** Stopped by SIGTERM or SIGINT (a cancelled run), as shells report it: 128 + 15. */
export const EXIT_CANCELLED = 143;

/** The exit code for an error thrown out of a command. */
export function exitCodeOf(error: unknown): number {
  if (!isAppError(error)) return EXIT_FAILURE;
  if (error.code === 'invalid_input' || error.code === 'not_found') return EXIT_BAD_INPUT;
  if (error.transient) return EXIT_TRANSIENT;
  return EXIT_FAILURE;
}
