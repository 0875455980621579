/**
 * One upgrade run or removal run: the steps of `UPGRADE_STEPS` /
 * `REMOVE_STEPS` (`model/scaffold-steps.ts`), one commit of pass `upgrade` or
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
import { ValidationError, VerificationError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { PassDelivery } from '../run/delivery.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { passOfAction, type FleetAction, type RunPass } from '../model/run-action.js';
import { REMOVE_STEPS, stepsOf, UPGRADE_STEPS, type RemoveStepName, type UpgradeStepName } from '../model/scaffold-steps.js';
import type { RunCommit, RunResult } from '../run/scaffold-run.js';
import type { WorkTreeVerify } from '../workspace/verify-work-tree.js';
import { liftChange, removalChange, upgradeChange, type FleetChange } from './fleet-change.js';
import type { FluxReadiness } from './flux-readiness.js';
import { waitForFluxApplied } from './wait-for-flux-ready.js';
import type { GitCredentials, GitIdentity, GitRemote, GitWorkspace } from '../run/ports.js';
import { afterRebaseCheck } from './reverify-after-rebase.js';
import { assertRunId, cloneForRun, cloneMessage, DEFAULT_AUTHOR, DEFAULT_PUSH_ATTEMPTS, landPass, finishRun, runScratch } from './run-git.js';
import type { WorkTreeVerifier } from './run-scaffold.js';
import { runSteps, type StepWork } from './step-runner.js';
import { REFERENCE_ENVIRONMENT, DEFAULT_BRANCH } from '../model/defaults.js';

/** Collaborators of a fleet run. */
export interface FleetChangeDeps {
  readonly git: GitRemote;
  /** The pre-push gate of an upgrade; skipped when absent. */
  readonly verify?: WorkTreeVerifier;
  readonly logger: Logger;
  /** How the commit reaches the branch. @default push straight to it */
  readonly delivery?: PassDelivery;
  /** Where working copies go. @default the OS temp dir */
  readonly workRoot?: string;
  readonly now?: () => number;
  /** The cluster's Flux, read through its API server: needed by a removal that deletes the data. */
  readonly readiness?: FluxReadiness;
  /** Whether a later commit contains another (a later push that Flux applies instead counts). */
  readonly contains?: (commit: string, other: string) => Promise<boolean>;
}

/** Which cluster to upgrade or remove, and where. */
export interface FleetChangeOptions {
  readonly id: string;
  readonly action: FleetAction;
  readonly repositoryUrl: string;
  /** @default 'main' */
  readonly branch?: string;
  readonly credentials?: GitCredentials;
  /** The cluster, by name: an upgrade renders its recorded identity, a removal needs no more. */
  readonly cluster: { readonly name: string };
  /** @default 'development' */
  readonly reference?: string;
  readonly generatorVersion: string;
  /** @default gitops-scaffolder <gitops-scaffolder@localhost> */
  readonly author?: GitIdentity;
  /** @default 30 */
  readonly pushAttempts?: number;
  /**
   * A removal only: delete the data too. The lift commit lands first, and the
   * removal waits up to `timeoutMs` for the cluster's Flux to apply it (needs `deps.readiness`).
   */
  readonly deleteData?: { readonly timeoutMs: number };
  readonly signal?: AbortSignal;
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
    throw new ValidationError([{ field: 'kubeconfig', message: "deleting the data needs the cluster's kubeconfig: the removal may land only once the cluster's Flux has applied the lifting of the prune protection" }]);
  }
  const cluster = options.cluster.name;
  const pass = passOfAction(action);
  const now = deps.now ?? Date.now;
  const log = deps.logger.child({ run_id: options.id, cluster, action });
  const branch = options.branch ?? DEFAULT_BRANCH;
  const reference = options.reference ?? REFERENCE_ENVIRONMENT;
  const gitopsPath = `clusters/${cluster}`;
  const commits: RunCommit[] = [];
  let workspace: GitWorkspace | undefined;
  let change: FleetChange | undefined;
  const workRoot = await runScratch(deps.workRoot, action, options.id);

  /** The run's gate over its working copy: throws the findings. */
  const verifyTree = async () => {
    const report = await deps.verify!(workspace!.dir, cluster, signal);
    if (report.findings.length > 0) throw new VerificationError(report.findings);
  };
  // upgradeWorkTree's shape of the same gate (it restores the tree itself on findings).
  const gate: WorkTreeVerify | undefined = deps.verify
    ? async (dir) => ({ findings: (await deps.verify!(dir, cluster, signal)).findings, notes: [], kustomizationsChecked: 0, summary: '' })
    : undefined;

  const clone: StepWork = {
    message: () => cloneMessage({ branch, reference, cluster }),
    run: async () => {
      workspace = await cloneForRun(deps.git, { url: options.repositoryUrl, branch, workRoot, reference, cluster, ...(options.credentials ? { credentials: options.credentials } : {}), ...(signal ? { signal } : {}) });
    },
  };
  const plan = (work: typeof upgradeChange) => async () => {
    change = await work({ workspace: workspace!, cluster, reference, generatorVersion: options.generatorVersion, ...(gate ? { verify: gate } : {}) });
    const { added, modified, removed, credentialsKept, kept } = change.changes;
    // Counts and names only: a credential's value never reaches the log.
    log.info(
      { event: 'file_change', pass, added, modified, removed, ...(credentialsKept !== undefined ? { credentials_kept: credentialsKept } : {}), ...(kept !== undefined ? { kept: kept.length } : {}) },
      change.nothing ?? `${gitopsPath}: ${added} file(s) added, ${modified} modified, ${removed} removed${credentialsKept !== undefined ? `; ${credentialsKept} sealed credential(s) kept` : ''}${kept !== undefined ? `; ${kept.length} kept` : ''}`,
    );
  };
  /** Commits `landing` as `pass` and delivers it. @returns the commit on the branch */
  const land = async (landing: FleetChange, pass: RunPass): Promise<string | undefined> => {
    const landed = await landPass(deps.delivery, {
        commit: {
          paths: landing.paths,
          message: landing.message,
          // Scaffold-Reference: what the upgrade's verify read, so a concurrent run may carry it (git/landing-queue.ts).
          trailers: { 'Scaffold-Id': options.id, 'Scaffold-Pass': pass, 'Scaffold-Cluster': cluster, 'Scaffold-Reference': reference, 'Scaffold-Action': action },
          author: options.author ?? DEFAULT_AUTHOR,
        },
        landedBefore: () => workspace!.passCommit(cluster, pass),
        workspace: workspace!,
        runId: options.id,
        cluster: options.cluster,
        pass,
        reference,
        branch,
        summary: landing.summary,
        maxAttempts: options.pushAttempts ?? DEFAULT_PUSH_ATTEMPTS,
        // A removal renders nothing to verify again; an upgrade's tree is verified again over changed inputs.
        ...(action === 'upgrade' ? { afterRebase: afterRebaseCheck({ cluster, reference, log, pass, ...(deps.verify ? { verify: verifyTree } : {}) }) } : {}),
        ...(signal ? { signal } : {}),
      }, log);
    if (landed) commits.push({ pass, sha: landed });
    return landed;
  };
  const push: StepWork = {
    skip: () => change?.nothing,
    message: () => `committing and pushing the ${action === 'upgrade' ? 'upgrade' : 'removal'} of ${gitopsPath}`,
    run: () => land(change!, pass),
  };

  // Deleting the data: the lift lands and Flux applies it before the removal may land (see the top of this file).
  let lift: FleetChange | undefined;
  /** The lift commit Flux must apply: landed by this run, or by an earlier attempt of it. */
  let liftCommit: string | undefined;
  const liftTimeoutMs = deleteData?.timeoutMs ?? 0;
  const liftProtection: StepWork = {
    skip: () => (deleteData === undefined ? 'the data stays: objects marked prune: disabled survive the removal (delete_data not asked for)' : undefined),
    message: () => `lifting the prune protection of ${gitopsPath}'s data in a commit of its own`,
    run: async () => {
      lift = await liftChange({ workspace: workspace!, cluster, reference, generatorVersion: options.generatorVersion });
      log.info(
        { event: 'lift_protection', objects: lift.keeps ?? [], files: lift.paths.length },
        lift.nothing ?? `unmarking ${lift.keeps?.length ?? 0} object(s) in ${lift.paths.join(', ')}: ${lift.keeps?.join(', ') ?? ''}`,
      );
      liftCommit = lift.nothing === undefined ? await land(lift, 'lift-protection') : lift.landed;
      if (lift.nothing !== undefined && lift.landed !== undefined) commits.push({ pass: 'lift-protection', sha: lift.landed });
    },
  };
  const waitForLift: StepWork = {
    skip: () => (deleteData === undefined ? 'no lift to wait for' : liftCommit === undefined ? `${lift?.nothing ?? 'nothing was lifted'}: no lift to wait for` : undefined),
    message: () => `waiting up to ${Math.round(liftTimeoutMs / 1000)}s for the cluster's Flux to apply ${liftCommit!.slice(0, 12)} before the removal prunes the data`,
    run: () =>
      waitForFluxApplied(
        { readiness: deps.readiness!, logger: log, now },
        { commit: liftCommit!, timeoutMs: liftTimeoutMs, ...(deps.contains ? { contains: deps.contains } : {}), ...(signal ? { signal } : {}) },
      ),
  };

  return finishRun(async () => {
    const context = { log, now, ...(signal ? { signal } : {}) };
    if (action === 'upgrade') {
      const work: Record<UpgradeStepName, StepWork> = { clone, 'render-upgrade': { message: () => `rendering ${gitopsPath} again from ${reference}, sealed credentials kept`, run: plan(upgradeChange) }, 'push-upgrade': push };
      await runSteps(UPGRADE_STEPS, work, context);
    } else {
      const work: Record<RemoveStepName, StepWork> = {
        clone,
        'lift-protection': liftProtection,
        'wait-for-lift': waitForLift,
        'remove-files': { message: () => `removing the files the provenance of ${gitopsPath} lists`, run: plan(removalChange) },
        'push-removal': push,
      };
      await runSteps(REMOVE_STEPS, work, context);
    }
    if (change?.landed !== undefined) commits.push({ pass, sha: change.landed });
    const result: RunResult = {
      status: 'succeeded',
      message: resultMessage({ action, gitopsPath, commits, change, lift }),
      gitops_path: gitopsPath,
      commits,
      step: stepsOf(action).length,
      ...(change ? { changes: change.changes } : {}),
    };
    log.info({ event: 'run_finished', status: result.status, gitops_path: gitopsPath, commits }, result.message);
    return result;
  }, { workRoot, commits, workspace: () => workspace });
}

/**
 * The result's message: which commit did what and, for a removal, what the
 * cluster's Flux deletes once it applies the removal, data included or kept.
 */
function resultMessage(run: { action: FleetAction; gitopsPath: string; commits: readonly RunCommit[]; change: FleetChange | undefined; lift: FleetChange | undefined }): string {
  const { action, gitopsPath, commits, change, lift } = run;
  const of = (pass: RunPass) => commits.find((c) => c.pass === pass)?.sha.slice(0, 12);
  if (action === 'upgrade' || lift === undefined) {
    const done = change?.nothing ?? `${action === 'upgrade' ? 'upgraded' : 'removed'} ${gitopsPath}: ${commits.map((c) => `${c.pass} ${c.sha.slice(0, 12)}`).join(', ')}`;
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
    parts.push(`Flux deletes ${change.deletes.length} object(s), the data included: ${change.deletes.join(', ')}${change.keeps !== undefined && change.keeps.length > 0 ? `; still kept: ${change.keeps.join(', ')}` : ''}`);
  }
  return `removed ${gitopsPath} with its data: ${parts.join('; ')}`;
}
