/** PostgreSQL and driver failures mapped onto the product's error vocabulary. */
import { UnavailableError, ValidationError, isAppError } from '../errors.js';

export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function constraintOf(error: unknown): string | undefined {
  const constraint = (error as { constraint?: unknown } | null)?.constraint;
  return typeof constraint === 'string' ? constraint : undefined;
}

export function describeCode(error: unknown): string {
  const code = codeOf(error);
  return code && /^[A-Z0-9_]{2,20}$/.test(code) ? ` (${code})` : '';
}

// SQLSTATEs that mean "the server could not do it now", not "the request is wrong":
// connection exceptions, shutdown, too many connections, statement timeout.
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3]|53300|57014)$/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
const UNAVAILABLE_MESSAGE = /timeout exceeded when trying to connect|Connection terminated|connection error|is closed|after calling end on the pool/i;

/**
 * Maps a database failure onto the error vocabulary. Messages carry only the
 * SQLSTATE or errno, never the driver's text, which may quote a connection string.
 */
export function translatePgError(error: unknown): unknown {
  if (isAppError(error)) return error;
  const code = codeOf(error);
  if (code && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) {
    return new UnavailableError(`database unavailable${describeCode(error)}`, { cause: error });
  }
  if (code === '23514' || code === '22P02' || code === '22003') {
    return new ValidationError([{ field: '', message: `value rejected by the database (${code})` }], { cause: error });
  }
  if (!code && error instanceof Error && UNAVAILABLE_MESSAGE.test(error.message)) {
    return new UnavailableError('database unavailable', { cause: error });
  }
  return error;
}
