/**
 * Today's delivery: push each pass straight to the branch. A protected branch
 * refuses that; the error then says how to deliver instead.
 */
import { ForbiddenError, isAppError } from '../errors.js';
import { FORGES, forgeDescriptor } from '../model/forges.js';
import type { DeliverPassRequest, DeliveredPass, PassDelivery } from '../run/delivery.js';

/**
 * What a remote says when a branch protection or a server hook turns a push
 * down: each forge's own words (the forge table's `protectedPushRefusal`:
 * GitHub's GH006 "Protected branch update failed", GitLab's "You are not allowed
 * to push code to protected branches", Gitea's "protected branch"), and git's
 * own "pre-receive hook declined" for any server-side hook. Whichever forge the
 * run names, if any: a push delivery need not name one.
 */
const PROTECTED: readonly RegExp[] = [/pre-receive hook declined/i, ...FORGES.map((forge) => forgeDescriptor(forge).protectedPushRefusal)];

/** True when `error` is a remote refusing a direct push to a protected branch. */
export function isProtectedBranchRefusal(error: unknown): boolean {
  return error instanceof Error && PROTECTED.some((pattern) => pattern.test(error.message));
}

/** The error for a direct push `branch` refused as protected: it says to deliver through pull requests. */
export function protectedBranchError(branch: string, error: unknown): ForbiddenError {
  const detail = isAppError(error) || error instanceof Error ? error.message : String(error);
  return new ForbiddenError(
    `the remote refused a direct push to ${branch}, which is protected (${detail}); ` +
      'deliver through pull requests instead: request field delivery.mode "pull_request" (runner: --delivery pull_request)',
    { cause: error },
  );
}

export const pushDelivery: PassDelivery = {
  mode: 'push',
  async deliver(request: DeliverPassRequest): Promise<DeliveredPass> {
    try {
      const { maxAttempts, signal, afterRebase } = request;
      return await request.workspace.push({ maxAttempts, ...(signal ? { signal } : {}), ...(afterRebase ? { afterRebase } : {}) });
    } catch (error) {
      throw isProtectedBranchRefusal(error) ? protectedBranchError(request.branch, error) : error;
    }
  },
};
