/**
 * Renders one cluster into a working tree on disk: read the repository, render
 * in memory, and only then write. A render that fails leaves the working tree
 * as it was (nothing half-written).
 */
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { FsRepoReader } from './fs-repo-reader.js';
import { runGit } from './git-process.js';
import { writeTree } from './write-tree.js';
import { renderCluster, type RenderResult } from '../gitops/render-cluster.js';
import type { PreviewFile } from '../run/scaffold-previewer.js';
import { filesBefore, previewFiles } from './preview-files.js';
import type { WorkTreeRender, WorkTreeRenderOptions } from '../run/ports.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

/** What changed on disk. */
export type { WorkTreeChanges } from '../run/ports.js';

/** Inputs of {@link renderWorkTree}: the render options, minus what this edge supplies. */
export type RenderWorkTreeOptions = WorkTreeRenderOptions;

/**
 * The newest commit that touched the platform itself: everything at the top of
 * the repository except `clusters/` (base/, a catalog's shared roots,
 * scaffold.yaml), plus the reference environment. `headTops`: HEAD's top-level
 * names as `git ls-tree --name-only HEAD` prints them, when the caller has them. Other clusters' commits do not
 * count, so the provenance of a cluster is stable while its neighbours come and go.
 */
export async function platformCommitOf(dir: string, reference: string, headTops?: readonly string[]): Promise<string | undefined> {
  // The ceiling keeps git from finding an enclosing repository when `dir` is a plain directory.
  const options = { cwd: dir, okExitCodes: [0, 128], env: { GIT_CEILING_DIRECTORIES: dirname(dir) } };
  let names = headTops;
  if (names === undefined) {
    const tops = await runGit(['ls-tree', '--name-only', 'HEAD'], options);
    if (tops.exitCode !== 0) return undefined;
    names = tops.stdout.split('\n');
  }
  const paths = [...names.filter((t) => t !== '' && t !== 'clusters'), `clusters/${reference}`];
  const result = await runGit(['rev-list', '-1', 'HEAD', '--', ...paths], options);
  const sha = result.exitCode === 0 ? result.stdout.trim() : '';
  return sha === '' ? undefined : sha;
}

/**
 * Renders `clusters/<name>/` into the working tree at `dir`, removing the files
 * an earlier render wrote that the new render no longer has.
 */
export async function renderWorkTree(dir: string, options: RenderWorkTreeOptions): Promise<WorkTreeRender> {
  const result = await renderInMemory(new FsRepoReader(dir), dir, options);
  // Only what an earlier render wrote is removed: flux bootstrap's flux-system/
  // and anyone else's files under the cluster path stay byte for byte.
  const changes = await writeTree(dir, result.tree, { remove: result.stale });
  return { result, changes };
}

/**
 * What {@link renderWorkTree} would change, without writing anything: every
 * file of the render and every one it would remove, with both contents.
 */
export async function previewWorkTree(dir: string, options: RenderWorkTreeOptions): Promise<{ result: RenderResult; files: PreviewFile[] }> {
  const reader = new FsRepoReader(dir);
  // Rendered first: the render validates the cluster name before it becomes a path.
  const result = await renderInMemory(reader, dir, options);
  const before = await filesBefore(reader, result.gitopsPath);
  return { result, files: previewFiles(before, result) };
}

async function renderInMemory(reader: FsRepoReader, dir: string, options: RenderWorkTreeOptions): Promise<RenderResult> {
  const reference = options.reference ?? REFERENCE_ENVIRONMENT;
  const platformCommit = options.platformCommit ?? (await platformCommitOf(dir, reference));
  return renderCluster(reader, {
    ...options,
    reference,
    random: (size) => randomBytes(size),
    ...(platformCommit ? { platformCommit } : {}),
  });
}
