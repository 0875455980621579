/**
 * The commit a remote branch points at, from one `git ls-remote`: a round trip
 * with no objects, so a reader that keeps an answer per branch (the fleet) can
 * tell whether it still holds before paying for a clone.
 */
import { tmpdir } from 'node:os';
import { withGitAuth } from './git-auth.js';
import { runGit } from './git-process.js';
import { parseRepositoryUrl } from '../model/repository-url.js';
import type { GitCredentials } from '../run/ports.js';

/** Which branch of which remote. */
export interface BranchHeadQuery {
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly credentials?: GitCredentials;
  readonly signal?: AbortSignal;
  /** @default 30000 */
  readonly timeoutMs?: number;
}

/** Reads a branch's head; undefined when the branch does not exist. */
export type BranchHeadReader = (query: BranchHeadQuery) => Promise<string | undefined>;

/**
 * @throws UnavailableError / AuthenticationError / NotFoundError as git reports them
 * @throws ValidationError for a URL the repository policy refuses
 */
export const readBranchHead: BranchHeadReader = async (query) => {
  const remote = parseRepositoryUrl(query.repositoryUrl);
  const ref = `refs/heads/${query.branch}`;
  const listed = await withGitAuth(remote, query.credentials, (auth) =>
    runGit(['ls-remote', '--', remote.url, ref], {
      cwd: tmpdir(),
      env: auth.env,
      secrets: auth.secrets,
      timeoutMs: query.timeoutMs ?? 30_000,
      ...(query.signal ? { signal: query.signal } : {}),
    }),
  );
  // `refs/heads/main` also matches `refs/heads/x/refs/heads/main`: take the exact ref only.
  for (const line of listed.stdout.split('\n')) {
    const [sha = '', name = ''] = line.trim().split('\t');
    if (name === ref && /^[0-9a-f]{40,64}$/.test(sha)) return sha;
  }
  return undefined;
};
