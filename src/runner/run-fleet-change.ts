/**
 * One upgrade run or removal run: the steps of `UPGRADE_STEPS` /
 * `REMOVE_STEPS` (`model/run-step-tables.ts`), one commit of pass `upgrade` or
 * `remove`, delivered like a scaffold pass (pushed through the landing queue,
 * or through a pull/merge request on `scaffold/<cluster>/<pass>`).
 *
 * A removal that deletes the data lands two commits, and the order is the
 * cluster's, not git's: Flux reconciles only the newest revision, and prune
 * reads the `prune: disabled` mark on the in-cluster object. So the lift commit
 * lands first, the run waits until the cluster's Flux reports it applied, and
 * only then does the removal commit land; had both landed together, Flux would
 * never apply the lift and the marked objects (the data) would stay.
 *
 * Like a scaffold, every step is safe to repeat: a rerun after a crash clones
 * what the remote has; an upgrade that already landed renders the same bytes
 * and commits nothing, a removal that already landed finds nothing left.
 */
import { ValidationError } from '../errors.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { passOfAction, type FleetAction, type RunPass } from '../model/run-action.js';
import { REMOVE_STEPS, UPGRADE_STEPS, type RemoveStepName, type UpgradeStepName } from '../model/run-step-tables.js';
import type { RunCommit, RunResult } from '../run/run-record.js';
import { batchIssues } from '../run/batch-issues.js';
import type { WorkTreeVerify } from '../workspace/verify-work-tree.js';
import { liftChange, removalChange, upgradeChange, type FleetChange } from './fleet-change.js';
import type { FluxReadiness } from './flux-readiness.js';
import { waitForFluxApplied } from './wait-for-flux-ready.js';
import { runInFrame, type RunFrameDeps, type RunFrameOptions, type RunPlan, type RunFrame } from './run-frame.js';
import { UpgradeBatch } from './upgrade-batch.js';
import { assertRunId } from './run-git.js';
import type { StepWork } from './step-runner.js';

/** Collaborators of a fleet run. */
export interface FleetChangeDeps extends RunFrameDeps {
  /** The cluster's Flux, read through its API server: needed by a removal that deletes the data. */
  readonly readiness?: FluxReadiness;
  /** Whether a later commit contains another (a later push that Flux applies instead counts). */
  readonly contains?: (commit: string, other: string) => Promise<boolean>;
}

/** Which cluster to upgrade or remove, and where. */
export interface FleetChangeOptions extends RunFrameOptions {
  readonly action: FleetAction;
  /** The cluster, by name: an upgrade renders its recorded identity, a removal needs no more. */
  readonly cluster: { readonly name: string };
  readonly generatorVersion: string;
  /**
   * A removal only: delete the data too. The lift commit lands first, and the
   * removal waits up to `timeoutMs` for the cluster's Flux to apply it (needs `deps.readiness`).
   */
  readonly deleteData?: { readonly timeoutMs: number };
  /**
   * An upgrade only: the further clusters to upgrade after `cluster`, in one
   * clone, each verified and committed on its own, all landed in one push (`upgrade-batch.ts`).
   */
  readonly batch?: readonly string[];
}

/**
 * Runs the action's steps: clone, change (render again or remove), commit and deliver.
 * @returns the succeeded result, with the commit (none when there was nothing to do) and the file counts
 * @throws StepError carrying the failed step, the original error and the commits pushed before it
 */
export async function runFleetChange(deps: FleetChangeDeps, options: FleetChangeOptions): Promise<RunResult> {
  assertRunId(options.id);
  const named = clusterNameSchema.safeParse(options.cluster.name);
  if (!named.success) throw new ValidationError([{ field: 'cluster', message: named.error.issues[0]?.message ?? 'is not a cluster name' }]);
  const { action, signal, deleteData } = options;
  if (deleteData !== undefined && action !== 'remove') throw new ValidationError([{ field: 'delete-data', message: 'only a removal deletes data' }]);
  if (deleteData !== undefined && deps.readiness === undefined) {
    throw new ValidationError([
      {
        field: 'kubeconfig',
        message:
          "deleting the data needs the cluster's kubeconfig: the removal may land only once the cluster's Flux has applied the lifting of the prune protection",
      },
    ]);
  }
  const batch = options.batch ?? [];
  if (batch.length > 0) {
    if (action !== 'upgrade') throw new ValidationError([{ field: 'batch', message: 'only an upgrade run upgrades a batch of clusters' }]);
    const issues = batchIssues(named.data, batch);
    if (issues.length > 0) throw new ValidationError(issues);
  }
  const pass = passOfAction(action);

  return runInFrame<string>(action, deps, options, (frame) => {
    const { cluster, gitopsPath, reference, log, now } = frame;
    let change: FleetChange | undefined;
    // upgradeWorkTree's shape of the gate (it restores the tree itself on findings).
    const gate: WorkTreeVerify | undefined = deps.verify ? gateOf(frame, cluster) : undefined;

    const plan = (work: typeof upgradeChange) => async () => {
      change = await work({ workspace: frame.workspace(), cluster, reference, generatorVersion: options.generatorVersion, ...(gate ? { verify: gate } : {}) });
      const { added, modified, removed, credentialsKept, kept } = change.changes;
      // Counts and names only: a credential's value never reaches the log.
      log.info(
        {
          event: 'file_change',
          pass,
          added,
          modified,
          removed,
          ...(credentialsKept !== undefined ? { credentials_kept: credentialsKept } : {}),
          ...(kept !== undefined ? { kept: kept.length } : {}),
        },
        change.nothing ??
          `${gitopsPath}: ${added} file(s) added, ${modified} modified, ${removed} removed${credentialsKept !== undefined ? `; ${credentialsKept} sealed credential(s) kept` : ''}${kept !== undefined ? `; ${kept.length} kept` : ''}`,
      );
    };
    // A removal renders nothing to verify again; an upgrade's tree is verified again over changed inputs.
    const land = (landing: FleetChange, as: RunPass) => frame.land(as, { ...landing, reverifyAfterRebase: action === 'upgrade' });
    const push: StepWork = {
      skip: () => change?.nothing,
      message: () => `committing and pushing the ${action === 'upgrade' ? 'upgrade' : 'removal'} of ${gitopsPath}`,
      run: () => land(change!, pass),
    };
    const result = () => {
      if (change?.landed !== undefined) frame.commits.push({ pass, sha: change.landed });
      return { message: resultMessage({ action, gitopsPath, commits: frame.commits, change, lift }), ...(change ? { changes: change.changes } : {}) };
    };

    // Deleting the data: the lift lands and Flux applies it before the removal may land (see the top of this file).
    let lift: FleetChange | undefined;
    /** The lift commit Flux must apply: landed by this run, or by an earlier attempt of it. */
    let liftCommit: string | undefined;
    const liftTimeoutMs = deleteData?.timeoutMs ?? 0;

    if (action === 'upgrade' && batch.length > 0) {
      const upgrades = new UpgradeBatch({
        frame,
        clusters: [cluster, ...batch],
        generatorVersion: options.generatorVersion,
        ...(deps.verify ? { gateFor: (name: string) => gateOf(frame, name) } : {}),
        ...(signal ? { signal } : {}),
      });
      const work: Record<UpgradeStepName, StepWork> = {
        clone: frame.clone,
        'render-upgrade': {
          message: () =>
            `rendering ${batch.length + 1} clusters again from ${reference} one after another, each verified and committed on its own, then landed in one push`,
          run: () => upgrades.upgradeEach(),
        },
        'push-upgrade': {
          message: () => 'every cluster of the batch verified, committed and landed; reading their outcomes',
          run: async () => upgrades.finish(),
        },
      };
      return {
        steps: UPGRADE_STEPS,
        work,
        result: () => ({ ...upgrades.summary(), batch: upgrades.statuses() }),
        batch: () => upgrades.statuses(),
      } satisfies RunPlan<UpgradeStepName>;
    }
    if (action === 'upgrade') {
      const work: Record<UpgradeStepName, StepWork> = {
        clone: frame.clone,
        'render-upgrade': { message: () => `rendering ${gitopsPath} again from ${reference}, sealed credentials kept`, run: plan(upgradeChange) },
        'push-upgrade': push,
      };
      return { steps: UPGRADE_STEPS, work, result } satisfies RunPlan<UpgradeStepName>;
    }
    const work: Record<RemoveStepName, StepWork> = {
      clone: frame.clone,
      'lift-protection': {
        skip: () => (deleteData === undefined ? 'the data stays: objects marked prune: disabled survive the removal (delete_data not asked for)' : undefined),
        message: () => `lifting the prune protection of ${gitopsPath}'s data in a commit of its own`,
        run: async () => {
          lift = await liftChange({ workspace: frame.workspace(), cluster, reference, generatorVersion: options.generatorVersion });
          log.info(
            { event: 'lift_protection', objects: lift.keeps ?? [], files: lift.paths.length },
            lift.nothing ?? `unmarking ${lift.keeps?.length ?? 0} object(s) in ${lift.paths.join(', ')}: ${lift.keeps?.join(', ') ?? ''}`,
          );
          liftCommit = lift.nothing === undefined ? await land(lift, 'lift-protection') : lift.landed;
          if (lift.nothing !== undefined && lift.landed !== undefined) frame.commits.push({ pass: 'lift-protection', sha: lift.landed });
        },
      },
      'wait-for-lift': {
        skip: () =>
          deleteData === undefined
            ? 'no lift to wait for'
            : liftCommit === undefined
              ? `${lift?.nothing ?? 'nothing was lifted'}: no lift to wait for`
              : undefined,
        message: () =>
          `waiting up to ${Math.round(liftTimeoutMs / 1000)}s for the cluster's Flux to apply ${liftCommit!.slice(0, 12)} before the removal prunes the data`,
        run: () =>
          waitForFluxApplied(
            { readiness: deps.readiness!, logger: log, now },
            { commit: liftCommit!, timeoutMs: liftTimeoutMs, ...(deps.contains ? { contains: deps.contains } : {}), ...(signal ? { signal } : {}) },
          ),
      },
      'remove-files': { message: () => `removing the files the provenance of ${gitopsPath} lists`, run: plan(removalChange) },
      'push-removal': push,
    };
    return { steps: REMOVE_STEPS, work, result } satisfies RunPlan<RemoveStepName>;
  });
}

/** The frame's gate for `cluster` in upgradeWorkTree's shape (it restores the tree itself on findings); logged as every verify is. */
function gateOf(frame: RunFrame, cluster: string): WorkTreeVerify {
  return async (dir) => ({ findings: await frame.inspect(cluster, dir), notes: [], kustomizationsChecked: 0, summary: '' });
}

/**
 * The result's message: which commit did what and, for a removal, what the
 * cluster's Flux deletes once it applies the removal, data included or kept.
 */
function resultMessage(run: {
  action: FleetAction;
  gitopsPath: string;
  commits: readonly RunCommit[];
  change: FleetChange | undefined;
  lift: FleetChange | undefined;
}): string {
  const { action, gitopsPath, commits, change, lift } = run;
  const of = (pass: RunPass) => commits.find((c) => c.pass === pass)?.sha.slice(0, 12);
  if (action === 'upgrade' || lift === undefined) {
    const done =
      change?.nothing ?? `${action === 'upgrade' ? 'upgraded' : 'removed'} ${gitopsPath}: ${commits.map((c) => `${c.pass} ${c.sha.slice(0, 12)}`).join(', ')}`;
    if (action === 'upgrade' || change?.deletes === undefined || change.nothing !== undefined) return done;
    return `${done}; Flux deletes ${change.deletes.length} object(s)${change.keeps !== undefined && change.keeps.length > 0 ? ` and keeps the data, ${change.keeps.length} object(s) marked prune: disabled (${change.keeps.join(', ')})` : ''}`;
  }
  const lifted = of('lift-protection');
  const removed = of('remove');
  const parts = [
    lifted !== undefined ? `lift-protection ${lifted} lifted the prune protection, applied by Flux before the removal` : (lift.nothing ?? 'nothing to lift'),
    removed !== undefined ? `remove ${removed} removed ${gitopsPath}` : (change?.nothing ?? `${gitopsPath} not removed`),
  ];
  if (change?.deletes !== undefined && change.nothing === undefined) {
    parts.push(
      `Flux deletes ${change.deletes.length} object(s), the data included: ${change.deletes.join(', ')}${change.keeps !== undefined && change.keeps.length > 0 ? `; still kept: ${change.keeps.join(', ')}` : ''}`,
    );
  }
  return `removed ${gitopsPath} with its data: ${parts.join('; ')}`;
}
