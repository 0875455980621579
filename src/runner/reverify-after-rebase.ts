/**
 * When a push lost a race, the run rebased its commit onto what others pushed.
 * The verify gate passed for the tree before the rebase; this says whether the
 * rebased tree needs verifying again.
 *
 * A run's working copy is sparse: its own cluster, the reference environment
 * and the platform's shared roots (base/, layer paths, scaffold.yaml). Verify
 * reads nothing else, so a rebase that only brought commits to other clusters'
 * directories leaves everything verify reads byte-identical, and its verdict
 * stands. Anything else (a shared input, the reference, this cluster, a file
 * directly under clusters/, or an unknown change set) is verified again.
 */

/** True unless every changed path lies inside another cluster's own directory. */
export function rebaseNeedsReverify(changedPaths: readonly string[], cluster: string, reference: string): boolean {
  return changedPaths.some((path) => {
    const match = /^clusters\/([^/]+)\/./.exec(path);
    return match === null || match[1] === cluster || match[1] === reference;
  });
}
