/**
 * What a failed @kubernetes/client-node call says about itself, for messages
 * and decisions. Only the HTTP status and the Status object's `reason` and
 * `message` are taken: the response body and headers are never repeated, as
 * they may echo a credential.
 */
import { ApiException } from '@kubernetes/client-node';
import { UnavailableError } from '../errors.js';

/** HTTP status and Status reason / message of a failed client call. */
export interface KubeApiFailure {
  /** The HTTP status; absent when the call got no answer (network error, abort). */
  readonly code?: number;
  /** The Status object's `reason` (`NotFound`, `AlreadyExists`, …), when the body is one. */
  readonly reason?: string;
  /** The Status object's `message`, written by the API server, safe to repeat. */
  readonly message?: string;
}

/** The status of a failed client call, if it got that far; `{}` for anything else. */
export function kubeApiFailureOf(error: unknown): KubeApiFailure {
  if (!(error instanceof ApiException)) return {};
  let status: { reason?: unknown; message?: unknown } = {};
  try {
    status = typeof error.body === 'string' ? (JSON.parse(error.body) as typeof status) : ((error.body ?? {}) as typeof status);
  } catch {
    // Not a Status object (e.g. an HTML error page from a proxy in front of the API server).
  }
  return {
    code: error.code,
    ...(typeof status.reason === 'string' ? { reason: status.reason } : {}),
    ...(typeof status.message === 'string' ? { message: status.message } : {}),
  };
}

/**
 * One line naming why a call failed: `HTTP 403 Forbidden`, an errno such as
 * `ECONNREFUSED`, or the error's name; with no response body and no headers.
 */
export function kubeApiFailureSummary(error: unknown): string {
  const { code, reason } = kubeApiFailureOf(error);
  if (code !== undefined) return `HTTP ${code}${reason ? ` ${reason}` : ''}`;
  const errno = (error as { code?: unknown } | undefined)?.code;
  return typeof errno === 'string' ? errno : error instanceof Error ? error.name : 'unknown error';
}

/** The HTTP status of a failed API call, when there is one. */
export const codeOf = (error: unknown): number | undefined => kubeApiFailureOf(error).code;

/** A failed API call as an UnavailableError saying what was being done. */
export function unavailable(what: string, error: unknown): UnavailableError {
  return new UnavailableError(`${what}: ${kubeApiFailureSummary(error)}`, { cause: error });
}
