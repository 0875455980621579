/**
 * What a run actually landed on its branch, read from the remote: the commits
 * whose `Scaffold-Id` trailer names the run and whose `Scaffold-Mac` holds
 * under the service's key for that run, attempt, cluster and the commit's tree
 * at `clusters/<cluster>` (queue-auth.ts); a commit planted with the run's
 * trailers but without the key is not the run's. Used when a runner died before it
 * could report its pushes (SIGKILL mid-push: the remote may have taken the
 * commit while the runner never heard back), so the run is recorded with what
 * is there rather than with what its log last said.
 *
 * First it closes the attempt's fence (attempt-fence.ts) and withdraws its
 * announcements from the landing queue (landing-queue.ts) in one atomic push,
 * so neither a push of the dead runner the server is still receiving nor
 * another run carrying its commit can land anything after: what is read is final.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { withGitAuth } from './git-auth.js';
import { runGit, toGitError } from './git-process.js';
import { parseRepositoryUrl } from '../model/repository-url.js';
import type { GitCredentials } from '../run/ports.js';
import { isRunId } from '../model/run-id.js';
import { isRunPass, RUN_PASSES, type RunPass } from '../model/run-action.js';
import { parseQueueRef, queuePrefix } from './landing-queue.js';
import { fenceCommit, fenceRef } from './attempt-fence.js';
import { UnavailableError } from '../errors.js';
import { MAC_TRAILER, passCommitAuthentic } from './queue-auth.js';

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
  /** The run's attempt and cluster, which its commits' MAC covers. */
  readonly attempt: number;
  readonly cluster: string;
  /** The key the service gave the run's runner. */
  readonly queueKey: Buffer;
  readonly credentials?: GitCredentials;
  /** A directory to make a scratch repository in; removed again. */
  readonly scratchDir: string;
  /** @default 60000 */
  readonly timeoutMs?: number;
}

/** How often closing the fence is tried again when a push still in flight moved it (each try waits for the remote's hooks). */
const FENCE_ROUNDS = 10;

/**
 * Closes the attempt's fence and withdraws its announcements in one atomic
 * push, each under a lease on what ls-remote showed; again while a push of
 * the attempt still in flight moves either. Once it went through, nothing of
 * the attempt can land any more: a push of it the server is still receiving
 * fails its fence lease, and with no announcement left no carrier can take one.
 * @throws UnavailableError when the fence could not be closed
 */
async function fenceAttempt(
  query: LandedCommitsQuery,
  url: string,
  scratch: string,
  call: { cwd: string; env: Record<string, string>; secrets: readonly string[]; timeoutMs: number },
): Promise<void> {
  const owner = { cluster: query.cluster, attempt: query.attempt, id: query.runId };
  const fence = fenceRef(query.branch, owner);
  const scratchGit = {
    git: (args: readonly string[], extra: { readonly input?: string; readonly env?: Readonly<Record<string, string>> } = {}) =>
      runGit(args, { cwd: scratch, ...extra }),
  };
  for (let round = 1; ; round++) {
    const listed = await runGit(['ls-remote', '--', url, fence, `${queuePrefix(query.branch)}${query.runId}--*`], call);
    const lines = listed.stdout.split('\n').map((line) => line.split('\t'));
    const current = lines.find(([, ref]) => ref === fence)?.[0] ?? '';
    const announced = lines.filter(([sha = '', ref = '']) => /^[0-9a-f]{40,64}$/.test(sha) && parseQueueRef(query.branch, ref)?.id === query.runId);
    const closed = await fenceCommit(scratchGit, 'closed', owner, undefined);
    const leases = [`--force-with-lease=${fence}:${current}`, ...announced.map(([sha, ref]) => `--force-with-lease=${ref}:${sha}`)];
    const refspecs = [`${closed}:${fence}`, ...announced.map(([, ref]) => `:${ref}`)];
    const pushed = await runGit(['push', '--porcelain', '--atomic', ...leases, '--', url, ...refspecs], { ...call, okExitCodes: [0, 1, 128] });
    if (pushed.exitCode === 0) return;
    if (/does not support --atomic/.test(pushed.stderr)) {
      // No atomic pushes: no runner fenced its pushes either; withdrawing is all there is.
      await runGit(['push', '--porcelain', ...leases, '--', url, ...refspecs], { ...call, okExitCodes: [0, 1] });
      return;
    }
    if (round >= FENCE_ROUNDS) throw new UnavailableError(`could not fence run ${query.runId} on ${query.branch}: its fence kept moving`);
  }
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
      await fenceAttempt(query, remote.url, scratch, call);
      return runGit(['fetch', '--quiet', '--no-tags', '--filter=blob:none', '--', remote.url, `refs/heads/${query.branch}`], {
        ...call,
        okExitCodes: [0, 128],
      });
    });
    if (fetched.exitCode !== 0) {
      if (/couldn't find remote ref/i.test(fetched.stderr)) return [];
      throw toGitError(['fetch'], fetched);
    }
    const log = await runGit(
      [
        'log',
        `--format=%H %(trailers:key=Scaffold-Pass,valueonly,separator=%x2C) %(trailers:key=${MAC_TRAILER},valueonly,separator=%x2C)`,
        '--extended-regexp',
        `--grep=^Scaffold-Id: ${query.runId.replaceAll('.', '\\.')}$`,
        'FETCH_HEAD',
      ],
      { cwd: scratch },
    );
    const candidates = log.stdout
      .split('\n')
      .map((line) => line.trim().split(' '))
      .filter(([sha = '', pass = '']) => isRunPass(pass) && /^[0-9a-f]{40,64}$/.test(sha));
    const trees =
      candidates.length === 0
        ? []
        : (
            await runGit(['cat-file', '--batch-check=%(objectname)'], {
              cwd: scratch,
              input: candidates.map(([sha]) => `${sha}:clusters/${query.cluster}\n`).join(''),
            })
          ).stdout.split('\n');
    const newestPerPass = new Map<LandedCommit['pass'], string>();
    for (const [i, [sha = '', pass = '', mac = '']] of candidates.entries()) {
      const line = trees[i] ?? '';
      const clusterTree = line.endsWith(' missing') ? '' : line;
      const fields = { id: query.runId, attempt: query.attempt, pass, cluster: query.cluster, clusterTree };
      if (isRunPass(pass) && !newestPerPass.has(pass) && passCommitAuthentic(query.queueKey, fields, mac)) newestPerPass.set(pass, sha);
    }
    return RUN_PASSES.flatMap((pass) => {
      const sha = newestPerPass.get(pass);
      return sha === undefined ? [] : [{ pass, sha }];
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
};
