/**
 * What the dashboard says about what a run does (`action`: a scaffold, an
 * upgrade, a removal) and, for an upgrade or a removal, what its one commit
 * changed, and what a removal from the cluster page will delete, in the
 * words of the action's definition (`src/model/run-action.ts`). Pure and free
 * of the browser, so it is tested under Node.
 */
import { type RunAction, runActionOf } from '../../src/model/run-action.js';
import type { RemovalPreview, Run, RunChangesView } from './run-types.js';

/** The action as a noun: scaffold, upgrade, removal. */
export function actionName(action: RunAction): string {
  return runActionOf(action).dashboard.noun;
}

/**
 * What the dashboard shows a run as: its action, or `rotate` for a scaffold
 * run started to rotate credentials (`rotation` set), which is a scaffold by
 * every other measure (its steps, its passes, its retry).
 */
export type ShownAction = RunAction | 'rotate';

/** A rotation's badge, beside the actions' own (`dashboard` of each definition). */
const ROTATION_SHOWN = { noun: 'rotation', icon: '⟳' } as const;

export function shownActionOf(run: { readonly action: RunAction; readonly rotation?: Run['rotation'] | undefined }): ShownAction {
  return run.action === 'scaffold' && run.rotation != null ? 'rotate' : run.action;
}

/** The shown action's noun and badge mark: "rotation", "⟳". */
export function shownActionLabel(shown: ShownAction): { readonly noun: string; readonly icon: string } {
  return shown === 'rotate' ? ROTATION_SHOWN : runActionOf(shown).dashboard;
}

/** The run page's title: "Upgrade of eu-prod-1", "Rotation of eu-prod-1". */
export function runHeading(run: {
  readonly action: RunAction;
  readonly rotation?: Run['rotation'] | undefined;
  readonly cluster: { readonly name: string };
}): string {
  const name = shownActionLabel(shownActionOf(run)).noun;
  return `${name.charAt(0).toUpperCase()}${name.slice(1)} of ${run.cluster.name}`;
}

/** How the run gets its sealing certificate, as the summary says it. */
export function sealingShown(run: Pick<Run, 'action' | 'sealing'>): string {
  if (run.sealing === 'certificate') return 'certificate from the request (steps 4–5 skipped)';
  if (run.sealing === 'kubeconfig') return "fetched from the cluster's controller";
  return runActionOf(run.action).dashboard.sealingNone;
}

/** An upgrade's or a removal's changes as the run page lists them. */
export interface ShownChanges {
  /** Each count, in the order added, modified, removed (empty until they are known). */
  readonly files: readonly (readonly ['added' | 'modified' | 'removed', number])[];
  /** One line: "1 added, 4 modified, 0 removed", or why there is none. */
  readonly summary: string;
  /** An upgrade: "3 sealed credentials kept byte for byte". */
  readonly credentialsKept?: string;
  /** A removal: the files of the cluster's directory it left in place. */
  readonly kept: readonly string[];
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What the run's commit changed; undefined for a scaffold (its commits are its passes). */
export function shownChanges(run: Pick<Run, 'action' | 'status' | 'changes'>): ShownChanges | undefined {
  const action = runActionOf(run.action);
  if (!action.result.changes) return undefined;
  const changes: RunChangesView | null = run.changes;
  if (changes === null) {
    const active = run.status === 'pending' || run.status === 'running';
    return { files: [], summary: active ? 'known once the run ends' : 'none: the run ended without a commit', kept: [] };
  }
  const files = [
    ['added', changes.added],
    ['modified', changes.modified],
    ['removed', changes.removed],
  ] as const;
  const total = changes.added + changes.modified + changes.removed;
  // A removal only deletes: its line says so without two zeros.
  const summary =
    total === 0
      ? action.dashboard.noChanges
      : action.result.onlyRemoves && changes.added + changes.modified === 0
        ? `${changes.removed} removed`
        : files.map(([change, n]) => `${n} ${change}`).join(', ');
  return {
    files,
    summary,
    ...(changes.credentials_kept === undefined ? {} : { credentialsKept: `${plural(changes.credentials_kept, 'sealed credential')} kept byte for byte` }),
    kept: changes.kept ?? [],
  };
}

/** What the removal confirmation lists before anything is done, from the removal's dry run. */
export interface RemovalShown {
  /** "Deletes 42 files the generator wrote under clusters/eu-prod-1/:" */
  readonly summary: string;
  readonly removed: readonly string[];
  readonly kept: readonly string[];
  readonly fluxBootstrap?: string;
}

export function removalShown(preview: RemovalPreview): RemovalShown {
  return {
    summary: `Deletes ${plural(preview.removed.length, 'file')} the generator wrote under clusters/${preview.cluster}/:`,
    removed: preview.removed,
    kept: preview.kept,
    ...(preview.flux_bootstrap
      ? { fluxBootstrap: 'The flux-system/ written by flux bootstrap is kept: remove it with Flux (flux uninstall) once the cluster is gone.' }
      : {}),
  };
}
