/**
 * The seven steps of a scaffold run, numbered as in the design. The runner
 * logs them (`step` and `step_name` on its JSON events) and the service folds
 * those events back into a timeline; both read the names from here, so the
 * two cannot drift apart.
 */

/** Each step's number and the name its log events carry. */
export const STEPS = Object.freeze({
  1: 'clone',
  2: 'render-infrastructure',
  3: 'push-infrastructure',
  4: 'wait-for-sealing-controller',
  5: 'fetch-sealing-certificate',
  6: 'render-all',
  7: 'push-all',
} as const);

/** A step's number, 1–7. */
export type StepNumber = keyof typeof STEPS;
