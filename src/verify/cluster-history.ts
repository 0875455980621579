/**
 * The port through which verify sees what a cluster path held before the
 * state being verified. The core never reads Git; `git/git-cluster-history.ts`
 * implements it, and without it the checks that compare with history are skipped.
 */

/** The files of a cluster path at one earlier commit. */
export interface ClusterSnapshot {
  /** The commit, as a full SHA. */
  readonly commit: string;
  /** Repository-relative paths of every file below the cluster path then, sorted. */
  readonly files: readonly string[];
}

/** Read access to a cluster path's history. */
export interface ClusterHistory {
  /**
   * What `clusterDir` held in the commit before the verified state: HEAD when
   * the working tree has changes below it (about to be committed), else HEAD's
   * first parent (the commit being verified is HEAD itself).
   * @returns undefined when there is no such commit (not a repository, a first commit)
   */
  previous(clusterDir: string): Promise<ClusterSnapshot | undefined>;
}
