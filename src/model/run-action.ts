/**
 * What a run does to its cluster's directory. A scaffold renders it in two
 * passes; an upgrade renders it again from the current reference with its
 * recorded identity, every sealed credential kept (`generate-gitops-env
 * upgrade` for one cluster); a removal deletes the files the generator wrote
 * (`generate-gitops-env remove`). All three are runs: listed, logged,
 * cancelled and retried alike, each as one runner process (a Kubernetes Job).
 */

export const RUN_ACTIONS = ['scaffold', 'upgrade', 'remove'] as const;
export type RunAction = (typeof RUN_ACTIONS)[number];

export function isRunAction(value: unknown): value is RunAction {
  return typeof value === 'string' && (RUN_ACTIONS as readonly string[]).includes(value);
}

/**
 * The commits a run lands, by what they hold: a scaffold's two passes
 * (`infrastructure`, then `all`), an upgrade's one commit, a removal's one
 * (`remove`), preceded by `lift-protection` when it deletes the data too.
 * The `Scaffold-Pass` trailer, the landing queue's refs, a pull request's
 * branch (`scaffold/<cluster>/<pass>`) and the run's `commits` all use it.
 */
export const RUN_PASSES = ['infrastructure', 'all', 'upgrade', 'remove', 'lift-protection'] as const;
export type RunPass = (typeof RUN_PASSES)[number];

export function isRunPass(value: unknown): value is RunPass {
  return typeof value === 'string' && (RUN_PASSES as readonly string[]).includes(value);
}

/** What a fleet run does to a generated cluster: everything but a scaffold. */
export type FleetAction = Exclude<RunAction, 'scaffold'>;

/** The one pass a fleet run (upgrade, remove) commits. */
export function passOfAction(action: FleetAction): RunPass {
  return action;
}
