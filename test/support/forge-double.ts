/**
 * A protocol-faithful double of the forge endpoints delivery uses, in front of a
 * real bare repository: GitHub's REST API (pulls list/create/get/merge, issue
 * labels, git refs delete, `x-ratelimit-*` headers and a 403 secondary rate
 * limit with `retry-after`), GitLab's v4 merge requests and Gitea's v1 pulls.
 * Merges are real: a merge commit written with `git merge-tree` and moved onto
 * the base branch of the bare repository, so the next clone or fetch sees it.
 * Loopback only; the server does not keep the test process alive.
 */
import { type KeyObject, verify } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runGit } from '../../src/git/git-process.js';
import type { ForgeName } from '../../src/model/forges.js';
import { type ForgeRoute, githubRoutes, gitlabRoutes, giteaRoutes } from './forge-double-routes.js';

/** Every forge of the forge table has a double: a forge added there does not compile here until it has its routes. */
export type DoubleForge = ForgeName;

const ROUTES: { readonly [F in DoubleForge]: readonly ForgeRoute[] } = { github: githubRoutes, gitlab: gitlabRoutes, gitea: giteaRoutes };

/** A pull/merge request as the double keeps it. */
export interface DoublePull {
  readonly number: number;
  readonly head: string;
  readonly base: string;
  readonly title: string;
  readonly body: string;
  labels: string[];
  state: 'open' | 'closed';
  merged: boolean;
  mergeSha?: string;
  /** Whether required checks have passed; the test flips it. */
  checksPassed: boolean;
}

/** One API call as the double answered it. */
export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly at: number;
}

export interface ForgeDouble {
  readonly forge: DoubleForge;
  /** What a client is configured with (GitHub's base URL, GitLab's host, Gitea's `/api/v1`). */
  readonly apiUrl: string;
  readonly calls: RecordedCall[];
  readonly pulls: DoublePull[];
  /** Called (not awaited by the client) each time a request is opened. */
  onOpened: (pull: DoublePull) => void;
  /**
   * The next `count` API calls are throttled: GitHub's secondary limit (403 with
   * `retry-after`) or, with `primary`, its spent budget (403, `x-ratelimit-remaining: 0`
   * and `x-ratelimit-reset` that many seconds ahead); GitLab's and Gitea's 429.
   */
  rateLimitNext(retryAfterSeconds: number, count?: number, kind?: 'secondary' | 'primary'): void;
  /**
   * The next `count` API calls answer `307` to the same path and query under
   * `base`: another server (another origin) or this double's own `baseUrl`.
   */
  redirectNext(base: string, count?: number): void;
  /** `http://127.0.0.1:PORT`, the double's origin. */
  readonly baseUrl: string;
  /** Merges as a reviewer pressing the button would. */
  merge(number: number): Promise<void>;
  /** Closes without merging. */
  close(number: number): void;
  stop(): Promise<void>;
}

export interface ForgeDoubleOptions {
  readonly forge: DoubleForge;
  /** The bare repository the forge hosts. */
  readonly repoDir: string;
  readonly owner: string;
  readonly repo: string;
  readonly token: string;
  /** Whether new requests start with their checks passed. @default true */
  readonly checksPass?: boolean;
  /**
   * GitHub only: a GitHub App installed on the repository. `POST
   * /app/installations/{id}/access_tokens` with a JWT the App's key signed
   * (RS256, `iss` the App id, at most 10 minutes) answers with `token`.
   */
  readonly githubApp?: { readonly appId: string; readonly installationId: string; readonly publicKey: KeyObject };
}

/** What a route handler gets. */
export interface ForgeContext {
  readonly options: ForgeDoubleOptions;
  readonly pulls: DoublePull[];
  readonly baseUrl: string;
  /** Commit a branch of the bare repository points at, or undefined. */
  branchSha(branch: string): Promise<string | undefined>;
  deleteBranch(branch: string): Promise<boolean>;
  /** Merges `pull` into its base; false when the merge would conflict. */
  mergePull(pull: DoublePull): Promise<boolean>;
  opened(pull: DoublePull): void;
}

/** A JSON response. */
export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

const MERGER = {
  GIT_AUTHOR_NAME: 'Forge Double',
  GIT_AUTHOR_EMAIL: 'forge@example.invalid',
  GIT_COMMITTER_NAME: 'Forge Double',
  GIT_COMMITTER_EMAIL: 'forge@example.invalid',
};

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    // GitLab clients may send a form body.
    return Object.fromEntries(new URLSearchParams(text));
  }
}

function authorized(forge: DoubleForge, req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  if (forge === 'gitlab') return req.headers['private-token'] === token || header === `Bearer ${token}`;
  return header === `token ${token}` || header === `Bearer ${token}`;
}

/** GitHub's check of an App's JWT: RS256 signed by the App's key, issued by the App, expiring within 10 minutes. */
function appJwtValid(header: string, app: NonNullable<ForgeDoubleOptions['githubApp']>): boolean {
  const jwt = /^bearer (.+)$/i.exec(header)?.[1] ?? '';
  const [head, payload, signature] = jwt.split('.');
  if (!head || !payload || !signature) return false;
  const decode = (part: string): Record<string, unknown> => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  if (decode(head)['alg'] !== 'RS256') return false;
  if (!verify('RSA-SHA256', Buffer.from(`${head}.${payload}`), app.publicKey, Buffer.from(signature, 'base64url'))) return false;
  const claims = decode(payload);
  const now = Math.floor(Date.now() / 1000);
  return String(claims['iss']) === app.appId && typeof claims['exp'] === 'number' && claims['exp'] > now && claims['exp'] - now <= 600;
}

function send(res: ServerResponse, reply: Reply): void {
  const headers = { ...reply.headers };
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers).end();
    return;
  }
  res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(reply.body));
}

/** Starts the double on a free 127.0.0.1 port. */
export async function startForgeDouble(options: ForgeDoubleOptions): Promise<ForgeDouble> {
  const { forge, repoDir } = options;
  const calls: RecordedCall[] = [];
  const pulls: DoublePull[] = [];
  let limited: { count: number; retryAfter: number; kind: 'secondary' | 'primary' } | undefined;
  let redirected: { count: number; base: string } | undefined;
  /** GitHub's primary budget, counted down by every call and reported in the headers. */
  let remaining = 5000;
  const resetAt = Math.floor(Date.now() / 1000) + 3600;

  const branchSha = async (branch: string): Promise<string | undefined> => {
    const result = await runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { cwd: repoDir, okExitCodes: [0, 1] });
    return result.exitCode === 0 ? result.stdout.trim() : undefined;
  };
  const mergePull = async (pull: DoublePull): Promise<boolean> => {
    const base = await branchSha(pull.base);
    const head = await branchSha(pull.head);
    if (!base || !head) return false;
    const tree = await runGit(['merge-tree', '--write-tree', base, head], { cwd: repoDir, okExitCodes: [0, 1] });
    if (tree.exitCode !== 0) return false;
    const message = `Merge pull request #${pull.number} from ${pull.head}\n\n${pull.title}`;
    const commit = (
      await runGit(['commit-tree', tree.stdout.split('\n')[0]!, '-p', base, '-p', head, '-m', message], { cwd: repoDir, env: MERGER })
    ).stdout.trim();
    await runGit(['update-ref', `refs/heads/${pull.base}`, commit, base], { cwd: repoDir });
    pull.state = 'closed';
    pull.merged = true;
    pull.mergeSha = commit;
    return true;
  };
  const double: ForgeDouble = {
    forge,
    apiUrl: '',
    calls,
    pulls,
    onOpened: () => undefined,
    rateLimitNext(retryAfter, count = 1, kind = 'secondary') {
      limited = { count, retryAfter, kind };
    },
    redirectNext(base, count = Number.POSITIVE_INFINITY) {
      redirected = { count, base };
    },
    baseUrl: '',
    async merge(number) {
      const pull = pulls.find((p) => p.number === number);
      if (!pull || !(await mergePull(pull))) throw new Error(`the double could not merge #${number}`);
    },
    close(number) {
      const pull = pulls.find((p) => p.number === number);
      if (pull) pull.state = 'closed';
    },
    stop: async () => undefined,
  };
  let baseUrl = '';
  const context: ForgeContext = {
    options,
    pulls,
    get baseUrl() {
      return baseUrl;
    },
    branchSha,
    async deleteBranch(branch) {
      if (!(await branchSha(branch))) return false;
      await runGit(['update-ref', '-d', `refs/heads/${branch}`], { cwd: repoDir });
      return true;
    },
    mergePull,
    opened: (pull) => double.onOpened(pull),
  };
  const routes = ROUTES[forge];

  const handle = async (req: IncomingMessage): Promise<Reply> => {
    // A moved API (or a proxy in front of it) answers before it looks at credentials.
    if (redirected && redirected.count > 0) {
      redirected.count -= 1;
      return { status: 307, headers: { location: `${redirected.base}${req.url ?? '/'}` }, body: { message: 'Moved' } };
    }
    const app = forge === 'github' ? options.githubApp : undefined;
    const installation = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
    if (app && installation && req.method === 'POST') {
      if (!appJwtValid(req.headers.authorization ?? '', app)) return { status: 401, body: { message: 'A JSON web token could not be decoded' } };
      if (installation[1] !== app.installationId) return { status: 404, body: { message: 'Not Found' } };
      const expiresAt = new Date(Date.now() + 3600_000).toISOString();
      return {
        status: 201,
        body: { token: options.token, expires_at: expiresAt, permissions: { contents: 'write', pull_requests: 'write' }, repository_selection: 'selected' },
      };
    }
    if (!authorized(forge, req, options.token)) {
      return { status: 401, body: forge === 'gitlab' ? { message: '401 Unauthorized' } : { message: 'Bad credentials' } };
    }
    if (limited && limited.count > 0) {
      limited.count -= 1;
      const headers = { 'retry-after': String(limited.retryAfter) };
      if (forge === 'github' && limited.kind === 'primary') {
        const reset = String(Math.floor(Date.now() / 1000) + limited.retryAfter);
        return {
          status: 403,
          headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset },
          body: {
            message: 'API rate limit exceeded for installation ID 1.',
            documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
          },
        };
      }
      if (forge === 'github') {
        return {
          status: 403,
          headers,
          body: {
            message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
            documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
          },
        };
      }
      return { status: 429, headers, body: { message: 'Retry later' } };
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    for (const route of routes) {
      if (route.method !== req.method) continue;
      const match = route.path.exec(url.pathname);
      if (!match) continue;
      const body = req.method === 'GET' || req.method === 'DELETE' ? {} : await readJson(req);
      return route.handle({ context, params: match.groups ?? {}, query: url.searchParams, body: body as Record<string, unknown> });
    }
    return { status: 404, body: { message: 'Not Found' } };
  };

  const server = createServer((req, res) => {
    void handle(req)
      .catch((error: unknown) => ({ status: 500, body: { message: String(error) } }) as Reply)
      .then((reply) => {
        remaining = Math.max(0, remaining - 1);
        const rateHeaders: Record<string, string> =
          forge === 'github'
            ? {
                'x-ratelimit-limit': '5000',
                'x-ratelimit-remaining': String(remaining),
                'x-ratelimit-reset': String(resetAt),
                'x-ratelimit-used': String(5000 - remaining),
                'x-ratelimit-resource': 'core',
              }
            : forge === 'gitlab'
              ? { 'ratelimit-limit': '2000', 'ratelimit-remaining': String(remaining), 'ratelimit-reset': String(resetAt) }
              : {};
        calls.push({ method: req.method ?? '', path: req.url ?? '', status: reply.status, at: Date.now() });
        send(res, { ...reply, headers: { ...rateHeaders, ...reply.headers } });
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  return Object.assign(double, {
    baseUrl,
    apiUrl: forge === 'gitea' ? `${baseUrl}/api/v1` : baseUrl,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.ref();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  });
}
