/**
 * The shared error vocabulary. Core code throws these; each edge maps them once:
 * HTTP status in `http/`, exit code in the CLI composition roots.
 *
 * Messages must never contain a credential: they reach logs, API responses and
 * the runner's result file.
 */

/** What went wrong, as a stable machine-readable code. */
export type ErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'conflict'
  | 'unauthenticated'
  | 'forbidden'
  | 'unavailable'
  | 'timeout'
  | 'verification_failed'
  | 'internal';

/** Base of every error the product throws on purpose. */
export abstract class AppError extends Error {
  abstract readonly code: ErrorCode;
  /** True when retrying the same operation later may succeed. */
  readonly transient: boolean = false;

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
  override readonly transient = true;
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
  override readonly transient = true;
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

/** Narrows an unknown thrown value to an AppError. */
export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** A thrown value's message, for a log line: non-Error throws are stringified. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
