/**
 * The git side every run shares, whatever its action: its scratch directory
 * and the clean-up after it, the sparse clone of step 1, the defaults of its
 * commits, and the delivery of a committed pass with the `commit` event that
 * reports it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isRunId } from '../model/run-id.js';
import type { BatchClusterStatus, RunCommit } from '../run/run-record.js';
import { StepError } from './step-runner.js';
import type { DeliverablePass, DeliveredPass, DeliverPassRequest, PassDelivery } from '../run/delivery.js';
import type { RunPass } from '../model/run-action.js';
import { pushDelivery } from '../delivery/push-delivery.js';
import type { CommitOptions, GitCredentials, GitIdentity, GitRemote, GitWorkspace } from '../run/ports.js';

export const DEFAULT_AUTHOR: GitIdentity = { name: 'gitops-scaffolder', email: 'gitops-scaffolder@localhost' };

/**
 * Push attempts when the caller sets none. Each round of racing pushes lets only
 * one through, so the budget has to outlast a burst of concurrent runs (the
 * design's figure is 20 into one repository; 8 attempts lost runs there), with
 * the remote's jittered backoff spreading the rounds out.
 */
export const DEFAULT_PUSH_ATTEMPTS = 30;

/** What a run clones. */
export interface RunClone {
  readonly url: string;
  readonly branch: string;
  /** The run's scratch directory; the working copy goes in `repo/` below it. */
  readonly workRoot: string;
  /**
   * A memory volume for the work tree alone (the runner's scratch): the
   * repository itself stays in `repo.git/` below `workRoot` (CloneOptions.gitDir).
   * @default the work tree in `workRoot` too
   */
  readonly workTreeRoot?: string;
  readonly reference: string;
  readonly cluster: string;
  /** A batch run: the further clusters it upgrades, each checked out beside the first. */
  readonly batch?: readonly string[];
  readonly credentials?: GitCredentials;
  readonly signal?: AbortSignal;
}

/** Step 1's start message. */
export function cloneMessage(clone: Pick<RunClone, 'branch' | 'reference' | 'cluster' | 'batch'>): string {
  const more = clone.batch?.length ?? 0;
  return `cloning ${clone.branch} (sparse: base/, clusters/${clone.reference}/, clusters/${clone.cluster}/${more > 0 ? ` and ${more} more cluster(s) of the batch` : ''})`;
}

/**
 * Clones the branch with only what a render of one cluster reads: base/, the
 * reference environment, the cluster's own directory and the platform's other
 * top-level roots, never the other clusters, so its cost does not grow with
 * the fleet.
 */
export function cloneForRun(git: GitRemote, clone: RunClone): Promise<GitWorkspace> {
  // workRoot's name is the run's own (runScratch): the work tree takes it in the shared scratch volume.
  const where =
    clone.workTreeRoot === undefined
      ? { dir: join(clone.workRoot, 'repo') }
      : { dir: join(clone.workTreeRoot, basename(clone.workRoot)), gitDir: join(clone.workRoot, 'repo.git') };
  return git.clone({
    url: clone.url,
    branch: clone.branch,
    ...where,
    sparsePaths: ['base', `clusters/${clone.reference}`, ...[clone.cluster, ...(clone.batch ?? [])].map((name) => `clusters/${name}`)],
    // The platform's shared roots, whatever the catalog calls them; never the other clusters.
    sparseTopLevelExcept: ['clusters'],
    ...(clone.credentials ? { credentials: clone.credentials } : {}),
    ...(clone.signal ? { signal: clone.signal } : {}),
  });
}

/** A committed pass to deliver: any pass a delivery takes, or a removal's lift (pushed only). */
export type PassRequest = Omit<DeliverPassRequest, 'pass'> & { readonly pass: RunPass };

/**
 * Delivers the workspace's committed pass and logs the `commit` event.
 * A removal's lift of the prune protection is always pushed: a request a
 * person merges later would leave the removal waiting on nothing it controls.
 * @returns the commit the branch holds it in
 * @throws ValidationError for a lift with a delivery other than push
 */
export async function deliverPass(delivery: PassDelivery | undefined, request: PassRequest, log: Logger): Promise<string> {
  const through = delivery ?? pushDelivery;
  const { pass, branch } = request;
  let pushed: DeliveredPass;
  if (pass === 'lift-protection') {
    if (through.mode !== 'push')
      throw new ValidationError([
        {
          field: 'delivery',
          message: "deleting the data is pushed: the lift of the prune protection must land, and be applied by the cluster's Flux, before the removal",
        },
      ]);
    // Push delivery reads no pass (the landing queue reads the commit's Scaffold-Pass trailer): the removal's stands in for the type.
    pushed = await pushDelivery.deliver({ ...request, pass: 'remove' satisfies DeliverablePass });
  } else {
    pushed = await through.deliver({ ...request, pass });
  }
  log.info(
    {
      event: 'commit',
      pass,
      sha: pushed.sha,
      attempts: pushed.attempts,
      pushed: true,
      delivery: through.mode,
      ...(pushed.request ? { request: pushed.request } : {}),
    },
    `${pushed.request ? `merged request #${pushed.request.number} for` : 'pushed'} pass ${pass} as ${pushed.sha.slice(0, 12)} to ${branch}`,
  );
  return pushed.sha;
}

/** A pass to commit in the request's workspace and deliver. */
export interface PassToLand extends PassRequest {
  readonly commit: CommitOptions;
  /** The commit this pass landed as earlier, for a rerun that finds nothing new to commit. */
  readonly landedBefore: () => Promise<string | undefined>;
}

/**
 * Commits the pass and delivers it; when there is nothing to commit (a rerun
 * after it landed), reports the commit it landed as instead.
 * @returns the pass's commit on the branch, undefined when nothing to commit and none is found
 */
export async function landPass(delivery: PassDelivery | undefined, pass: PassToLand, log: Logger): Promise<string | undefined> {
  const { commit, landedBefore, ...request } = pass;
  if ((await request.workspace.commit(commit)) !== undefined) return deliverPass(delivery, request, log);
  const existing = await landedBefore();
  log.info({ event: 'commit', pass: request.pass, sha: existing, pushed: false }, `pass ${request.pass} is already on the remote; nothing to commit`);
  return existing;
}

/**
 * Refuses an id that is not a run id, first thing: it names the run's scratch directory and every commit trailer.
 * @throws ValidationError
 */
export function assertRunId(id: string): void {
  if (!isRunId(id)) throw new ValidationError([{ field: 'id', message: 'must be 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit' }]);
}

/** A run's own scratch directory below `parent` (default: the OS temp dir). */
export function runScratch(parent: string | undefined, prefix: string, id: string): Promise<string> {
  return mkdtemp(join(parent ?? tmpdir(), `${prefix}-${id}-`));
}

/** What a run leaves to clean up, read when it ends. */
export interface RunLeftovers {
  readonly workRoot: string;
  readonly workspace: () => GitWorkspace | undefined;
  /** The commits pushed so far: a failed step reports them. */
  readonly commits: readonly RunCommit[];
  /** A batch run: each cluster's status so far, which a failed step reports too. */
  readonly batch?: () => Readonly<Record<string, BatchClusterStatus>> | undefined;
}

/**
 * Runs a run's steps and ends it the same way whatever happened: a StepError
 * carries the commits pushed before it, and the working copy and the scratch
 * directory are removed.
 */
export async function finishRun<T>(work: () => Promise<T>, leftovers: RunLeftovers): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StepError) {
      error.commits = [...leftovers.commits];
      error.batch = leftovers.batch?.();
    }
    throw error;
  } finally {
    await leftovers
      .workspace()
      ?.dispose()
      .catch(() => undefined);
    await rm(leftovers.workRoot, { recursive: true, force: true }).catch(() => undefined);
  }
}
