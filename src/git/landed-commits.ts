/**
 * What a run actually landed on its branch, read from the remote: the commits
 * whose `Scaffold-Id` trailer names the run. Used when a runner died before it
 * could report its pushes (SIGKILL mid-push: the remote may have taken the
 * commit while the runner never heard back), so the run is recorded with what
 * is there rather than with what its log last said.
 *
 * First it withdraws the run's announcements from the landing queue
 * (landing-queue.ts), so no other run can carry its commits onto the branch
 * after the run was recorded: what is read is final.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { withGitAuth } from './git-auth.js';
import { runGit, toGitError } from './git-process.js';
import { parseRepositoryUrl } from '../model/repository-url.js';
import type { GitCredentials } from '../runner/ports.js';
import { isRunId } from '../model/run-id.js';
import { isRunPass, RUN_PASSES, type RunPass } from '../model/run-action.js';

/** One scaffold pass's commit on the remote. */
export interface LandedCommit {
  readonly pass: RunPass;
  readonly sha: string;
}

/** Where to look. */
export interface LandedCommitsQuery {
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly runId: string;
  readonly credentials?: GitCredentials;
  /** A directory to make a scratch repository in; removed again. */
  readonly scratchDir: string;
  /** @default 60000 */
  readonly timeoutMs?: number;
}

/** Reads the run's commits off the remote branch. */
export type LandedCommitsReader = (query: LandedCommitsQuery) => Promise<readonly LandedCommit[]>;

/**
 * Fetches the branch (no blobs) into a scratch repository and lists the
 * commits carrying `Scaffold-Id: <runId>`, oldest first, the newest per pass.
 * A branch that does not exist yet holds nothing of the run.
 *
 * @throws UnavailableError / AuthenticationError / NotFoundError as git reports them
 */
export const readLandedCommits: LandedCommitsReader = async (query) => {
  if (!isRunId(query.runId)) return [];
  const remote = parseRepositoryUrl(query.repositoryUrl);
  const scratch = await mkdtemp(join(query.scratchDir, 'landed-'));
  const timeoutMs = query.timeoutMs ?? 60_000;
  try {
    await runGit(['init', '--quiet', '--bare', scratch], { cwd: query.scratchDir });
    const fetched = await withGitAuth(remote, query.credentials, async (auth) => {
      const call = { cwd: scratch, env: auth.env, secrets: auth.secrets, timeoutMs };
      const prefix = `refs/scaffold-queue/${query.branch}/${query.runId}--`;
      const listed = await runGit(['ls-remote', '--', remote.url, `${prefix}*`], call);
      const announced = listed.stdout.split('\n').map((line) => line.split('\t')).filter(([sha = '', ref = '']) => /^[0-9a-f]{40,64}$/.test(sha) && isRunPass(ref.slice(prefix.length)) && ref.startsWith(prefix));
      if (announced.length > 0) {
        // Under a lease: a carrier that got there first landed it, and the fetch below sees that.
        await runGit(['push', '--porcelain', ...announced.map(([sha, ref]) => `--force-with-lease=${ref}:${sha}`), '--', remote.url, ...announced.map(([, ref]) => `:${ref}`)], { ...call, okExitCodes: [0, 1] });
      }
      return runGit(['fetch', '--quiet', '--no-tags', '--filter=blob:none', '--', remote.url, `refs/heads/${query.branch}`], { ...call, okExitCodes: [0, 128] });
    });
    if (fetched.exitCode !== 0) {
      if (/couldn't find remote ref/i.test(fetched.stderr)) return [];
      throw toGitError(['fetch'], fetched);
    }
    const log = await runGit(
      ['log', '--format=%H %(trailers:key=Scaffold-Pass,valueonly,separator=%x2C)', '--extended-regexp', `--grep=^Scaffold-Id: ${query.runId.replaceAll('.', '\\.')}$`, 'FETCH_HEAD'],
      { cwd: scratch },
    );
    const newestPerPass = new Map<LandedCommit['pass'], string>();
    for (const line of log.stdout.split('\n')) {
      const [sha = '', pass = ''] = line.trim().split(' ');
      if (isRunPass(pass) && /^[0-9a-f]{40,64}$/.test(sha) && !newestPerPass.has(pass)) newestPerPass.set(pass, sha);
    }
    return RUN_PASSES.flatMap((pass) => {
      const sha = newestPerPass.get(pass);
      return sha === undefined ? [] : [{ pass, sha }];
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
};
