/**
 * ForgeClient for GitLab through gitbeaker (`@gitbeaker/rest`), with a
 * requester that honours `retry-after` and `ratelimit-reset` (gitbeaker's own
 * retries 429 within milliseconds) on top of gitbeaker's client-side limits.
 */
import { Gitlab } from '@gitbeaker/rest';
import { createRequesterFn, getMatchingRateLimiter, GitbeakerRequestError, type RateLimiters } from '@gitbeaker/requester-utils';
import { type Logger, silentLogger } from '../logger.js';
import type { ForgeClient, NewReviewRequest, ReviewRequest } from './forge-client.js';
import { callForge, forgeErrorOf } from './forge-error.js';
import { rateLimitedFetch } from './rate-limited-fetch.js';

export interface GitLabForgeOptions {
  /** The instance, e.g. `https://gitlab.com` (the client adds `/api/v4`). */
  readonly apiUrl: string;
  /** `group/subgroup/project`. */
  readonly projectPath: string;
  readonly token: string;
  readonly logger?: Logger;
}

interface MergeRequestLike {
  readonly iid: number;
  readonly web_url: string;
  readonly state: string;
  readonly sha?: string | null;
  readonly merge_commit_sha?: string | null;
  readonly squash_commit_sha?: string | null;
  readonly detailed_merge_status?: string;
  readonly source_project_id?: number;
  readonly target_project_id?: number;
}

function reviewOf(mr: MergeRequestLike): ReviewRequest {
  const mergeSha = mr.merge_commit_sha ?? mr.squash_commit_sha ?? undefined;
  return {
    number: mr.iid,
    url: mr.web_url,
    state: mr.state === 'merged' ? 'merged' : mr.state === 'opened' ? 'open' : 'closed',
    headSha: mr.sha ?? '',
    // "mergeable": no conflicts, pipeline and approvals done.
    mergeable: mr.detailed_merge_status === 'mergeable',
    ...(mr.state === 'merged' && mergeSha ? { mergeSha } : {}),
  };
}

function statusOf(error: unknown): number | undefined {
  const cause = (error as { cause?: { response?: { status?: number } } }).cause;
  return cause?.response?.status;
}

/** gitbeaker's request handler contract, with rate limits honoured. */
function requesterFor(logger: Logger) {
  return createRequesterFn(
    (_service, options) => Promise.resolve(options),
    async (endpoint, options = {}) => {
      const {
        rateLimiters,
        prefixUrl,
        searchParams,
        method,
        asStream: _asStream,
        agent: _agent,
        ...init
      } = options as Record<string, unknown> & { rateLimiters?: RateLimiters; prefixUrl: string; searchParams?: string; method: string };
      const url = new URL(endpoint, prefixUrl.endsWith('/') ? prefixUrl : `${prefixUrl}/`);
      url.search = searchParams ?? '';
      // gitbeaker's client-side pacing (GitLab's documented per-endpoint limits) first, then the server's word.
      await getMatchingRateLimiter(endpoint, rateLimiters, method)();
      const response = await rateLimitedFetch(() => new Request(url, { ...(init as RequestInit), method }), { forge: 'gitlab', logger });
      const headers = Object.fromEntries(response.headers.entries());
      const text = response.status === 204 ? '' : await response.text();
      const json = (response.headers.get('content-type') ?? '').includes('json') && text !== '' ? (JSON.parse(text) as unknown) : text;
      if (!response.ok) {
        const description =
          typeof json === 'object' && json !== null
            ? JSON.stringify((json as { message?: unknown; error?: unknown }).message ?? (json as { error?: unknown }).error)
            : text;
        throw new GitbeakerRequestError(description, { cause: { description, request: new Request(url, { method }), response } });
      }
      return { body: (response.status === 204 ? null : json) as never, headers, status: response.status };
    },
  );
}

export class GitLabForge implements ForgeClient {
  readonly forge = 'gitlab' as const;
  private readonly api: InstanceType<typeof Gitlab>;
  private readonly project: string;

  constructor(options: GitLabForgeOptions) {
    this.project = options.projectPath;
    this.api = new Gitlab({ host: options.apiUrl.replace(/\/+$/, ''), token: options.token, requesterFn: requesterFor(options.logger ?? silentLogger) });
  }

  private call<T>(what: string, work: () => Promise<T>): Promise<T> {
    return callForge('GitLab', what, statusOf, work);
  }

  findOpen(head: string, base: string): Promise<ReviewRequest | undefined> {
    return this.call('listing merge requests', async () => {
      const list = (await this.api.MergeRequests.all({
        projectId: this.project,
        sourceBranch: head,
        targetBranch: base,
        state: 'opened',
        perPage: 20,
        maxPages: 1,
      })) as unknown as MergeRequestLike[];
      // GitLab filters by branch name only: a fork's merge request from a branch of the same name is not ours.
      const ours = list.find((mr) => mr.source_project_id === mr.target_project_id);
      return ours ? reviewOf(ours) : undefined;
    });
  }

  open(request: NewReviewRequest): Promise<ReviewRequest> {
    return this.call('opening a merge request', async () =>
      reviewOf(
        (await this.api.MergeRequests.create(this.project, request.head, request.base, request.title, {
          description: request.body,
          labels: request.labels.join(','),
        })) as unknown as MergeRequestLike,
      ),
    );
  }

  get(number: number): Promise<ReviewRequest> {
    return this.call(`reading merge request !${number}`, async () =>
      reviewOf((await this.api.MergeRequests.show(this.project, number)) as unknown as MergeRequestLike),
    );
  }

  async merge(number: number, headSha: string): Promise<boolean> {
    try {
      return reviewOf((await this.api.MergeRequests.accept(this.project, number, { sha: headSha })) as unknown as MergeRequestLike).state === 'merged';
    } catch (error) {
      // 405/422: not mergeable (yet); 409: the head moved.
      const status = statusOf(error);
      if (status === 405 || status === 409 || status === 422) return false;
      throw forgeErrorOf('GitLab', `merging merge request !${number}`, status, error);
    }
  }

  async deleteBranch(branch: string): Promise<void> {
    try {
      await this.api.Branches.remove(this.project, branch);
    } catch (error) {
      if (statusOf(error) === 404) return;
      throw forgeErrorOf('GitLab', `deleting branch ${branch}`, statusOf(error), error);
    }
  }
}
