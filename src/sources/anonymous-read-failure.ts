/**
 * How a service endpoint that clones a repository without credentials (the
 * catalog, the fleet, a run's graph) reports a failed clone. Never a 401/403
 * of its own: that would read as the caller's token being refused, when it is
 * the service that cannot read the repository. Never git's own words either:
 * they say what answered at the other end (refused, timed out, which
 * certificate, which page), so they go to the service's log, with the URL and
 * without credentials, and the caller gets one sentence per kind of failure.
 */
import { AuthenticationError, ForbiddenError, NotFoundError, TimeoutError, UnavailableError, ValidationError, messageOf } from '../errors.js';
import { redactSecrets } from '../git/git-process.js';
import type { Logger } from '../logger.js';

/** Where the failed read was, for the log line. */
export interface FailedRead {
  readonly logger: Logger;
  readonly repositoryUrl: string;
  readonly branch: string;
  /** What was being read: `catalog`, `fleet`, `graph`. */
  readonly what: string;
}

/**
 * A refusal of what the clone holds (a link out of the tree, a FIFO: the work-tree
 * guard's `repository` issues), not of how the remote answered: it says nothing
 * about the network, so the caller is told, as a 4xx.
 */
export function isContentRefusal(error: unknown): error is ValidationError {
  return error instanceof ValidationError && error.issues.length > 0 && error.issues.every((issue) => issue.field === 'repository');
}

/**
 * The error to answer with for a failed anonymous clone; git's message is logged, not returned.
 * @param why the sentence a refused read is explained with, e.g. "the catalog is only read from repositories readable without credentials"
 */
export function anonymousReadFailure(error: unknown, why: string, read: FailedRead): Error {
  read.logger.warn(
    {
      event: 'repository_read_failed',
      read: read.what,
      repository: redactSecrets(read.repositoryUrl),
      branch: read.branch,
      err: redactSecrets(messageOf(error)),
    },
    `reading the ${read.what} failed`,
  );
  if (isContentRefusal(error)) return error;
  if (error instanceof AuthenticationError || error instanceof ForbiddenError) {
    return new UnavailableError(`the service cannot read this repository on its own: ${why}`, { cause: error });
  }
  if (error instanceof NotFoundError) return new NotFoundError(`the repository or its branch ${read.branch} was not found`, { cause: error });
  if (error instanceof TimeoutError) return new UnavailableError('reading the repository took too long', { cause: error });
  return new UnavailableError('the repository cannot be read (the service log has the reason)', { cause: error });
}
