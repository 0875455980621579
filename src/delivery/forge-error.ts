/**
 * One translation of a forge's HTTP answer into the product's errors, for every
 * forge client. Messages carry the forge's own words, never a credential.
 */
import { type AppError, AuthenticationError, ConflictError, ForbiddenError, NotFoundError, UnavailableError, ValidationError } from '../errors.js';

/** The product's error for a failed forge call with HTTP `status` (undefined: no answer). */
export function forgeErrorOf(forge: string, what: string, status: number | undefined, error: unknown): AppError {
  const detail = `${forge} ${what} failed${status ? ` (HTTP ${status})` : ''}: ${error instanceof Error ? error.message : String(error)}`;
  const options = { cause: error };
  if (status === 401) return new AuthenticationError(detail, options);
  if (status === 403) return new ForbiddenError(detail, options);
  if (status === 404) return new NotFoundError(detail, options);
  if (status === 409) return new ConflictError(detail, options);
  if (status === 400 || status === 422) return new ValidationError(detail, options);
  return new UnavailableError(detail, options);
}

/** Runs one forge call, translating what it throws. */
export async function callForge<T>(forge: string, what: string, statusOf: (error: unknown) => number | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw forgeErrorOf(forge, what, statusOf(error), error);
  }
}
