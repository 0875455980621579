/**
 * ForgeClient for GitHub (and GitHub Enterprise Server) through Octokit, with
 * the throttling plugin (primary limits from `x-ratelimit-*`, secondary limits
 * from a 403/429 with `retry-after`) and the retry plugin (5xx). Personal
 * tokens and GitHub App installations (the app's key mints installation tokens
 * and renews them before they expire) both work.
 */
import { createAppAuth } from '@octokit/auth-app';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import { type Logger, silentLogger } from '../logger.js';
import type { ForgeClient, NewReviewRequest, ReviewRequest } from './forge-client.js';
import { callForge, forgeErrorOf } from './forge-error.js';
import { forgeFetch } from './rate-limited-fetch.js';

/** How the client authenticates. */
export type GitHubAuth =
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'app'; readonly appId: string; readonly privateKey: string; readonly installationId: string };

export interface GitHubForgeOptions {
  /** e.g. `https://api.github.com` or `https://ghe.example.com/api/v3`. */
  readonly apiUrl: string;
  readonly owner: string;
  readonly repo: string;
  readonly auth: GitHubAuth;
  readonly logger?: Logger;
  /** How many times a rate-limited request is retried before the error surfaces. @default 5 */
  readonly rateLimitRetries?: number;
}

const ThrottledOctokit = Octokit.plugin(throttling, retry);

interface PullLike {
  readonly number: number;
  readonly html_url: string;
  readonly state: string;
  readonly merged?: boolean | null;
  readonly merged_at?: string | null;
  readonly merge_commit_sha?: string | null;
  readonly mergeable?: boolean | null;
  readonly mergeable_state?: string;
  readonly head: { readonly sha: string };
}

function reviewOf(pull: PullLike): ReviewRequest {
  const merged = pull.merged === true || Boolean(pull.merged_at);
  return {
    number: pull.number,
    url: pull.html_url,
    state: merged ? 'merged' : pull.state === 'closed' ? 'closed' : 'open',
    headSha: pull.head.sha,
    // "clean": no conflicts and every required check and review passed.
    mergeable: pull.mergeable === true && pull.mergeable_state === 'clean',
    ...(merged && pull.merge_commit_sha ? { mergeSha: pull.merge_commit_sha } : {}),
  };
}

/** Octokit's RequestError carries the HTTP status; its message never holds the token. */
function statusOf(error: unknown): number | undefined {
  return (error as { status?: number }).status;
}

export class GitHubForge implements ForgeClient {
  readonly forge = 'github' as const;
  private readonly octokit: InstanceType<typeof ThrottledOctokit>;
  private readonly repoRef: { owner: string; repo: string };

  constructor(options: GitHubForgeOptions) {
    const logger = options.logger ?? silentLogger;
    const retries = options.rateLimitRetries ?? 5;
    this.repoRef = { owner: options.owner, repo: options.repo };
    const onLimit = (kind: string) => (retryAfter: number, request: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
      logger.warn(
        { event: 'forge_rate_limited', forge: 'github', kind, retry_after_s: retryAfter, attempt: retryCount + 1 },
        `GitHub ${kind} rate limit on ${request.method} ${request.url}; retrying in ${retryAfter}s`,
      );
      return retryCount < retries;
    };
    this.octokit = new ThrottledOctokit({
      baseUrl: options.apiUrl.replace(/\/+$/, ''),
      userAgent: 'gitops-scaffolder',
      // Every call, the App's installation-token exchange included, refuses a redirect to another origin.
      request: { fetch: forgeFetch('GitHub') },
      ...(options.auth.kind === 'token'
        ? { auth: options.auth.token }
        : {
            authStrategy: createAppAuth,
            auth: { appId: options.auth.appId, privateKey: options.auth.privateKey, installationId: options.auth.installationId },
          }),
      throttle: { onRateLimit: onLimit('primary'), onSecondaryRateLimit: onLimit('secondary') },
      // 405 (not mergeable yet) and 409 (head moved) are answers, not faults: the poll asks again.
      retry: { doNotRetry: [400, 401, 403, 404, 405, 409, 410, 422, 451] },
      // Octokit logs through console by default; the run's logger has the events.
      log: {
        debug: () => undefined,
        info: () => undefined,
        warn: (message: string) => logger.warn({ forge: 'github' }, message),
        error: (message: string) => logger.error({ forge: 'github' }, message),
      },
    });
  }

  /** A token git can push with: the installation token for an app, else the personal token. */
  async gitToken(): Promise<string> {
    const auth = (await this.octokit.auth({ type: 'installation' })) as { token: string };
    return auth.token;
  }

  private call<T>(what: string, work: () => Promise<T>): Promise<T> {
    return callForge('GitHub', what, statusOf, work);
  }

  findOpen(head: string, base: string): Promise<ReviewRequest | undefined> {
    return this.call('listing pull requests', async () => {
      const { data } = await this.octokit.rest.pulls.list({ ...this.repoRef, state: 'open', head: `${this.repoRef.owner}:${head}`, base, per_page: 10 });
      return data[0] ? reviewOf(data[0]) : undefined;
    });
  }

  open(request: NewReviewRequest): Promise<ReviewRequest> {
    return this.call('opening a pull request', async () => {
      const { data } = await this.octokit.rest.pulls.create({
        ...this.repoRef,
        head: request.head,
        base: request.base,
        title: request.title,
        body: request.body,
      });
      // Labels live on the pull request's issue.
      if (request.labels.length > 0) await this.octokit.rest.issues.addLabels({ ...this.repoRef, issue_number: data.number, labels: [...request.labels] });
      return reviewOf(data);
    });
  }

  get(number: number): Promise<ReviewRequest> {
    return this.call(`reading pull request #${number}`, async () =>
      reviewOf((await this.octokit.rest.pulls.get({ ...this.repoRef, pull_number: number })).data),
    );
  }

  async merge(number: number, headSha: string): Promise<boolean> {
    try {
      const { data } = await this.octokit.rest.pulls.merge({ ...this.repoRef, pull_number: number, sha: headSha, merge_method: 'merge' });
      return data.merged;
    } catch (error) {
      // 405: not mergeable (yet); 409: the head moved. Both: look again later.
      const status = statusOf(error);
      if (status === 405 || status === 409) return false;
      throw forgeErrorOf('GitHub', `merging pull request #${number}`, status, error);
    }
  }

  async deleteBranch(branch: string): Promise<void> {
    try {
      await this.octokit.rest.git.deleteRef({ ...this.repoRef, ref: `heads/${branch}` });
    } catch (error) {
      // 422 "Reference does not exist": the forge deleted it on merge.
      if (statusOf(error) === 422) return;
      throw forgeErrorOf('GitHub', `deleting branch ${branch}`, statusOf(error), error);
    }
  }
}
