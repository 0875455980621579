/**
 * The forge port: the few pull/merge-request operations delivery needs, the same
 * for GitHub, GitLab and Gitea. Implementations wrap each forge's client.
 */

import type { ForgeName } from '../model/forges.js';

// Named with the product's other defaults; re-exported for the forge modules.
export { FORGES, type ForgeName } from '../model/forges.js';

/** A pull/merge request, in the forge-neutral shape. */
export interface ReviewRequest {
  /** GitHub and Gitea: the pull number; GitLab: the merge request iid. */
  readonly number: number;
  /** The page a person opens. */
  readonly url: string;
  readonly state: 'open' | 'merged' | 'closed';
  readonly headSha: string;
  /** The forge would merge it now: no conflicts, required checks and approvals done. */
  readonly mergeable: boolean;
  /** The commit the merge made on the base branch, once merged. */
  readonly mergeSha?: string;
}

/** What a new request says. */
export interface NewReviewRequest {
  readonly head: string;
  readonly base: string;
  readonly title: string;
  readonly body: string;
  readonly labels: readonly string[];
}

/** One repository on one forge. */
export interface ForgeClient {
  readonly forge: ForgeName;
  /** The open request from `head` into `base`, if there is one. */
  findOpen(head: string, base: string): Promise<ReviewRequest | undefined>;
  open(request: NewReviewRequest): Promise<ReviewRequest>;
  get(number: number): Promise<ReviewRequest>;
  /**
   * Merges the request if its head is still `headSha`.
   * @returns false when the forge declines for now (not mergeable yet, head moved)
   */
  merge(number: number, headSha: string): Promise<boolean>;
  /** Removes a merged request's branch; a branch already gone is fine. */
  deleteBranch(branch: string): Promise<void>;
}
