/**
 * The forge client for a run's repository: which repository the forge calls it
 * and where its API lives follow from the repository URL unless `api_url` says.
 */
import { ValidationError } from '../errors.js';
import { isLoopbackHost, parseRepositoryUrl } from '../git/repository-url.js';
import { type Logger, silentLogger } from '../logger.js';
import type { DeliveryMode } from './delivery.js';
import type { ForgeClient, ForgeName } from './forge-client.js';
import { GiteaForge } from './gitea-forge.js';
import { type GitHubAuth, GitHubForge } from './github-forge.js';
import { GitLabForge } from './gitlab-forge.js';

/** A run's delivery settings, as the request and the runner flags give them. */
export interface DeliverySettings {
  readonly mode: DeliveryMode;
  /** @default false */
  readonly autoMerge?: boolean;
  /** Needed in pull_request mode. */
  readonly forge?: ForgeName;
  /** The forge's API; derived from the repository URL's host when absent. */
  readonly apiUrl?: string;
}

/** How to call the forge: a token (also the one git pushes with), or a GitHub App installation. */
export type ForgeAuth = GitHubAuth;

/** The repository's path on its host, without `.git`: `owner/repo`, or `group/sub/project` on GitLab. */
export function repositoryPathOf(repositoryUrl: string): string {
  const remote = parseRepositoryUrl(repositoryUrl, 'repository.url');
  if (remote.kind === 'file' || remote.host === undefined) {
    throw new ValidationError([{ field: 'delivery.mode', message: 'pull_request needs a repository hosted on a forge, not a local path' }]);
  }
  const raw = /^[a-z][a-z0-9+.-]*:\/\//i.test(remote.url) ? new URL(remote.url).pathname : remote.url.replace(/^[^:]*:/, '');
  const path = decodeURIComponent(raw).replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
  if (path.split('/').filter(Boolean).length < 2) {
    throw new ValidationError([{ field: 'repository.url', message: `"${remote.display}" does not name an owner and a repository` }]);
  }
  return path;
}

/** The API a forge serves next to a repository on `host` (GitHub.com's lives on its own host). */
export function defaultApiUrl(forge: ForgeName, repositoryUrl: string): string {
  const host = parseRepositoryUrl(repositoryUrl, 'repository.url').host;
  if (host === undefined) throw new ValidationError([{ field: 'delivery.api_url', message: 'is needed for a repository without a host' }]);
  if (forge === 'github') return host === 'github.com' ? 'https://api.github.com' : `https://${host}/api/v3`;
  return forge === 'gitlab' ? `https://${host}` : `https://${host}/api/v1`;
}

/** The token goes to this URL: https only, plain http to loopback (the test doubles). */
export function checkApiUrl(value: string, field = 'delivery.api_url'): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError([{ field, message: 'is not a URL' }]);
  }
  if (url.username || url.password || url.search || url.hash) throw new ValidationError([{ field, message: 'must not hold credentials, a query or a fragment' }]);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(host))) {
    throw new ValidationError([{ field, message: 'must be https (plain http only to a loopback address)' }]);
  }
  return url.toString().replace(/\/+$/, '');
}

export interface ForgeClientOptions {
  readonly forge: ForgeName;
  readonly repositoryUrl: string;
  readonly apiUrl?: string;
  readonly auth: ForgeAuth;
  readonly logger?: Logger;
}

export function createForgeClient(options: ForgeClientOptions): ForgeClient {
  const path = repositoryPathOf(options.repositoryUrl);
  const apiUrl = checkApiUrl(options.apiUrl ?? defaultApiUrl(options.forge, options.repositoryUrl));
  const logger = options.logger ?? silentLogger;
  const slash = path.lastIndexOf('/');
  const [owner, repo] = [path.slice(0, slash), path.slice(slash + 1)];
  if (options.forge === 'github') return new GitHubForge({ apiUrl, owner, repo, auth: options.auth, logger });
  if (options.auth.kind !== 'token') throw new ValidationError([{ field: 'delivery.forge', message: 'GitHub App credentials only work with forge "github"' }]);
  if (options.forge === 'gitlab') return new GitLabForge({ apiUrl, projectPath: path, token: options.auth.token, logger });
  return new GiteaForge({ apiUrl, owner, repo, token: options.auth.token, logger });
}
