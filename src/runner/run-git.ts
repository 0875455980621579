/**
 * The git side every run shares, whatever its action: the sparse clone of
 * step 1, the defaults of its commits, and the delivery of a committed pass
 * with the `commit` event that reports it.
 */
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import type { DeliverPassRequest, PassDelivery } from '../delivery/delivery.js';
import { pushDelivery } from '../delivery/push-delivery.js';
import type { GitCredentials, GitIdentity, GitRemote, GitWorkspace } from './ports.js';

export const DEFAULT_AUTHOR: GitIdentity = { name: 'gitops-scaffolder', email: 'gitops-scaffolder@localhost' };

/**
 * Push attempts when the caller sets none. Each round of racing pushes lets only
 * one through, so the budget has to outlast a burst of concurrent runs (the
 * design's figure is 20 into one repository; 8 attempts lost runs there), with
 * the remote's jittered backoff spreading the rounds out.
 */
export const DEFAULT_PUSH_ATTEMPTS = 30;

/** What a run clones. */
export interface RunClone {
  readonly url: string;
  readonly branch: string;
  /** The run's scratch directory; the working copy goes in `repo/` below it. */
  readonly workRoot: string;
  readonly reference: string;
  readonly cluster: string;
  readonly credentials?: GitCredentials;
  readonly signal?: AbortSignal;
}

/** Step 1's start message. */
export function cloneMessage(clone: Pick<RunClone, 'branch' | 'reference' | 'cluster'>): string {
  return `cloning ${clone.branch} (sparse: base/, clusters/${clone.reference}/, clusters/${clone.cluster}/)`;
}

/**
 * Clones the branch with only what a render of one cluster reads: base/, the
 * reference environment, the cluster's own directory and the platform's other
 * top-level roots, never the other clusters, so its cost does not grow with
 * the fleet.
 */
export function cloneForRun(git: GitRemote, clone: RunClone): Promise<GitWorkspace> {
  return git.clone({
    url: clone.url,
    branch: clone.branch,
    dir: join(clone.workRoot, 'repo'),
    sparsePaths: ['base', `clusters/${clone.reference}`, `clusters/${clone.cluster}`],
    // The platform's shared roots, whatever the catalog calls them; never the other clusters.
    sparseTopLevelExcept: ['clusters'],
    ...(clone.credentials ? { credentials: clone.credentials } : {}),
    ...(clone.signal ? { signal: clone.signal } : {}),
  });
}

/**
 * Delivers the workspace's committed pass and logs the `commit` event.
 * @returns the commit the branch holds it in
 */
export async function deliverPass(delivery: PassDelivery | undefined, request: DeliverPassRequest, log: Logger): Promise<string> {
  const through = delivery ?? pushDelivery;
  const pushed = await through.deliver(request);
  const { pass, branch } = request;
  log.info(
    { event: 'commit', pass, sha: pushed.sha, attempts: pushed.attempts, pushed: true, delivery: through.mode, ...(pushed.request ? { request: pushed.request } : {}) },
    `${pushed.request ? `merged request #${pushed.request.number} for` : 'pushed'} pass ${pass} as ${pushed.sha.slice(0, 12)} to ${branch}`,
  );
  return pushed.sha;
}
