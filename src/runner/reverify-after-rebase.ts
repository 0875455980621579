/**
 * When a push lost a race, the run rebased its commit onto what others pushed.
 * The verify gate passed for the tree before the rebase; the push's
 * `afterRebase` verifies the rebased tree again when the rule in
 * model/rebase-needs-reverify.ts says what verify reads has changed.
 */
import type { Logger } from '../logger.js';
import { rebaseNeedsReverify } from '../model/rebase-needs-reverify.js';

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
