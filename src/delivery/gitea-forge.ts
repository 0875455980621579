/**
 * ForgeClient for Gitea (and Forgejo) over its v1 REST API with fetch: no
 * maintained client library covers it, and delivery needs six endpoints.
 */
import { type Logger, silentLogger } from '../logger.js';
import type { ForgeClient, NewReviewRequest, ReviewRequest } from './forge-client.js';
import { callForge, forgeErrorOf } from './forge-error.js';
import { rateLimitedFetch } from './rate-limited-fetch.js';

export interface GiteaForgeOptions {
  /** e.g. `https://gitea.example.com/api/v1`. */
  readonly apiUrl: string;
  readonly owner: string;
  readonly repo: string;
  readonly token: string;
  readonly logger?: Logger;
}

interface PullLike {
  readonly number: number;
  readonly html_url: string;
  readonly state: string;
  readonly merged?: boolean;
  readonly merge_commit_sha?: string | null;
  readonly mergeable?: boolean;
  readonly head: { readonly ref: string; readonly sha: string; readonly repo_id?: number };
  readonly base: { readonly ref: string; readonly repo_id?: number };
}

/** Open pulls are listed a page at a time; a repository with more open ones than this is not searched further. */
const MAX_PAGES = 10;
const PAGE = 50;

function reviewOf(pull: PullLike): ReviewRequest {
  return {
    number: pull.number,
    url: pull.html_url,
    state: pull.merged ? 'merged' : pull.state === 'closed' ? 'closed' : 'open',
    headSha: pull.head.sha,
    mergeable: pull.state === 'open' && pull.mergeable === true,
    ...(pull.merged && pull.merge_commit_sha ? { mergeSha: pull.merge_commit_sha } : {}),
  };
}

class GiteaHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function statusOf(error: unknown): number | undefined {
  return error instanceof GiteaHttpError ? error.status : undefined;
}

export class GiteaForge implements ForgeClient {
  readonly forge = 'gitea' as const;
  private readonly logger: Logger;
  private readonly base: string;

  constructor(private readonly options: GiteaForgeOptions) {
    this.logger = options.logger ?? silentLogger;
    this.base = `${options.apiUrl.replace(/\/+$/, '')}/repos/${encodeURIComponent(options.owner)}/${encodeURIComponent(options.repo)}`;
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await rateLimitedFetch(
      () =>
        new Request(`${this.base}${path}`, {
          method,
          headers: {
            authorization: `token ${this.options.token}`,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      { forge: 'gitea', logger: this.logger },
    );
    const text = await response.text();
    if (!response.ok) {
      let message = text;
      try {
        message = String((JSON.parse(text) as { message?: unknown }).message ?? text);
      } catch {
        // Not JSON: keep the text.
      }
      throw new GiteaHttpError(response.status, message.slice(0, 500));
    }
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  private call<T>(what: string, work: () => Promise<T>): Promise<T> {
    return callForge('Gitea', what, statusOf, work);
  }

  findOpen(head: string, base: string): Promise<ReviewRequest | undefined> {
    return this.call('listing pull requests', async () => {
      for (let page = 1; page <= MAX_PAGES; page++) {
        const pulls = await this.request<PullLike[]>('GET', `/pulls?state=open&limit=${PAGE}&page=${page}`);
        // A fork's pull from a branch of the same name is not ours: reused, its head would be merged as our pass.
        const found = pulls.find((p) => p.head.ref === head && p.base.ref === base && p.head.repo_id === p.base.repo_id);
        if (found) return reviewOf(found);
        if (pulls.length < PAGE) return undefined;
      }
      return undefined;
    });
  }

  open(request: NewReviewRequest): Promise<ReviewRequest> {
    return this.call('opening a pull request', async () => {
      // Gitea takes label ids: the repository's labels of those names, where they exist.
      const known = await this.request<{ id: number; name: string }[]>('GET', '/labels?limit=50');
      const labels = known.filter((l) => request.labels.includes(l.name)).map((l) => l.id);
      return reviewOf(
        await this.request<PullLike>('POST', '/pulls', { head: request.head, base: request.base, title: request.title, body: request.body, labels }),
      );
    });
  }

  get(number: number): Promise<ReviewRequest> {
    return this.call(`reading pull request #${number}`, async () => reviewOf(await this.request<PullLike>('GET', `/pulls/${number}`)));
  }

  async merge(number: number, headSha: string): Promise<boolean> {
    try {
      await this.request('POST', `/pulls/${number}/merge`, { Do: 'merge', head_commit_id: headSha });
      return true;
    } catch (error) {
      // 405: not mergeable (yet); 409: the head moved or conflicts.
      if (error instanceof GiteaHttpError && (error.status === 405 || error.status === 409)) return false;
      throw forgeErrorOf('Gitea', `merging pull request #${number}`, statusOf(error), error);
    }
  }

  async deleteBranch(branch: string): Promise<void> {
    try {
      await this.request('DELETE', `/branches/${encodeURIComponent(branch)}`);
    } catch (error) {
      if (error instanceof GiteaHttpError && error.status === 404) return;
      throw forgeErrorOf('Gitea', `deleting branch ${branch}`, statusOf(error), error);
    }
  }
}
