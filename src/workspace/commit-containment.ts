/**
 * Whether a commit Flux applied contains the run's own: with several runs
 * pushing to one branch, the cluster's Flux may apply a later commit than the
 * run's, which counts when the run's commit is in its history. Answered from a
 * clone of the branch without blobs (commits and trees only), made on the
 * first question and made again when Flux names a commit pushed after it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runGit } from '../git/git-process.js';
import type { GitCredentials, GitRemote, GitWorkspace } from '../run/ports.js';

/** Where the run pushed. */
export interface CommitContainmentOptions {
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly credentials?: GitCredentials;
  /** @default the OS temp dir */
  readonly workRoot?: string;
  readonly signal?: AbortSignal;
}

/** Answers "does `other` contain `commit`?" for one run; `dispose` removes the clone. */
export interface CommitContainment {
  contains(commit: string, other: string): Promise<boolean>;
  dispose(): Promise<void>;
}

const SHA = /^[0-9a-f]{40,64}$/;

/** A containment check over `git` clones of the run's branch. */
export function commitContainment(git: GitRemote, options: CommitContainmentOptions): CommitContainment {
  let root: string | undefined;
  let workspace: GitWorkspace | undefined;
  const open = async (): Promise<GitWorkspace> => {
    await workspace?.dispose().catch(() => undefined);
    root ??= await mkdtemp(join(options.workRoot ?? tmpdir(), 'flux-revisions-'));
    const dir = join(root, `clone-${Date.now()}`);
    workspace = await git.clone({
      url: options.repositoryUrl,
      branch: options.branch,
      dir,
      sparsePaths: [],
      ...(options.credentials ? { credentials: options.credentials } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return workspace;
  };
  const has = async (dir: string, sha: string) => (await runGit(['cat-file', '-e', `${sha}^{commit}`], { cwd: dir, okExitCodes: [0, 1, 128] })).exitCode === 0;
  return {
    async contains(commit, other) {
      if (!SHA.test(commit) || !SHA.test(other)) return false;
      let current = workspace ?? (await open());
      // Pushed after the clone: clone again once; a commit the branch never had does not count.
      if (!(await has(current.dir, other))) current = await open();
      if (!(await has(current.dir, other))) return false;
      const result = await runGit(['merge-base', '--is-ancestor', commit, other], { cwd: current.dir, okExitCodes: [0, 1] });
      return result.exitCode === 0;
    },
    async dispose() {
      await workspace?.dispose().catch(() => undefined);
      if (root) await rm(root, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}
