/**
 * Which changes a rebase brought force a verified tree to be verified again.
 * A run's working copy is sparse: its own cluster, the reference environment
 * and the platform's shared roots. Verify reads nothing else, so a rebase that
 * only brought commits to other clusters' directories leaves everything verify
 * read byte-identical, and its verdict stands. Anything else (a shared input,
 * the reference, this cluster, a file directly under clusters/, or an unknown
 * change set) is verified again. One rule for the run's own rebase
 * (runner/reverify-after-rebase.ts) and for the landing queue's carrier
 * (git/landing-queue.ts).
 */
/** True unless every changed path lies inside another cluster's own directory. */
export function rebaseNeedsReverify(changedPaths: readonly string[], cluster: string, reference: string): boolean {
  return changedPaths.some((path) => {
    const match = /^clusters\/([^/]+)\/./.exec(path);
    return match === null || match[1] === cluster || match[1] === reference;
  });
}
