/**
 * The delivery port: how a committed pass reaches the branch the cluster's Flux
 * reads. `push` pushes it there directly; `pull_request` puts it on its own
 * branch, opens a pull/merge request and waits until it is merged.
 */
import type { RunPass } from '../model/run-action.js';
import type { GitWorkspace } from './ports.js';
import type { ForgeName } from '../model/forges.js';

export const DELIVERY_MODES = ['push', 'pull_request'] as const;
export type DeliveryMode = (typeof DELIVERY_MODES)[number];

/** A run's delivery settings, as the request and the runner flags give them. Absent: push. */
export interface DeliverySettings {
  readonly mode: DeliveryMode;
  /** @default false */
  readonly autoMerge?: boolean;
  /** Needed in pull_request mode. */
  readonly forge?: ForgeName;
  /** The forge's API; derived from the repository URL's host when absent. */
  readonly apiUrl?: string;
}

/** What a pass changed, for the request's description. */
export interface PassSummary {
  readonly written: readonly string[];
  readonly removed: readonly string[];
  /** One line: what the pre-push gate said. */
  readonly verify: string;
  /** A removal: the cluster's files it leaves in place (not the generator's). */
  readonly kept?: readonly string[];
}

/**
 * The passes a delivery takes: all but a removal's lift of the prune
 * protection, which is only ever pushed (`runner/run-git.ts`): the removal
 * waits for the cluster's Flux to apply it, and has no request of its own.
 */
export type DeliverablePass = Exclude<RunPass, 'lift-protection'>;

/** One committed pass to deliver. */
export interface DeliverPassRequest {
  readonly workspace: GitWorkspace;
  readonly runId: string;
  /** The cluster; a scaffold's request names its domain and region too. */
  readonly cluster: { readonly name: string; readonly domain?: string; readonly region?: string };
  /** A scaffold's `infrastructure` or `all`, an upgrade's or a removal's one commit. */
  readonly pass: DeliverablePass;
  /** The reference environment the pass was rendered from (an upgrade's request names it). */
  readonly reference?: string;
  /** The branch the cluster's Flux reads. */
  readonly branch: string;
  readonly summary: PassSummary;
  /** Push attempts when racing other runs (push mode). */
  readonly maxAttempts: number;
  /** Push mode: re-checks the tree after a rebase onto concurrent pushes (see GitWorkspace.push). */
  readonly afterRebase?: (changedPaths: readonly string[]) => Promise<void>;
  readonly signal?: AbortSignal;
}

/** A pull/merge request as the run reports it. */
export interface ReviewRequestRef {
  readonly number: number;
  readonly url: string;
  readonly state: 'open' | 'merged' | 'closed';
}

/**
 * A change delivered through its own pull/merge request: a scaffold pass, or a
 * fleet change (an upgrade wave, a removal) with its own branch and text.
 */
export interface ReviewDelivery {
  readonly workspace: GitWorkspace;
  /** The branch the request merges into. */
  readonly branch: string;
  /** The branch the change is pushed to (force: only this change writes it). */
  readonly head: string;
  readonly title: string;
  readonly body: string;
  readonly labels: readonly string[];
  /** What is delivered, as messages name it: `pass infrastructure`, `wave 2 of upgrade <id>`. */
  readonly subject: string;
  /** The end of the error for a request closed unmerged: what that means and what to do. */
  readonly unmerged: string;
  /** Log fields naming the change (`{ pass }`). */
  readonly fields: Readonly<Record<string, string | number>>;
  /** Told when the request is opened or reused, merged, or found closed. */
  readonly onRequest?: (request: ReviewRequestRef) => void | Promise<void>;
  readonly signal?: AbortSignal;
}

/** Where the pass landed. */
export interface DeliveredPass {
  /** The commit the branch holds the pass in (the merge commit for a merged request). */
  readonly sha: string;
  /** Push attempts (0 when nothing new had to be pushed). */
  readonly attempts: number;
  readonly request?: ReviewRequestRef;
}

/** Delivers committed passes. */
export interface PassDelivery {
  readonly mode: DeliveryMode;
  /**
   * Brings the workspace's HEAD onto `branch`. Returns once it is there, with the
   * workspace on the branch's new head.
   * @throws ForbiddenError when the branch refuses a direct push (push mode)
   * @throws ConflictError when the request was closed without being merged
   */
  deliver(request: DeliverPassRequest): Promise<DeliveredPass>;
}
