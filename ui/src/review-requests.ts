/**
 * What the run page shows of a run's pull/merge requests: which pass, the
 * forge's own way of naming the request (`#12` on GitHub and Gitea, `!12` on
 * GitLab), its state, and a link only to an http(s) page. Pure, so it is
 * tested without a browser.
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

export interface ShownReviewRequest {
  readonly key: string;
  /** "Pass 1: infrastructure layer" / "Pass 2: all layers". */
  readonly pass: string;
  /** `#12` or `!12`. */
  readonly label: string;
  readonly forge: string;
  readonly state: ReviewRequest['state'];
  /** Absent when the URL is not an http(s) page: it is then shown as text, never as a link. */
  readonly href?: string;
  readonly url: string;
  readonly branch?: string;
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

export function shownReviewRequests(run: RunRequests): readonly ShownReviewRequest[] {
  return (run.review_requests ?? []).map((request) => {
    const href = webPage(request.url);
    return {
      key: `${request.forge}:${request.number}`,
      pass: PASSES[request.pass] ?? request.pass,
      label: `${request.forge === 'gitlab' ? '!' : '#'}${request.number}`,
      forge: FORGES[request.forge] ?? request.forge,
      state: request.state,
      ...(href === undefined ? {} : { href }),
      url: request.url,
      ...(request.branch === undefined ? {} : { branch: request.branch }),
      updatedAt: request.updated_at,
    };
  });
}

/** Whether the run delivers through requests, so the page has a place for them even before the first is opened. */
export function deliversThroughRequests(run: RunRequests): boolean {
  return run.delivery?.mode === 'pull_request' || (run.review_requests ?? []).length > 0;
}
