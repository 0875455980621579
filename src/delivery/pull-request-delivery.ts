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
import type { DeliverPassRequest, DeliveredPass, PassDelivery, ReviewDelivery, ReviewRequestRef } from '../run/delivery.js';
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
    const { pass } = request;
    return this.deliverReview({
      workspace: request.workspace,
      branch: request.branch,
      head: reviewBranchOf(request.cluster.name, pass),
      title: titleOf(request),
      body: bodyOf(request),
      labels: labelsOf(pass),
      subject: `pass ${pass}`,
      unmerged: 'so the pass never reached the branch the cluster reads; reopen and merge it, or rerun to open a new one',
      fields: { pass },
      ...(request.signal ? { signal: request.signal } : {}),
    });
  }

  /**
   * Delivers the workspace's HEAD through a request described by `review`: a
   * scaffold pass, or a fleet change (an upgrade wave, a removal) with its own
   * branch and text.
   * @throws ConflictError when the request was closed without being merged
   */
  async deliverReview(review: ReviewDelivery): Promise<DeliveredPass> {
    const { forge } = this.deps;
    const { workspace, branch, head, subject, signal } = review;
    const pushed = await workspace.pushBranch(head, signal ? { signal } : {});
    let found = await forge.findOpen(head, branch);
    if (found) {
      await this.log(review, found, 'reused', `reusing open request #${found.number} for ${subject}: ${found.url}`);
    } else {
      found = await forge.open({ head, base: branch, title: review.title, body: review.body, labels: review.labels });
      await this.log(review, found, 'opened', `opened request #${found.number} for ${subject}: ${found.url}`);
    }
    const merged = await this.waitForMerge(found, review, pushed.sha);
    const sha = await workspace.syncTo(branch, signal ? { signal } : {});
    // The branch was only the vehicle; a forge that deletes merged branches already did.
    await forge.deleteBranch(head).catch((error: unknown) => this.logger.warn({ branch: head, error: String(error) }, 'could not delete the merged branch'));
    await this.log(review, merged, 'merged', `request #${merged.number} for ${subject} is merged into ${branch}`);
    return { sha: merged.mergeSha ?? sha, attempts: pushed.attempts, request: refOf(merged) };
  }

  /**
   * One `review_request` event per change: the service keeps each request's latest state from a run's
   * (run-contract/run-events.ts). The caller is told of each change of state (opened or reused, merged, closed).
   */
  private async log(review: ReviewDelivery, request: ReviewRequest, action: string, message: string): Promise<void> {
    const { number, url, state } = request;
    this.logger.info({ event: 'review_request', forge: this.deps.forge.forge, ...review.fields, branch: review.head, action, number, url, state }, message);
    if (action !== 'waiting' && action !== 'merging') await review.onRequest?.(refOf(request));
  }

  /**
   * Polls until merged; fails on a request closed unmerged. With autoMerge it
   * merges the request once the forge calls it mergeable, and only while its
   * head is `pushed`, the commit this run verified and pushed: anyone who can
   * push to the review branch could otherwise have the service's token merge
   * a commit of theirs once checks pass. A request whose head is another
   * commit waits for a person, like one without autoMerge.
   */
  private async waitForMerge(first: ReviewRequest, review: ReviewDelivery, pushed: string): Promise<ReviewRequest> {
    const { forge, autoMerge = false, pollIntervalMs = 15_000 } = this.deps;
    const { subject, signal } = review;
    let request = first;
    let waitingLogged = false;
    let foreignHeadLogged = false;
    for (;;) {
      signal?.throwIfAborted();
      if (request.state === 'merged') return request;
      if (request.state === 'closed') {
        await this.log(review, request, 'closed', `request #${request.number} for ${subject} was closed without being merged: ${request.url}`);
        throw new ConflictError(`request #${request.number} for ${subject} (${request.url}) was closed without being merged, ${review.unmerged}`);
      }
      const ours = request.headSha === pushed;
      if (autoMerge && request.mergeable && !ours && !foreignHeadLogged) {
        foreignHeadLogged = true;
        this.logger.warn(
          { event: 'review_request_head', branch: review.head, number: request.number, head: request.headSha, pushed },
          `request #${request.number}'s head is ${request.headSha.slice(0, 12)}, not ${pushed.slice(0, 12)} that this run verified and pushed: not merging it (auto_merge); a person merges it, or a rerun pushes the pass again`,
        );
      }
      if (autoMerge && request.mergeable && ours && (await forge.merge(request.number, pushed))) {
        await this.log(review, request, 'merging', `merged request #${request.number} (auto_merge)`);
      } else if (!waitingLogged) {
        waitingLogged = true;
        await this.log(
          review,
          request,
          'waiting',
          `waiting for request #${request.number} to be merged${autoMerge ? ' (auto_merge once mergeable)' : ''}: ${request.url}`,
        );
      }
      request = await forge.get(request.number);
      if (request.state === 'open') {
        await interruptibleSleep(pollIntervalMs, signal);
      }
    }
  }
}

const refOf = (request: ReviewRequest): ReviewRequestRef => ({ number: request.number, url: request.url, state: request.state });
