/**
 * Delivery through pull/merge requests, for repositories whose default branch
 * is protected. Each pass goes on `scaffold/<cluster>/<pass>`, a request is
 * opened (or the open one from an earlier attempt reused), and the run waits
 * until it is merged, merging it itself with `autoMerge` once the forge says it
 * may: pass 2 must not start before pass 1 is on the branch the cluster's Flux
 * reads.
 */
import { ConflictError } from '../errors.js';
import { interruptibleSleep } from '../interruptible-sleep.js';
import { type Logger, silentLogger } from '../logger.js';
import type { DeliverPassRequest, DeliveredPass, PassDelivery } from './delivery.js';
import type { ForgeClient, ReviewRequest } from './forge-client.js';
import { bodyOf, labelsOf, reviewBranchOf, titleOf } from './request-text.js';

/** Dependencies of {@link PullRequestDelivery}. */
export interface PullRequestDeliveryDeps {
  readonly forge: ForgeClient;
  /** Merge the request once the forge says it is mergeable (checks passed). @default false */
  readonly autoMerge?: boolean;
  /** Pause between looks at the request. @default 15000 */
  readonly pollIntervalMs?: number;
  readonly logger?: Logger;
}

export class PullRequestDelivery implements PassDelivery {
  readonly mode = 'pull_request' as const;
  private readonly logger: Logger;

  constructor(private readonly deps: PullRequestDeliveryDeps) {
    this.logger = deps.logger ?? silentLogger;
  }

  async deliver(request: DeliverPassRequest): Promise<DeliveredPass> {
    const { forge } = this.deps;
    const { workspace, branch, pass, signal } = request;
    const head = reviewBranchOf(request.cluster.name, pass);
    const pushed = await workspace.pushBranch(head, signal ? { signal } : {});
    let review = await forge.findOpen(head, branch);
    if (review) {
      this.log(review, pass, head, 'reused', `reusing open request #${review.number} for pass ${pass}: ${review.url}`);
    } else {
      review = await forge.open({ head, base: branch, title: titleOf(request), body: bodyOf(request), labels: labelsOf(pass) });
      this.log(review, pass, head, 'opened', `opened request #${review.number} for pass ${pass}: ${review.url}`);
    }
    const merged = await this.waitForMerge(review, pass, head, signal);
    const sha = await workspace.syncTo(branch, signal ? { signal } : {});
    // The branch was only the vehicle; a forge that deletes merged branches already did.
    await forge.deleteBranch(head).catch((error: unknown) => this.logger.warn({ branch: head, error: String(error) }, 'could not delete the merged branch'));
    this.log(merged, pass, head, 'merged', `request #${merged.number} for pass ${pass} is merged into ${branch}`);
    return { sha: merged.mergeSha ?? sha, attempts: pushed.attempts, request: { number: merged.number, url: merged.url, state: merged.state } };
  }

  /** One `review_request` event per change: the service keeps each request's latest state from them (run-contract/run-events.ts). */
  private log(review: ReviewRequest, pass: string, branch: string, action: string, message: string): void {
    this.logger.info({ event: 'review_request', forge: this.deps.forge.forge, pass, branch, action, number: review.number, url: review.url, state: review.state }, message);
  }

  /** Polls until merged; merges with autoMerge; fails on a request closed unmerged. */
  private async waitForMerge(first: ReviewRequest, pass: string, head: string, signal: AbortSignal | undefined): Promise<ReviewRequest> {
    const { forge, autoMerge = false, pollIntervalMs = 15_000 } = this.deps;
    let review = first;
    let waitingLogged = false;
    for (;;) {
      signal?.throwIfAborted();
      if (review.state === 'merged') return review;
      if (review.state === 'closed') {
        this.log(review, pass, head, 'closed', `request #${review.number} for pass ${pass} was closed without being merged: ${review.url}`);
        throw new ConflictError(
          `request #${review.number} for pass ${pass} (${review.url}) was closed without being merged, so the pass never reached the branch the cluster reads; reopen and merge it, or rerun to open a new one`,
        );
      }
      if (autoMerge && review.mergeable && (await forge.merge(review.number, review.headSha))) {
        this.log(review, pass, head, 'merging', `merged request #${review.number} (auto_merge)`);
      } else if (!waitingLogged) {
        waitingLogged = true;
        this.log(review, pass, head, 'waiting', `waiting for request #${review.number} to be merged${autoMerge ? ' (auto_merge once mergeable)' : ''}: ${review.url}`);
      }
      review = await forge.get(review.number);
      if (review.state === 'open') {
        await interruptibleSleep(pollIntervalMs, signal);
      }
    }
  }
}
