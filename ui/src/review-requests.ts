/**
 * What the dashboard shows of pull/merge requests: a run's (which pass), an
 * upgrade rollout's (which wave) and a removal's, each with the forge's own
 * way of naming the request (`#12` on GitHub and Gitea, `!12` on GitLab), its
 * state, and a link only to an http(s) page. Pure, so it is tested without a
 * browser.
 */

/** A pull/merge request one of a run's passes went through (`delivery.mode` pull_request), as the API sends it. */
export interface ReviewRequest {
  readonly pass: 'infrastructure' | 'all';
  readonly forge: 'github' | 'gitlab' | 'gitea';
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
  /** "Pass 1: infrastructure layer" / "Pass 2: all layers". */
  readonly pass: string;
  readonly updatedAt: string;
}

const PASSES: Readonly<Record<ReviewRequest['pass'], string>> = { infrastructure: 'Pass 1: infrastructure layer', all: 'Pass 2: all layers' };
const FORGES: Readonly<Record<string, string>> = { github: 'GitHub', gitlab: 'GitLab', gitea: 'Gitea' };

function webPage(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** One request named the way its forge names it (an unknown forge: `#`, as two of three do), linked only to a web page. */
function shownRequest(forge: string | undefined, request: { readonly number: number; readonly url: string; readonly state: ReviewRequest['state']; readonly branch?: string }): ShownRequest {
  const href = webPage(request.url);
  return {
    key: `${forge ?? 'forge'}:${request.number}`,
    label: `${forge === 'gitlab' ? '!' : '#'}${request.number}`,
    forge: forge === undefined ? 'Request' : (FORGES[forge] ?? forge),
    state: request.state,
    ...(href === undefined ? {} : { href }),
    url: request.url,
    ...(request.branch === undefined ? {} : { branch: request.branch }),
  };
}

export function shownReviewRequests(run: RunRequests): readonly ShownReviewRequest[] {
  return (run.review_requests ?? []).map((request) => ({ ...shownRequest(request.forge, request), pass: PASSES[request.pass] ?? request.pass, updatedAt: request.updated_at }));
}

/** Whether the run delivers through requests, so the page has a place for them even before the first is opened. */
export function deliversThroughRequests(run: RunRequests): boolean {
  return run.delivery?.mode === 'pull_request' || (run.review_requests ?? []).length > 0;
}

/** A pull/merge request of a fleet change (an upgrade wave, a removal), as the API sends it: the forge is the change's `delivery.forge`. */
export interface FleetReviewRequest {
  readonly number: number;
  readonly url: string;
  readonly state: ReviewRequest['state'];
}

/** The fields of a rollout this view reads. */
interface RolloutRequests {
  readonly delivery?: RunDelivery;
  readonly waves: readonly (readonly string[])[];
  readonly requests?: readonly (FleetReviewRequest & { readonly wave: number })[];
}

export interface ShownWaveRequest extends ShownRequest {
  /** "Wave 1", counted from 1 as the page counts waves. */
  readonly wave: string;
  /** The clusters the wave's request upgrades. */
  readonly clusters: readonly string[];
}

/** Each wave's request, in wave order (a wave not started yet has none). */
export function shownWaveRequests(rollout: RolloutRequests): readonly ShownWaveRequest[] {
  return [...(rollout.requests ?? [])]
    .sort((a, b) => a.wave - b.wave)
    .map((request) => ({ ...shownRequest(rollout.delivery?.forge, request), key: `wave-${request.wave}`, wave: `Wave ${request.wave + 1}`, clusters: rollout.waves[request.wave] ?? [] }));
}

/** Whether the rollout's waves go through requests, so its page has a place for them before the first is opened. */
export function rolloutDeliversThroughRequests(rollout: RolloutRequests): boolean {
  return rollout.delivery?.mode === 'pull_request' || (rollout.requests ?? []).length > 0;
}

/** The request a removal went through (DELETE's `request`), or undefined when it was pushed. */
export function shownRemovalRequest(removal: { readonly delivery?: RunDelivery; readonly request?: FleetReviewRequest }): ShownRequest | undefined {
  return removal.request === undefined ? undefined : shownRequest(removal.delivery?.forge, removal.request);
}
