/**
 * ClusterHistory on native git: what a cluster path held in the commit before
 * the state being verified, read from the object store (`git ls-tree`), so it
 * works in the runner's partial, sparse clone without fetching a blob.
 */
import { dirname } from 'node:path';
import { assertRepoPath } from '../gitops/file-tree.js';
import type { ClusterHistory, ClusterSnapshot } from '../verify/cluster-history.js';
import { runGit } from './git-process.js';

/** Reads the history of the working copy at `dir` (an absolute directory). */
export class GitClusterHistory implements ClusterHistory {
  constructor(private readonly dir: string) {}

  async previous(clusterDir: string): Promise<ClusterSnapshot | undefined> {
    assertRepoPath(clusterDir, 'clusterDir');
    // The ceiling keeps git from using an enclosing repository when `dir` is a plain directory.
    const options = { cwd: this.dir, env: { GIT_CEILING_DIRECTORIES: dirname(this.dir) }, okExitCodes: [0, 1, 128] };
    // Changes below the cluster path: the verified state is the working tree, about
    // to be committed on HEAD. None: it is HEAD itself, and the one before is HEAD^.
    // Porcelain v2 with --branch also names HEAD's commit (`# branch.oid`), so the usual case asks git once less.
    const status = await runGit(['status', '--porcelain=v2', '--branch', '--no-ahead-behind', '--untracked-files=all', '-z', '--', `${clusterDir}/`], options);
    if (status.exitCode !== 0) return undefined;
    const records = status.stdout.split('\0').filter((record) => record !== '');
    const changed = records.some((record) => !record.startsWith('# '));
    const headOid = records.find((record) => record.startsWith('# branch.oid '))?.slice('# branch.oid '.length);
    let commit = changed ? (headOid ?? '') : '';
    if (!changed) {
      const rev = await runGit(['rev-parse', '--verify', '--quiet', 'HEAD^^{commit}'], options);
      commit = rev.exitCode === 0 ? rev.stdout.trim() : '';
    }
    if (!/^[0-9a-f]{40,64}$/.test(commit)) return undefined;
    const tree = await runGit(['ls-tree', '-r', '--name-only', '-z', commit, '--', `${clusterDir}/`], options);
    if (tree.exitCode !== 0) return undefined;
    return {
      commit,
      files: tree.stdout
        .split('\0')
        .filter((f) => f !== '')
        .sort(),
    };
  }
}
