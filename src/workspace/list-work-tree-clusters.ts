/** The fleet of a working tree on disk, compared with its current platform commit. */
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { readClusterRegistry, type ClusterEntry } from '../fleet/cluster-registry.js';
import { platformCommitOf } from '../git/render-work-tree.js';

/** Every cluster under `<dir>/clusters/`, and the platform commit they were compared with (undefined outside git). */
export async function listWorkTreeClusters(dir: string, reference: string): Promise<{ clusters: ClusterEntry[]; platformCommit?: string }> {
  const platformCommit = await platformCommitOf(dir, reference);
  const clusters = await readClusterRegistry(new FsRepoReader(dir), { reference, ...(platformCommit !== undefined ? { platformCommit } : {}) });
  return { clusters, ...(platformCommit !== undefined ? { platformCommit } : {}) };
}
