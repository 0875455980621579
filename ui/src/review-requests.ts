/**
 * What the run page shows of a run's pull/merge requests: which pass, the
 * forge's own way of naming the request (`#12` on GitHub and Gitea, `!12` on
 * GitLab), its state, and a link only to an http(s) page. Pure, so it is
 * tested without a browser.
 */
import type { ReviewRequest, Run } from './api';

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

export function shownReviewRequests(run: Pick<Run, 'review_requests'>): readonly ShownReviewRequest[] {
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
export function deliversThroughRequests(run: Pick<Run, 'delivery' | 'review_requests'>): boolean {
  return run.delivery?.mode === 'pull_request' || (run.review_requests ?? []).length > 0;
}
