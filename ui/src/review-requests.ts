/**
 * What the dashboard shows of a run's pull/merge requests: which pass each
 * delivered (a scaffold's two, an upgrade's or a removal's one), with the forge's own
 * way of naming the request (`#12` on GitHub and Gitea, `!12` on GitLab), its
 * state, and a link only to an http(s) page. Pure, so it is tested without a
 * browser.
 */
import type { RunPass } from '../../src/model/run-action.js';
import { type ForgeName, forgeDescriptor, isForgeName } from '../../src/model/forges.js';

/** A pull/merge request one of a run's passes went through (`delivery.mode` pull_request), as the API sends it. */
export interface ReviewRequest {
  readonly pass: RunPass;
  readonly forge: ForgeName;
  readonly number: number;
  readonly url: string;
  readonly state: 'open' | 'merged' | 'closed';
  readonly branch?: string;
  readonly updated_at: string;
}

/** How a run's passes reach the branch. */
export interface RunDelivery {
  readonly mode: 'push' | 'pull_request';
  readonly auto_merge: boolean;
  readonly forge?: string;
}

/** The fields of a run this view reads (no import of the API module: this file is tested under Node). */
interface RunRequests {
  readonly delivery?: RunDelivery;
  readonly review_requests?: readonly ReviewRequest[];
}

/** A request as any page lists it. */
export interface ShownRequest {
  readonly key: string;
  /** `#12` or `!12`. */
  readonly label: string;
  readonly forge: string;
  readonly state: ReviewRequest['state'];
  /** Absent when the URL is not an http(s) page: it is then shown as text, never as a link. */
  readonly href?: string;
  readonly url: string;
  readonly branch?: string;
}

export interface ShownReviewRequest extends ShownRequest {
  /** "Pass 1: infrastructure layer" / "Pass 2: all layers" / "The upgrade" / "The removal". */
  readonly pass: string;
  readonly updatedAt: string;
}

const PASSES: Readonly<Record<RunPass, string>> = {
  infrastructure: 'Pass 1: infrastructure layer',
  all: 'Pass 2: all layers',
  upgrade: 'The upgrade',
  remove: 'The removal',
  'lift-protection': 'The lifting of the prune protection',
};

function webPage(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** One request named the way its forge names it (an unknown forge: `#`, as two of three do), linked only to a web page. */
function shownRequest(
  forge: string | undefined,
  request: { readonly number: number; readonly url: string; readonly state: ReviewRequest['state']; readonly branch?: string },
): ShownRequest {
  const href = webPage(request.url);
  const known = forge !== undefined && isForgeName(forge) ? forgeDescriptor(forge) : undefined;
  return {
    key: `${forge ?? 'forge'}:${request.number}`,
    label: `${known?.requestPrefix ?? '#'}${request.number}`,
    forge: forge === undefined ? 'Request' : (known?.displayName ?? forge),
    state: request.state,
    ...(href === undefined ? {} : { href }),
    url: request.url,
    ...(request.branch === undefined ? {} : { branch: request.branch }),
  };
}

export function shownReviewRequests(run: RunRequests): readonly ShownReviewRequest[] {
  return (run.review_requests ?? []).map((request) => ({
    ...shownRequest(request.forge, request),
    pass: PASSES[request.pass] ?? request.pass,
    updatedAt: request.updated_at,
  }));
}

/** Whether the run delivers through requests, so the page has a place for them even before the first is opened. */
export function deliversThroughRequests(run: RunRequests): boolean {
  return run.delivery?.mode === 'pull_request' || (run.review_requests ?? []).length > 0;
}
