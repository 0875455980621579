/**
 * The two git moves of pull-request delivery, for a CliGitWorkspace: put a
 * pass's commit on its own branch of the remote, and, once the forge merged it,
 * move the working copy onto the default branch so the next pass starts from
 * what the cluster's Flux will read.
 */
import { ValidationError } from '../errors.js';
import type { PushResult } from '../run/ports.js';
import type { GitResult } from './git-process.js';
import { assertConfinedWorkTree } from './work-tree-guard.js';
import { isValidBranchName } from './branch-name.js';

/** What these functions need of a workspace: its git, with the remote's credentials. */
export interface WorkspaceGit {
  readonly dir: string;
  git(
    args: readonly string[],
    call?: { readonly okExitCodes?: readonly number[]; readonly signal?: AbortSignal; readonly network?: boolean },
  ): Promise<GitResult>;
  /** Turns a failed result into the product's error, credentials scrubbed. */
  fail(args: readonly string[], result: GitResult): Error;
}

async function assertBranchName(branch: string): Promise<void> {
  if (!(await isValidBranchName(branch))) {
    throw new ValidationError([{ field: 'branch', message: `${JSON.stringify(branch)} is not a valid branch name` }]);
  }
}

async function fetchBranch(ws: WorkspaceGit, branch: string, signal: AbortSignal | undefined): Promise<string> {
  const tracking = `refs/remotes/origin/${branch}`;
  await ws.git(['fetch', '--quiet', '--no-tags', '--filter=blob:none', 'origin', `+refs/heads/${branch}:${tracking}`], {
    network: true,
    ...(signal ? { signal } : {}),
  });
  return tracking;
}

async function treeOf(ws: WorkspaceGit, rev: string): Promise<string> {
  return (await ws.git(['rev-parse', '--verify', `${rev}^{tree}`])).stdout.trim();
}

/**
 * Force-pushes HEAD to `branch` (the pass's own branch, which only this run
 * writes). When the branch already holds the same tree (a rerun of a pass whose
 * request is still open) nothing is pushed: a new head would dismiss reviews.
 */
export async function pushReviewBranch(ws: WorkspaceGit, branch: string, signal?: AbortSignal): Promise<PushResult> {
  await assertBranchName(branch);
  const call = { network: true, ...(signal ? { signal } : {}) };
  const listed = await ws.git(['ls-remote', '--heads', 'origin', `refs/heads/${branch}`], call);
  const existing = listed.stdout.split(/\s/)[0];
  if (existing) {
    const tracking = await fetchBranch(ws, branch, signal);
    if ((await treeOf(ws, tracking)) === (await treeOf(ws, 'HEAD'))) return { sha: existing, attempts: 0 };
  }
  const args = ['push', '--porcelain', '--no-verify', '--force', 'origin', `HEAD:refs/heads/${branch}`];
  const result = await ws.git(args, { ...call, okExitCodes: [0, 1] });
  const rejected = result.stdout.split('\n').filter((line) => line.startsWith('!'));
  if (result.exitCode !== 0 || rejected.length > 0) throw ws.fail(args, { ...result, stderr: `${result.stderr}\n${rejected.join('\n')}` });
  return { sha: (await ws.git(['rev-parse', 'HEAD'])).stdout.trim(), attempts: 1 };
}

/** Fetches `branch` and resets the working copy (and the local branch) onto it. @returns its commit */
export async function syncToRemoteBranch(ws: WorkspaceGit, branch: string, signal?: AbortSignal): Promise<string> {
  await assertBranchName(branch);
  const tracking = await fetchBranch(ws, branch, signal);
  await ws.git(['reset', '--quiet', '--hard', tracking], { network: true, ...(signal ? { signal } : {}) });
  // The merged branch is the remote's content: check it as a fresh clone.
  await assertConfinedWorkTree(ws.dir);
  return (await ws.git(['rev-parse', 'HEAD'])).stdout.trim();
}
