/**
 * The steps of a scaffold run, in order, numbered from 1 as in the design:
 * the one table every party reads. The runner runs them in this order (its
 * functions and skip rules are keyed by these names, in `runner/run-scaffold.ts`)
 * and logs each as `step`/`step_name` on its JSON events; the service, the
 * steps view and the dashboard derive the count, the names and the titles from
 * here, so adding a step is a row here and its function in the runner.
 */

/** One step: its event name and what a person is shown. */
export interface ScaffoldStep {
  readonly name: string;
  readonly title: string;
}

/** Every step, in the order the runner runs them. */
export const SCAFFOLD_STEPS = [
  { name: 'clone', title: 'Clone the repository' },
  { name: 'render-infrastructure', title: 'Render the infrastructure layer' },
  { name: 'push-infrastructure', title: 'Commit and push infrastructure' },
  { name: 'wait-for-sealing-controller', title: 'Wait for the Sealed Secrets controller' },
  { name: 'fetch-sealing-certificate', title: 'Fetch the sealing certificate' },
  { name: 'render-all', title: 'Render every layer, sealed' },
  { name: 'push-all', title: 'Commit and push everything' },
] as const satisfies readonly ScaffoldStep[];

/** A step's event name. */
export type StepName = (typeof SCAFFOLD_STEPS)[number]['name'];

/** How many steps a run has. */
export const STEP_COUNT: number = SCAFFOLD_STEPS.length;

/** A step's number, 1 to {@link STEP_COUNT}. */
export type StepNumber = number;

/** Each step's number and the name its log events carry. */
export const STEPS: Readonly<Record<number, StepName>> = Object.freeze(Object.fromEntries(SCAFFOLD_STEPS.map((step, index) => [index + 1, step.name])));

/** The number of the step called `name`. */
export function stepNumberOf(name: StepName): StepNumber {
  return SCAFFOLD_STEPS.findIndex((step) => step.name === name) + 1;
}

/** Whether `value` is the number of a step. */
export function isStepNumber(value: unknown): value is StepNumber {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= STEP_COUNT;
}
