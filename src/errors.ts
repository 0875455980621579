/**
 * The shared error vocabulary. Core code throws these; each edge maps them once:
 * HTTP status in `http/`, exit code in the CLI composition roots.
 *
 * Messages must never contain a credential: they reach logs, API responses and
 * the runner's result file.
 */

/** Every code an error may carry, so a reader of stored results can check one (`run-result.ts`). */
export const ERROR_CODES = [
  'invalid_input',
  'not_found',
  'conflict',
  'unauthenticated',
  'forbidden',
  'unavailable',
  'timeout',
  'verification_failed',
  'internal',
] as const;

/** What went wrong, as a stable machine-readable code. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Base of every error the product throws on purpose. */
export abstract class AppError extends Error {
  abstract readonly code: ErrorCode;

  /** True when retrying the same operation later may succeed; {@link failureOf} decides. */
  get transient(): boolean {
    return failureOf(this).transient;
  }

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** One field of some input failed validation. `field` is a dotted path such as `cluster.name`. */
export interface FieldIssue {
  readonly field: string;
  readonly message: string;
}

/** Bad input from a caller: a flag, a request body, a manifest. Nothing was written. */
export class ValidationError extends AppError {
  readonly code = 'invalid_input' as const;
  readonly issues: readonly FieldIssue[];

  constructor(issues: readonly FieldIssue[] | string, options?: { cause?: unknown }) {
    const list = typeof issues === 'string' ? [{ field: '', message: issues }] : issues;
    super(list.map((i) => (i.field ? `${i.field}: ${i.message}` : i.message)).join('; '), options);
    this.issues = list;
  }
}

/** A thing the caller named does not exist. */
export class NotFoundError extends AppError {
  readonly code = 'not_found' as const;
}

/** The operation collides with current state (e.g. a run for that cluster is already active). */
export class ConflictError extends AppError {
  readonly code = 'conflict' as const;
}

/**
 * A push lost a race: another push to the branch changed the same files, so
 * the rebase onto it was aborted. Unlike other conflicts, running again (from
 * the branch's new tip) may succeed.
 */
export class ConcurrentPushError extends ConflictError {}

/** No or malformed credentials. */
export class AuthenticationError extends AppError {
  readonly code = 'unauthenticated' as const;
}

/** Valid credentials, but not allowed. */
export class ForbiddenError extends AppError {
  readonly code = 'forbidden' as const;
}

/** A dependency (git remote, Kubernetes API, database) could not be reached; retrying may help. */
export class UnavailableError extends AppError {
  readonly code = 'unavailable' as const;
}

/**
 * A program this host needs is not installed (kubectl on PATH). Not transient:
 * retrying on the same host cannot help until an operator installs it.
 */
export class MissingDependencyError extends AppError {
  readonly code = 'unavailable' as const;
}

/** A bounded wait ended before the awaited state was reached. */
export class TimeoutError extends AppError {
  readonly code = 'timeout' as const;
}

/** A generated or existing tree is inconsistent; `findings` holds one line each. */
export class VerificationError extends AppError {
  readonly code = 'verification_failed' as const;
  readonly findings: readonly string[];

  constructor(findings: readonly string[], options?: { cause?: unknown }) {
    super(`${findings.length} verification finding(s):\n${findings.join('\n')}`, options);
    this.findings = findings;
  }
}

/** How an operation failed: its code, and whether retrying it later may succeed. */
export interface Failure {
  readonly code: ErrorCode;
  readonly transient: boolean;
}

// Codes that say the world was not ready (a remote down, a wait too short), not that the request was wrong.
const TRANSIENT_CODES: ReadonlySet<ErrorCode> = new Set(['unavailable', 'timeout']);

/**
 * The one rule for what a failure was and whether retrying may help (the CLI's
 * exit code, a run's stored `error_code` and `transient`). A wrapper (a step's
 * error) is looked through to the AppError it carries as its cause. Transient:
 * an unreachable dependency or a timed-out wait, and a push that lost a race
 * ({@link ConcurrentPushError}). Permanent: bad input, verification findings,
 * authentication and permission, other conflicts, a program missing on the
 * host ({@link MissingDependencyError}, code `unavailable`), and anything that
 * is not an AppError (`internal`: a bug, which a retry repeats).
 */
export function failureOf(error: unknown): Failure {
  let found: unknown = error;
  // Bounded: a cause chain could loop.
  for (let depth = 0; depth < 8 && !isAppError(found) && found instanceof Error && found.cause !== undefined; depth++) found = found.cause;
  if (!isAppError(found)) return { code: 'internal', transient: false };
  if (found instanceof MissingDependencyError) return { code: found.code, transient: false };
  if (found instanceof ConcurrentPushError) return { code: found.code, transient: true };
  return { code: found.code, transient: TRANSIENT_CODES.has(found.code) };
}

/** Narrows an unknown thrown value to an AppError. */
export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** A thrown value's message, for a log line: non-Error throws are stringified. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
