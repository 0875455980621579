/**
 * What an upgrade run or a removal run does to its working copy (step 2), as
 * one change to commit at step 3: the files to stage, the commit message, what
 * a pull request says, and the counts the run reports. Reused pieces only: the
 * upgrade is `upgradeWorkTree` for one cluster, the removal `planRemoval` and
 * `writeTree`, exactly as `generate-gitops-env upgrade` / `remove` and the
 * service's fleet source do them (`removeWorkTree` without its commit).
 */
import { ConflictError, VerificationError } from '../errors.js';
import type { PassSummary } from '../run/delivery.js';
import type { RunChanges } from '../run/run-record.js';
import { formatObjectRef } from '../fleet/prune-forecast.js';
import { clusterLeftovers, liftWorkTree, removalMessage, removeWorkTree } from '../workspace/remove-work-tree.js';
import { upgradeMessage } from '../workspace/upgrade-message.js';
import { upgradeWorkTree } from '../workspace/upgrade-work-tree.js';
import type { WorkTreeVerify } from '../workspace/verify-work-tree.js';
import type { GitWorkspace } from '../run/ports.js';

/** One change to commit, or why there is nothing to. */
export interface FleetChange {
  /** Repository-relative paths to stage. */
  readonly paths: readonly string[];
  readonly message: string;
  readonly summary: PassSummary;
  readonly changes: RunChanges;
  /** Set when there is nothing to commit: why (the push step is skipped with it). */
  readonly nothing?: string;
  /** When nothing is left to do because an earlier run did it: the commit it landed as. */
  readonly landed?: string;
  /** A removal (or a lift): the objects the cluster's Flux deletes once it lands (`Kind namespace/name`), when forecast. */
  readonly deletes?: readonly string[];
  /** A removal (or a lift): the objects still marked `prune: disabled`, which Flux keeps. */
  readonly keeps?: readonly string[];
}

/** Inputs of the step-2 work of either action. */
export interface FleetChangeContext {
  readonly workspace: GitWorkspace;
  readonly cluster: string;
  readonly reference: string;
  readonly generatorVersion: string;
  /** The pre-push gate; absent: none (the verify line then says "not run"). */
  readonly verify?: WorkTreeVerify;
  /** An upgrade in a batch: the batch's other clusters, which a run of this one alone would not have cloned. */
  readonly leaveOut?: readonly string[];
  /** An upgrade in a batch: the platform commit, read once for the batch (its commits touch only its clusters). @default read from the working copy */
  readonly platformCommit?: () => Promise<string | undefined>;
}

/** A gate that finds nothing, for a run without one: upgradeWorkTree would otherwise build the real one. */
const NO_GATE: WorkTreeVerify = async () => ({ findings: [], notes: [], kustomizationsChecked: 0, summary: 'not run' });

/**
 * Renders the cluster again from the current reference with its recorded
 * identity, every sealed credential byte-identical, and verifies it.
 * @throws NotFoundError / ValidationError for a cluster that is not generated (missing, the reference, no provenance)
 * @throws VerificationError with the findings when the render fails the gate (the tree is put back)
 * @throws ConflictError when it cannot be rendered without sealing anew
 */
export async function upgradeChange(context: FleetChangeContext): Promise<FleetChange> {
  const { cluster, reference } = context;
  const [outcome] = await upgradeWorkTree(context.workspace.dir, {
    clusters: [cluster],
    dryRun: false,
    reference,
    generatorVersion: context.generatorVersion,
    verify: context.verify ?? NO_GATE,
    // One cluster: planned in this thread.
    workers: 1,
    ...(context.leaveOut !== undefined ? { leaveOut: context.leaveOut } : {}),
    ...(context.platformCommit !== undefined ? { platformCommit: await context.platformCommit() } : {}),
  });
  if (outcome === undefined) throw new ConflictError(`clusters/${cluster} was not planned for upgrade`);
  if (outcome.status === 'failed') {
    throw outcome.findings !== undefined && outcome.findings.length > 0
      ? new VerificationError(outcome.findings)
      : new ConflictError(outcome.message ?? `clusters/${cluster} could not be rendered again`);
  }
  const { added, modified, removed, credentialsKept } = outcome;
  return {
    paths: [...added, ...modified, ...removed],
    message: upgradeMessage(outcome, reference),
    summary: { written: [...added, ...modified], removed, verify: context.verify ? 'passed: no findings' : 'not run' },
    changes: { added: added.length, modified: modified.length, removed: removed.length, credentialsKept },
    ...(outcome.status === 'up_to_date' ? { nothing: `clusters/${cluster} is up to date with the reference: nothing to commit` } : {}),
  };
}

/**
 * Deletes the files the cluster's provenance lists, keeping every other file
 * (flux bootstrap's flux-system/, a person's). A rerun after the removal
 * landed finds nothing left: it reports the commit that removed it, found by
 * its trailers, or none.
 * @throws ValidationError for the reference environment; ConflictError for a directory the generator did not write
 */
export async function removalChange(context: FleetChangeContext): Promise<FleetChange> {
  const { workspace, cluster, reference } = context;
  const gitopsPath = `clusters/${cluster}`;
  const left = cluster === reference ? undefined : await clusterLeftovers(workspace.dir, cluster);
  if (left !== undefined && !left.generated) {
    const landed = await workspace.passCommit(cluster, 'remove');
    if (landed !== undefined || left.files.length === 0) {
      const nothing =
        landed !== undefined
          ? `${gitopsPath} was already removed (${landed.slice(0, 12)}): nothing left to remove`
          : `${gitopsPath} is not in the repository: nothing left to remove`;
      return {
        paths: [],
        message: '',
        summary: { written: [], removed: [], verify: 'not run' },
        changes: { added: 0, modified: 0, removed: 0, kept: left.files },
        nothing,
        ...(landed !== undefined ? { landed } : {}),
      };
    }
  }
  // Not committed here: the run commits with its trailers and delivers it.
  // The forecast builds each layer: the commit message says what Flux deletes and what stays.
  const plan = await removeWorkTree(workspace.dir, { cluster, reference });
  return {
    paths: [...plan.remove, ...plan.write.keys()],
    message: removalMessage(plan),
    // The entry point is rewritten, not deleted: the sync path stays, listing only what stays.
    summary: { written: [...plan.write.keys()], removed: plan.remove, verify: 'not run: a removal renders nothing', kept: plan.kept },
    changes: { added: 0, modified: plan.write.size, removed: plan.remove.length, kept: plan.kept },
    ...(plan.prune !== undefined
      ? {
          deletes: [...plan.syncDeletes, ...plan.prune.flatMap((layer) => layer.deleted)].map(formatObjectRef),
          keeps: plan.prune.flatMap((layer) => layer.protected).map(formatObjectRef),
        }
      : {}),
  };
}

/**
 * The first commit of a removal that deletes the data: the lift patch in each
 * overlay whose objects carry `kustomize.toolkit.fluxcd.io/prune: disabled`
 * (`planLiftProtection`, as `generate-gitops-env remove --delete-data` commits
 * it), written to the working copy. Nothing to do when the removal already
 * landed, or when nothing is marked: a rerun after the lift landed builds the
 * overlays with the patch and finds nothing protected; it reports that lift.
 * @throws ValidationError for the reference, a layer that does not build, a protected layer not the cluster's own overlay
 */
export async function liftChange(context: FleetChangeContext): Promise<FleetChange> {
  const { workspace, cluster, reference } = context;
  const gitopsPath = `clusters/${cluster}`;
  const none = (nothing: string, landed?: string): FleetChange => ({
    paths: [],
    message: '',
    summary: { written: [], removed: [], verify: 'not run' },
    changes: { added: 0, modified: 0, removed: 0 },
    nothing,
    ...(landed !== undefined ? { landed } : {}),
  });
  if (cluster !== reference && !(await clusterLeftovers(workspace.dir, cluster)).generated)
    return none(`${gitopsPath} has no generated files left: nothing to lift`);
  const lift = await liftWorkTree(workspace.dir, { cluster, reference });
  const keeps = lift.prune.flatMap((layer) => layer.protected).map(formatObjectRef);
  if (lift.files.size === 0) {
    const landed = await workspace.passCommit(cluster, 'lift-protection');
    return {
      ...none(
        landed !== undefined
          ? `the prune protection of ${gitopsPath} was lifted by ${landed.slice(0, 12)}`
          : `nothing of ${gitopsPath} is marked prune: disabled: nothing to lift`,
        landed,
      ),
      keeps,
    };
  }
  const paths = [...lift.files.keys()];
  return {
    paths,
    message: lift.message,
    summary: { written: paths, removed: [], verify: 'not run: a lift renders nothing' },
    changes: { added: 0, modified: paths.length, removed: 0 },
    keeps,
  };
}
