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
import type { Logger } from '../logger.js';

/** True unless every changed path lies inside another cluster's own directory. */
export function rebaseNeedsReverify(changedPaths: readonly string[], cluster: string, reference: string): boolean {
  return changedPaths.some((path) => {
    const match = /^clusters\/([^/]+)\/./.exec(path);
    return match === null || match[1] === cluster || match[1] === reference;
  });
}

/** What {@link afterRebaseCheck} needs: the run's cluster and reference, where to log, and the gate (absent: none). */
export interface AfterRebaseContext {
  readonly cluster: string;
  readonly reference: string;
  readonly log: Logger;
  /** Log field naming what was rebased (a pass). */
  readonly pass: string;
  /** Verifies the working copy again; throws on findings. */
  readonly verify?: () => Promise<void>;
}

/** The `afterRebase` of a push: the gate holds after a rebase too, so a tree whose inputs others changed is verified again before it leaves. */
export function afterRebaseCheck(context: AfterRebaseContext): (changed: readonly string[]) => Promise<void> {
  return async (changed) => {
    const again = context.verify !== undefined && rebaseNeedsReverify(changed, context.cluster, context.reference);
    context.log.info(
      { event: 'reverify', pass: context.pass, changed: changed.length, verified: again },
      again ? 'rebased onto changed shared inputs; verifying again' : 'rebased onto other clusters only; verify result stands',
    );
    if (again) await context.verify!();
  };
}
