/**
 * What a rebase onto concurrent pushes brought in: the paths that differ
 * between the remote-tracking commit before the fetch and after it. Only trees
 * are compared (`--name-only`), so a partial clone fetches no blobs for it.
 */
import type { GitResult } from './git-process.js';

/** The slice of a working copy this needs. */
export interface RevisionReader {
  git(args: readonly string[], call?: { readonly okExitCodes?: readonly number[] }): Promise<GitResult>;
}

/** The commit `ref` points at, or undefined when it does not exist (an orphan branch before its first push). */
export async function resolveRef(repo: RevisionReader, ref: string): Promise<string | undefined> {
  const result = await repo.git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { okExitCodes: [0, 1] });
  const sha = result.stdout.trim();
  return result.exitCode === 0 && sha !== '' ? sha : undefined;
}

/** Paths changed from `before` to `after`; `['.']` (everything) when there is no `before` to compare with. */
export async function changedPaths(repo: RevisionReader, before: string | undefined, after: string | undefined): Promise<readonly string[]> {
  if (before === undefined || after === undefined) return ['.'];
  if (before === after) return [];
  const diff = await repo.git(['diff', '--name-only', '--no-renames', '-z', before, after, '--']);
  return diff.stdout.split('\0').filter(Boolean);
}
