/**
 * The skeleton every run shares, whatever its action (scaffold, rotation,
 * upgrade, removal): refuse a bad id, open a scratch directory, clone the
 * branch sparsely (step 1), gate the working copy with verify, commit and
 * deliver each pass with the trailers the landing queue reads, run the
 * action's step table, and end the same way — a succeeded result with the
 * commits, or a StepError carrying the commits pushed before it, the working
 * copy removed either way.
 *
 * An action brings only what is its own: the work of its other steps and the
 * words of its result (`run-scaffold.ts`, `run-fleet-change.ts`).
 */
import { ValidationError, VerificationError } from '../errors.js';
import { pushDelivery } from '../delivery/push-delivery.js';
import type { Logger } from '../logger.js';
import { DEFAULT_BRANCH, REFERENCE_ENVIRONMENT } from '../model/defaults.js';
import type { RunAction, RunPass } from '../model/run-action.js';
import type { RunStepDefinition } from '../model/run-step-tables.js';
import type { DeliverablePass, PassDelivery, PassSummary } from '../run/delivery.js';
import type { GitCredentials, GitIdentity, GitRemote, GitWorkspace } from '../run/ports.js';
import type { RunCommit, RunResult } from '../run/run-record.js';
import { afterRebaseCheck } from './reverify-after-rebase.js';
import { assertRunId, cloneForRun, cloneMessage, DEFAULT_AUTHOR, DEFAULT_PUSH_ATTEMPTS, finishRun, landPass, runScratch } from './run-git.js';
import { runSteps, type StepWork } from './step-runner.js';

/**
 * Checks a rendered work tree before it is committed; returns one finding a
 * line. `leaveOut`: directories it neither reads nor copies (a batch's other clusters).
 */
export type WorkTreeVerifier = (
  dir: string,
  cluster: string,
  signal?: AbortSignal,
  leaveOut?: readonly string[],
) => Promise<{ findings: readonly string[]; readonly kustomizeBuilds?: { readonly run: number; readonly cached: number } }>;

/** Collaborators every run has. */
export interface RunFrameDeps {
  readonly git: GitRemote;
  /** The pre-push gate; skipped when absent. */
  readonly verify?: WorkTreeVerifier;
  readonly logger: Logger;
  /** How a committed pass reaches the branch. @default push straight to it */
  readonly delivery?: PassDelivery;
  /** Where working copies go. @default the OS temp dir */
  readonly workRoot?: string;
  /** Where their work trees go instead, their repositories staying in `workRoot` (RunClone.workTreeRoot). @default in `workRoot` */
  readonly workTreeRoot?: string;
  readonly now?: () => number;
}

/** What every run is told: which run, which repository, and how its commits are written. */
export interface RunFrameOptions {
  readonly id: string;
  readonly repositoryUrl: string;
  /** @default 'main' */
  readonly branch?: string;
  readonly credentials?: GitCredentials;
  /** @default 'development' */
  readonly reference?: string;
  /** @default gitops-scaffolder <gitops-scaffolder@localhost> */
  readonly author?: GitIdentity;
  /** @default 30 */
  readonly pushAttempts?: number;
  readonly signal?: AbortSignal;
  /** A batch upgrade run: the clusters it upgrades after its own, cloned with it. */
  readonly batch?: readonly string[];
}

/** One commit to land: what it stages and says. */
export interface Landing {
  /** Repository-relative paths to stage. */
  readonly paths: readonly string[];
  readonly message: string;
  /** What a pull/merge request says about it. */
  readonly summary: PassSummary;
  /** The commit this pass landed as earlier, for a rerun with nothing new to commit. @default the newest commit with the pass's trailers */
  readonly landedBefore?: () => Promise<string | undefined>;
  /** Whether a rebase onto changed shared inputs verifies the tree again (a removal renders nothing to verify). @default true */
  readonly reverifyAfterRebase?: boolean;
}

/** What the frame hands an action's steps. */
export interface RunFrame {
  readonly cluster: string;
  /** `clusters/<cluster>`. */
  readonly gitopsPath: string;
  readonly branch: string;
  readonly reference: string;
  /** The run's logger, bound to its id and cluster. */
  readonly log: Logger;
  readonly now: () => number;
  /** The commits landed so far, in order. */
  readonly commits: RunCommit[];
  /** The working copy step 1 cloned. */
  workspace(): GitWorkspace;
  /** Step 1: the sparse clone. */
  readonly clone: StepWork;
  /** Whether the run has a pre-push gate. */
  readonly verifies: boolean;
  /** A batch run: the directories of its clusters other than `cluster`, which a verify of `cluster` leaves out. */
  othersOf(cluster: string): readonly string[];
  /** Runs the gate over the working copy for `cluster` (default: the run's; nothing without a gate). @throws VerificationError with the findings */
  verify(cluster?: string): Promise<void>;
  /** Runs the gate over `dir` (default: the working copy) for `cluster` and logs what it built. @returns its findings (none without a gate) */
  inspect(cluster?: string, dir?: string): Promise<readonly string[]>;
  /** Commits `landing` as `pass`, delivers it and records the commit. @returns the commit on the branch, if any */
  land(pass: RunPass, landing: Landing): Promise<string | undefined>;
  /**
   * Commits `landing` as `pass` of `cluster` (a batch's) without pushing it,
   * for {@link landCommitted} to push with the others: one push for them all.
   * @returns the commit, undefined when nothing changed
   */
  commitOnly(pass: RunPass, cluster: string, landing: Pick<Landing, 'paths' | 'message'>): Promise<string | undefined>;
  /**
   * Pushes the commits {@link commitOnly} made, one each for `clusters` (in
   * the order they were made), in one push straight to the branch. A rebase
   * onto changed shared inputs verifies each of them again. Records each
   * cluster's commit as it now is on the branch, a `commit` event each.
   * @returns each cluster's commit on the branch
   */
  landCommitted(pass: DeliverablePass, clusters: readonly string[]): Promise<ReadonlyMap<string, string>>;
}

/** An action's part of a run: its step table, the work of each row, and its result. */
export interface RunPlan<Name extends string> {
  readonly steps: readonly (RunStepDefinition & { readonly name: Name })[];
  readonly work: Readonly<Record<Name, StepWork>>;
  /** The succeeded result's own fields, read once every step has run. */
  readonly result: () => { readonly message: string; readonly changes?: RunResult['changes']; readonly batch?: RunResult['batch'] };
  /** A batch run: each cluster's status so far, which a failed result carries too. */
  readonly batch?: () => RunResult['batch'];
}

/**
 * Runs one action's plan inside the shared skeleton.
 * @param cluster the cluster as a delivery names it (a scaffold's request names its domain and region too)
 * @returns the succeeded result
 * @throws StepError carrying the failed step, the original error and the commits pushed before it
 */
export async function runInFrame<Name extends string>(
  action: RunAction,
  deps: RunFrameDeps,
  options: RunFrameOptions & { readonly cluster: { readonly name: string; readonly domain?: string; readonly region?: string } },
  plan: (frame: RunFrame) => RunPlan<Name>,
): Promise<RunResult> {
  assertRunId(options.id);
  const { signal } = options;
  const cluster = options.cluster.name;
  const now = deps.now ?? Date.now;
  // A scaffold's log lines have always been bound to the run and cluster only; fleet actions name themselves.
  const log = deps.logger.child({ run_id: options.id, cluster, ...(action === 'scaffold' ? {} : { action }) });
  const branch = options.branch ?? DEFAULT_BRANCH;
  const reference = options.reference ?? REFERENCE_ENVIRONMENT;
  const gitopsPath = `clusters/${cluster}`;
  const commits: RunCommit[] = [];
  let workspace: GitWorkspace | undefined;
  const workRoot = await runScratch(deps.workRoot, action, options.id);
  const cloned = (): GitWorkspace => {
    if (workspace === undefined) throw new Error('the working copy is used before step 1 cloned it');
    return workspace;
  };

  const othersOf = (of: string): readonly string[] => [cluster, ...(options.batch ?? [])].filter((name) => name !== of).map((name) => `clusters/${name}`);

  /** kustomize builds of this run's verifies so far: run (a kubectl process each) and answered by the verifier's cache. */
  const builds = { run: 0, cached: 0 };
  const inspect = async (of: string = cluster, dir: string = cloned().dir): Promise<readonly string[]> => {
    if (!deps.verify) return [];
    const report = await deps.verify(dir, of, signal, othersOf(of));
    if (report.kustomizeBuilds) {
      builds.run += report.kustomizeBuilds.run;
      builds.cached += report.kustomizeBuilds.cached;
      const total = builds.run + builds.cached;
      log.info(
        {
          event: 'verified',
          // A batch run's other clusters are named: the logger is bound to the run's own.
          ...(of === cluster ? {} : { batch_cluster: of }),
          findings: report.findings.length,
          kustomize_run: report.kustomizeBuilds.run,
          kustomize_cached: report.kustomizeBuilds.cached,
          run_kustomize_run: builds.run,
          run_kustomize_cached: builds.cached,
          run_cache_hit_rate: total === 0 ? 0 : Number((builds.cached / total).toFixed(3)),
        },
        `verify built ${report.kustomizeBuilds.run} kustomizations with kubectl and took ${report.kustomizeBuilds.cached} from the cache (this run: ${builds.cached} of ${total} cached)`,
      );
    }
    return report.findings;
  };
  const verify = async (of: string = cluster): Promise<void> => {
    const findings = await inspect(of);
    if (findings.length > 0) throw new VerificationError(findings);
  };

  // Scaffold-Reference: what this pass's verify read, so a concurrent run may carry it (git/landing-queue.ts).
  const trailersOf = (pass: RunPass, of: string): Record<string, string> => ({
    'Scaffold-Id': options.id,
    'Scaffold-Pass': pass,
    'Scaffold-Cluster': of,
    'Scaffold-Reference': reference,
    ...(action === 'scaffold' ? {} : { 'Scaffold-Action': action }),
  });

  /** The `afterRebase` of a push of `of`'s commit: its verify again when what it read changed. */
  const rebaseCheckOf = (pass: RunPass, of: string) =>
    afterRebaseCheck({ cluster: of, reference, log, pass, ...(deps.verify ? { verify: () => verify(of) } : {}) });

  const land = async (pass: RunPass, landing: Landing): Promise<string | undefined> => {
    const landed = await landPass(
      deps.delivery,
      {
        commit: {
          paths: landing.paths,
          message: landing.message,
          trailers: trailersOf(pass, cluster),
          author: options.author ?? DEFAULT_AUTHOR,
        },
        landedBefore: landing.landedBefore ?? (() => cloned().passCommit(cluster, pass)),
        workspace: cloned(),
        runId: options.id,
        cluster: options.cluster,
        pass,
        // A scaffold's request says its domain and region; a fleet change's names the reference it was rendered from.
        ...(action === 'scaffold' ? {} : { reference }),
        branch,
        summary: landing.summary,
        maxAttempts: options.pushAttempts ?? DEFAULT_PUSH_ATTEMPTS,
        ...(landing.reverifyAfterRebase === false ? {} : { afterRebase: rebaseCheckOf(pass, cluster) }),
        ...(signal ? { signal } : {}),
      },
      log,
    );
    if (landed) commits.push({ pass, sha: landed });
    return landed;
  };

  const commitOnly = async (pass: RunPass, of: string, landing: Pick<Landing, 'paths' | 'message'>): Promise<string | undefined> =>
    cloned().commit({
      paths: landing.paths,
      message: landing.message,
      trailers: trailersOf(pass, of),
      author: options.author ?? DEFAULT_AUTHOR,
    });

  const landCommitted = async (pass: DeliverablePass, clusters: readonly string[]): Promise<ReadonlyMap<string, string>> => {
    if (deps.delivery !== undefined && deps.delivery.mode !== 'push')
      throw new ValidationError([{ field: 'delivery', message: `a batch's commits are pushed together, not delivered through ${deps.delivery.mode}` }]);
    const checks = clusters.map((of) => rebaseCheckOf(pass, of));
    const pushed = await pushDelivery.deliver({
      workspace: cloned(),
      runId: options.id,
      cluster: { name: clusters.at(-1) ?? cluster },
      pass,
      reference,
      branch,
      // Push delivery opens no request: nothing reads a summary.
      summary: { written: [], removed: [], verify: '' },
      maxAttempts: options.pushAttempts ?? DEFAULT_PUSH_ATTEMPTS,
      // Each cluster's verify reads its own directory and the shared inputs, never the batch's other clusters, so the rebased tip verifies each as its own commit would.
      afterRebase: async (changed) => {
        for (const check of checks) await check(changed);
      },
      ...(signal ? { signal } : {}),
    });
    const landed = new Map<string, string>();
    for (const of of clusters) {
      const sha = await cloned().passCommit(of, pass);
      if (sha === undefined) throw new Error(`clusters/${of}'s commit is not on the pushed branch`);
      landed.set(of, sha);
      commits.push({ pass, sha, cluster: of });
      log.info(
        { event: 'commit', pass, sha, attempts: pushed.attempts, pushed: true, delivery: 'push' },
        `pushed pass ${pass} of clusters/${of} as ${sha.slice(0, 12)} to ${branch}`,
      );
    }
    return landed;
  };

  const clone: StepWork = {
    message: () => cloneMessage({ branch, reference, cluster, ...(options.batch ? { batch: options.batch } : {}) }),
    run: async () => {
      workspace = await cloneForRun(deps.git, {
        url: options.repositoryUrl,
        branch,
        workRoot,
        ...(deps.workTreeRoot !== undefined ? { workTreeRoot: deps.workTreeRoot } : {}),
        reference,
        cluster,
        ...(options.batch ? { batch: options.batch } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
        ...(signal ? { signal } : {}),
      });
    },
  };

  const frame: RunFrame = {
    cluster,
    gitopsPath,
    branch,
    reference,
    log,
    now,
    commits,
    workspace: cloned,
    clone,
    verifies: deps.verify !== undefined,
    othersOf,
    verify,
    inspect,
    land,
    commitOnly,
    landCommitted,
  };
  let batchOf: RunPlan<Name>['batch'];
  return finishRun(
    async () => {
      const { steps, work, result, batch } = plan(frame);
      batchOf = batch;
      await runSteps(steps, work, { log, now, ...(signal ? { signal } : {}) });
      const own = result();
      const succeeded: RunResult = {
        status: 'succeeded',
        message: own.message,
        gitops_path: gitopsPath,
        commits,
        step: steps.length,
        ...(own.changes ? { changes: own.changes } : {}),
        ...(own.batch ? { batch: own.batch } : {}),
      };
      log.info({ event: 'run_finished', status: succeeded.status, gitops_path: gitopsPath, commits }, succeeded.message);
      return succeeded;
    },
    { workRoot, commits, workspace: () => workspace, batch: () => batchOf?.() },
  );
}
