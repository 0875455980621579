/**
 * The client each forge of `model/forges.ts` is reached through, keyed by the
 * same names: a forge added to that table does not compile until it has one
 * here. Apart from the dashboard-safe descriptor table because these pull in
 * Octokit and gitbeaker, which only the runner needs.
 */
import type { Logger } from '../logger.js';
import type { ForgeName } from '../model/forges.js';
import type { ForgeClient } from './forge-client.js';
import { GiteaForge } from './gitea-forge.js';
import { type GitHubAuth, GitHubForge } from './github-forge.js';
import { GitLabForge } from './gitlab-forge.js';

/** One repository on one forge, as `createForgeClient` resolved it. */
export interface ForgeTarget {
  /** The API, checked (https, or http to loopback). */
  readonly apiUrl: string;
  /** The repository's whole path without `.git`: `owner/repo`, `group/sub/project`. */
  readonly path: string;
  /** `path` up to its last slash. */
  readonly owner: string;
  /** `path`'s last segment. */
  readonly repo: string;
  /** A token, or (only for a forge whose descriptor accepts one) a GitHub App. */
  readonly auth: GitHubAuth;
  readonly logger: Logger;
}

/** A forge's token; `createForgeClient` has refused an App for a forge that does not accept one. */
function tokenOf(auth: GitHubAuth): string {
  if (auth.kind !== 'token') throw new Error('a GitHub App reached a token-only forge client');
  return auth.token;
}

export const FORGE_CLIENTS: { readonly [F in ForgeName]: (target: ForgeTarget) => ForgeClient } = {
  github: ({ apiUrl, owner, repo, auth, logger }) => new GitHubForge({ apiUrl, owner, repo, auth, logger }),
  gitlab: ({ apiUrl, path, auth, logger }) => new GitLabForge({ apiUrl, projectPath: path, token: tokenOf(auth), logger }),
  gitea: ({ apiUrl, owner, repo, auth, logger }) => new GiteaForge({ apiUrl, owner, repo, token: tokenOf(auth), logger }),
};
