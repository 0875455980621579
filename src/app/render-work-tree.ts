/**
 * Renders one cluster into a working tree on disk: read the repository, render
 * in memory, and only then write. A render that fails leaves the working tree
 * as it was (nothing half-written).
 */
import { randomBytes } from 'node:crypto';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { runGit } from '../git/git-process.js';
import { writeTree } from '../git/write-tree.js';
import { PLATFORM_DESCRIPTOR_PATH } from '../gitops/platform-descriptor.js';
import { renderCluster, type RenderOptions, type RenderResult } from '../gitops/render-cluster.js';

/** What changed on disk. */
export interface WorkTreeChanges {
  readonly written: readonly string[];
  readonly removed: readonly string[];
  readonly unchanged: readonly string[];
}

/** Inputs of {@link renderWorkTree}: the render options, minus what this edge supplies. */
export type RenderWorkTreeOptions = Omit<RenderOptions, 'random' | 'platformCommit'> & {
  /** Override the platform commit (otherwise read from git when `dir` is a repository). */
  readonly platformCommit?: string;
};

/**
 * The newest commit that touched the platform itself (base/, the reference
 * environment, scaffold.yaml). Other clusters' commits do not count, so the
 * provenance of a cluster is stable while its neighbours come and go.
 */
export async function platformCommitOf(dir: string, reference: string): Promise<string | undefined> {
  const result = await runGit(['log', '-1', '--format=%H', '--', 'base', `clusters/${reference}`, PLATFORM_DESCRIPTOR_PATH], {
    cwd: dir,
    okExitCodes: [0, 128],
  });
  const sha = result.exitCode === 0 ? result.stdout.trim() : '';
  return sha === '' ? undefined : sha;
}

/**
 * Renders `clusters/<name>/` into the working tree at `dir`, removing files the
 * new render no longer has.
 */
export async function renderWorkTree(dir: string, options: RenderWorkTreeOptions): Promise<{ result: RenderResult; changes: WorkTreeChanges }> {
  const reference = options.reference ?? 'development';
  const platformCommit = options.platformCommit ?? (await platformCommitOf(dir, reference));
  const result = await renderCluster(new FsRepoReader(dir), {
    ...options,
    reference,
    random: (size) => randomBytes(size),
    ...(platformCommit ? { platformCommit } : {}),
  });
  const changes = await writeTree(dir, result.tree, { removeBelow: [result.gitopsPath] });
  return { result, changes };
}
