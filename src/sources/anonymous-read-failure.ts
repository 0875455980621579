/**
 * How a service endpoint that clones a repository without credentials (the
 * catalog, the fleet) reports a failed clone. Never a 401/403 of its own: that
 * would read as the caller's token being refused, when it is the service that
 * cannot read the repository.
 */
import { AppError, AuthenticationError, ForbiddenError, TimeoutError, UnavailableError } from '../errors.js';

/**
 * The error to answer with for a failed anonymous clone.
 * @param why the sentence a refused read is explained with, e.g. "the catalog is only read from repositories readable without credentials"
 */
export function anonymousReadFailure(error: unknown, why: string): Error {
  if (error instanceof AuthenticationError || error instanceof ForbiddenError) {
    return new UnavailableError(`the service cannot read this repository on its own: ${why}`, { cause: error });
  }
  if (error instanceof TimeoutError) return new UnavailableError(error.message, { cause: error });
  if (error instanceof AppError) return error;
  return new UnavailableError('the repository cannot be read', { cause: error });
}
