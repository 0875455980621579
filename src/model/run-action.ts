/**
 * What a run does to its cluster's directory, each action defined once. A
 * scaffold renders it in two passes; an upgrade renders it again from the
 * current reference with its recorded identity, every sealed credential kept
 * (`generate-gitops-env upgrade` for one cluster); a removal deletes the files
 * the generator wrote (`generate-gitops-env remove`). All three are runs:
 * listed, logged, cancelled and retried alike, each as one runner process (a
 * Kubernetes Job). (A credential rotation is a scaffold run with rotation
 * options, not an action of its own.)
 *
 * `RUN_ACTION_DEFINITIONS` is the registry: per action its step table, the
 * passes it commits, the inputs it takes, what its result reports and what
 * the dashboard calls it. The names (`RUN_ACTIONS`, the API's and the runner's
 * enum), the passes (`RUN_PASSES`) and every place that treats actions
 * differently read it. Pure: the dashboard imports it.
 */
import { REMOVE_STEPS, SCAFFOLD_STEPS, type RunStepDefinition, UPGRADE_STEPS } from './run-step-tables.js';

/** One run action. */
export interface RunActionDefinition {
  /** What it does, as the API's `action` field and the runner's `--action` describe it. */
  readonly summary: string;
  /** Its steps, in order (`model/run-step-tables.ts`). */
  readonly steps: readonly RunStepDefinition[];
  /** The passes it commits, in order: its commits, `Scaffold-Pass` trailers and request branches. */
  readonly passes: readonly string[];
  readonly inputs: {
    /**
     * Whether it takes its caller's secrets (repository credentials, a sealing
     * certificate or kubeconfig, registry credentials), also on a retry;
     * otherwise it runs with the service's own forge credentials and refuses any.
     */
    readonly callerSecrets: boolean;
  };
  /** Whether it seals credentials: its sealing is `certificate` or `kubeconfig`, otherwise `none`. */
  readonly seals: boolean;
  readonly result: {
    /** Whether it reports the files its one commit added, modified and removed (`changes`). */
    readonly changes: boolean;
    /** Whether it only deletes files (its changes are said as "N removed"). */
    readonly onlyRemoves: boolean;
  };
  /** Whether the cluster keeps a tree to draw after it. */
  readonly leavesTree: boolean;
  /** The title of the pull/merge request that delivers one of its passes (`reference`: what it was rendered from). */
  readonly requestTitle: (pass: string, cluster: string, reference: string) => string;
  /** What the dashboard says about it. */
  readonly dashboard: {
    /** The action as a noun: scaffold, upgrade, removal. */
    readonly noun: string;
    /** Its badge's mark (the noun is always shown beside it). */
    readonly icon: string;
    /** The summary's sealing line when it seals nothing. */
    readonly sealingNone: string;
    /** What its changes say when its commit changed nothing. */
    readonly noChanges: string;
    /**
     * A fleet action started from a cluster's page: what the confirm step says it
     * will do, `how` its commit reaches the branch. Absent: that its one commit
     * touches only the cluster's directory.
     */
    readonly confirm?: (cluster: string, how: string) => string;
  };
}

export const RUN_ACTION_DEFINITIONS = {
  scaffold: {
    summary: 'the two-pass render',
    steps: SCAFFOLD_STEPS,
    passes: ['infrastructure', 'all'],
    inputs: { callerSecrets: true },
    seals: true,
    result: { changes: false, onlyRemoves: false },
    leavesTree: true,
    requestTitle: (pass, cluster) =>
      pass === 'infrastructure'
        ? `Scaffold ${cluster}: infrastructure layer (pass 1 of 2)`
        : `Scaffold ${cluster}: all layers, credentials sealed (pass 2 of 2)`,
    dashboard: { noun: 'scaffold', icon: '+', sealingNone: 'none: a scaffold seals nothing', noChanges: 'nothing changed' },
  },
  upgrade: {
    summary: 'rendered again from the current reference, credentials kept',
    steps: UPGRADE_STEPS,
    passes: ['upgrade'],
    inputs: { callerSecrets: false },
    seals: false,
    result: { changes: true, onlyRemoves: false },
    leavesTree: true,
    requestTitle: (_pass, cluster, reference) => `Upgrade ${cluster} from the reference ${reference}`,
    dashboard: {
      noun: 'upgrade',
      icon: '↑',
      sealingNone: 'none: an upgrade keeps every sealed credential as it is',
      noChanges: 'nothing changed: already up to date',
    },
  },
  remove: {
    summary: "the generator's files deleted",
    steps: REMOVE_STEPS,
    // Its pass is `remove` (passOfAction); deleting the data first lands a `lift-protection` commit.
    passes: ['remove', 'lift-protection'],
    inputs: { callerSecrets: false },
    seals: false,
    result: { changes: true, onlyRemoves: true },
    // A removal leaves no tree to draw.
    leavesTree: false,
    // The lift is always pushed, never requested (runner/run-git.ts): only the removal has a title.
    requestTitle: (_pass, cluster) => `Remove ${cluster}: the generator's files`,
    dashboard: {
      noun: 'removal',
      icon: '−',
      sealingNone: 'none: a removal seals nothing',
      noChanges: 'nothing removed',
      confirm: (cluster, how) =>
        `This starts a removal run: one commit that deletes the files the generator wrote under clusters/${cluster}/, ${how}, followed on the run's page. ` +
        'Flux on the cluster then prunes what they deployed. Type the cluster name to confirm.',
    },
  },
} as const satisfies Record<string, RunActionDefinition>;

export type RunAction = keyof typeof RUN_ACTION_DEFINITIONS;

/** The actions, in the registry's order (a tuple, as zod's enum wants one). */
export const RUN_ACTIONS = Object.keys(RUN_ACTION_DEFINITIONS) as unknown as readonly [RunAction, ...RunAction[]];

export function isRunAction(value: unknown): value is RunAction {
  return typeof value === 'string' && Object.hasOwn(RUN_ACTION_DEFINITIONS, value);
}

/** `action`'s definition. */
export function runActionOf(action: RunAction): RunActionDefinition {
  return RUN_ACTION_DEFINITIONS[action];
}

/** Each action and what it does, one sentence: `scaffold: the two-pass render; upgrade: …`. */
export function runActionsDescribed(): string {
  return RUN_ACTIONS.map((action) => `${action}: ${RUN_ACTION_DEFINITIONS[action].summary}`).join('; ');
}

/**
 * The commits a run lands, by what they hold: a scaffold's two passes
 * (`infrastructure`, then `all`), an upgrade's one commit, a removal's one
 * (`remove`), preceded by `lift-protection` when it deletes the data too.
 * The `Scaffold-Pass` trailer, the landing queue's refs, a pull request's
 * branch (`scaffold/<cluster>/<pass>`) and the run's `commits` all use it.
 */
export type RunPass = (typeof RUN_ACTION_DEFINITIONS)[RunAction]['passes'][number];
export const RUN_PASSES = RUN_ACTIONS.flatMap((action) => RUN_ACTION_DEFINITIONS[action].passes) as unknown as readonly [RunPass, ...RunPass[]];

export function isRunPass(value: unknown): value is RunPass {
  return typeof value === 'string' && (RUN_PASSES as readonly string[]).includes(value);
}

/** The action whose run commits `pass`. */
export function actionOfPass(pass: RunPass): RunAction {
  return RUN_ACTIONS.find((action) => (RUN_ACTION_DEFINITIONS[action].passes as readonly string[]).includes(pass))!;
}

/** What a fleet run does to a generated cluster: everything but a scaffold. */
export type FleetAction = Exclude<RunAction, 'scaffold'>;

/** The one pass a fleet run (upgrade, remove) commits. */
export function passOfAction(action: FleetAction): RunPass {
  return RUN_ACTION_DEFINITIONS[action].passes[0];
}

/** The step table of a run that does `action` (absent: a scaffold). */
export function stepsOf(action: RunAction = 'scaffold'): readonly RunStepDefinition[] {
  return RUN_ACTION_DEFINITIONS[action].steps;
}

/** The most steps any action has: a step number is at most this. */
const MAX_STEP_COUNT = Math.max(...RUN_ACTIONS.map((action) => RUN_ACTION_DEFINITIONS[action].steps.length));

/** Whether `value` is the number of a step of some action (an event's `step`). */
export function isStepNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_STEP_COUNT;
}
