/**
 * The steps of a run, in order, numbered from 1 as in the design: the one
 * table per action every party reads. The runner runs them in this order (its
 * functions and skip rules are keyed by these names, in `runner/run-scaffold.ts`
 * and `runner/run-fleet-change.ts`) and logs each as `step`/`step_name` on its
 * JSON events; the service, the steps view and the dashboard derive the count,
 * the names and the titles from here, so adding a step is a row here and its
 * function in the runner.
 */

/** One step: its event name and what a person is shown. */
export interface RunStepDefinition {
  readonly name: string;
  readonly title: string;
}

/** Every step of a scaffold, in the order the runner runs them. */
export const SCAFFOLD_STEPS = [
  { name: 'clone', title: 'Clone the repository' },
  { name: 'render-infrastructure', title: 'Render the infrastructure layer' },
  { name: 'push-infrastructure', title: 'Commit and push infrastructure' },
  { name: 'wait-for-sealing-controller', title: 'Wait for the Sealed Secrets controller' },
  { name: 'fetch-sealing-certificate', title: 'Fetch the sealing certificate' },
  { name: 'render-all', title: 'Render every layer, sealed' },
  { name: 'push-all', title: 'Commit and push everything' },
] as const satisfies readonly RunStepDefinition[];

/** An upgrade: the cluster rendered again from the current reference, sealed credentials kept, verified. */
export const UPGRADE_STEPS = [
  { name: 'clone', title: 'Clone the repository' },
  { name: 'render-upgrade', title: 'Render again from the reference, credentials kept' },
  { name: 'push-upgrade', title: 'Commit and push the upgrade' },
] as const satisfies readonly RunStepDefinition[];

/**
 * A removal: the files the cluster's provenance lists, deleted in one commit.
 * Deleting the data too first lands a commit lifting the prune protection and
 * waits until the cluster's Flux has applied it (steps 2-3, skipped otherwise):
 * Flux reconciles only the newest revision and prune reads the mark on the
 * in-cluster object, so a removal landing before the lift is applied keeps the data.
 */
export const REMOVE_STEPS = [
  { name: 'clone', title: 'Clone the repository' },
  { name: 'lift-protection', title: "Commit and push the lifting of the data's prune protection" },
  { name: 'wait-for-lift', title: 'Wait for Flux to apply the lift' },
  { name: 'remove-files', title: "Remove the generator's files" },
  { name: 'push-removal', title: 'Commit and push the removal' },
] as const satisfies readonly RunStepDefinition[];

/** A scaffold step's event name. */
export type StepName = (typeof SCAFFOLD_STEPS)[number]['name'];
/** An upgrade step's event name. */
export type UpgradeStepName = (typeof UPGRADE_STEPS)[number]['name'];
/** A removal step's event name. */
export type RemoveStepName = (typeof REMOVE_STEPS)[number]['name'];

/** How many steps a scaffold has. */
export const STEP_COUNT: number = SCAFFOLD_STEPS.length;

/** A step's number, 1 to the length of its action's table. */
export type StepNumber = number;

/** Each scaffold step's number and the name its log events carry. */
export const STEPS: Readonly<Record<number, StepName>> = Object.freeze(Object.fromEntries(SCAFFOLD_STEPS.map((step, index) => [index + 1, step.name])));

/** The number of the scaffold step called `name`. */
export function stepNumberOf(name: StepName): StepNumber {
  return SCAFFOLD_STEPS.findIndex((step) => step.name === name) + 1;
}
