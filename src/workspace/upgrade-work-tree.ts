/**
 * `upgrade` on a working tree on disk: plan the re-render of generated
 * clusters over the repository as it is, then (unless a dry run) write each
 * changed cluster, verify it, and put it back as it was if it fails.
 */
import { randomBytes } from 'node:crypto';
import { writeTree } from '../git/write-tree.js';
import type { ClusterUpgrade } from '../fleet/plan-upgrade.js';
import { planUpgradeInParallel } from './plan-upgrade-in-parallel.js';
import { platformCommitOf } from '../git/render-work-tree.js';
import { createWorkTreeVerifier, type WorkTreeVerify } from './verify-work-tree.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

/** Inputs of {@link upgradeWorkTree}. */
export interface UpgradeWorkTreeOptions {
  /** @default 'development' */
  readonly reference?: string;
  /** @default every generated cluster */
  readonly clusters?: readonly string[];
  /** Plan only: nothing is written. */
  readonly dryRun: boolean;
  readonly generatorVersion: string;
  /** Verifies a written cluster. @default createWorkTreeVerifier() (kubectl kustomize, the CRD schemas) */
  readonly verify?: WorkTreeVerify;
  /** Worker threads for planning a large fleet. @default os.availableParallelism() */
  readonly workers?: number;
  /** Repository directories the plan does not see (a batch run's other clusters). */
  readonly leaveOut?: readonly string[];
  /** The platform commit when the caller has read it already (a batch: once for all its clusters). @default read from `dir` */
  readonly platformCommit?: string | undefined;
}

/** One cluster's outcome: its plan and, when written, its verification. */
export type UpgradeOutcome = ClusterUpgrade & {
  /** Whether its tree was written (and kept). */
  readonly written: boolean;
  /** Verification findings of a written tree that failed (the tree was then restored). */
  readonly findings?: readonly string[];
};

/** The platform commit an upgrade of the working tree at `dir` renders from: read once, it can be handed to many upgrades of one tree. */
export function upgradePlatformCommit(dir: string, reference: string = REFERENCE_ENVIRONMENT): Promise<string | undefined> {
  return platformCommitOf(dir, reference);
}

/**
 * Upgrades the clusters of the working tree at `dir`.
 *
 * Writing is per cluster: each changed cluster is written, verified on its
 * own, and restored byte for byte when verification finds anything, so a
 * failure leaves that cluster as it was and the others upgraded.
 */
export async function upgradeWorkTree(dir: string, options: UpgradeWorkTreeOptions): Promise<UpgradeOutcome[]> {
  const reference = options.reference ?? REFERENCE_ENVIRONMENT;
  const platformCommit = 'platformCommit' in options ? options.platformCommit : await upgradePlatformCommit(dir, reference);
  const plans = await planUpgradeInParallel(dir, {
    reference,
    ...(options.clusters !== undefined ? { clusters: options.clusters } : {}),
    ...(platformCommit !== undefined ? { platformCommit } : {}),
    generatorVersion: options.generatorVersion,
    random: (size) => randomBytes(size),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
    ...(options.leaveOut !== undefined ? { leaveOut: options.leaveOut } : {}),
  });
  if (options.dryRun) return plans.map((plan) => ({ ...plan, written: false }));
  const verify = options.verify ?? createWorkTreeVerifier();
  const outcomes: UpgradeOutcome[] = [];
  for (const plan of plans) {
    if (plan.status !== 'changed' || plan.tree === undefined || plan.before === undefined) {
      outcomes.push({ ...plan, written: false });
      continue;
    }
    // Back to the bytes it had: whatever the render added goes, whatever it changed or removed returns.
    const restore = () => writeTree(dir, plan.before!, { remove: [...plan.tree!.keys()].filter((path) => !plan.before!.has(path)) });
    await writeTree(dir, plan.tree, { remove: plan.stale ?? [] });
    let report;
    try {
      report = await verify(dir, { cluster: plan.name });
    } catch (error) {
      // A verify that could not finish (cancelled, a crashed kubectl) judged nothing: the tree is not left half-upgraded.
      await restore();
      throw error;
    }
    if (report.findings.length === 0) {
      outcomes.push({ ...plan, written: true });
      continue;
    }
    await restore();
    outcomes.push({
      ...plan,
      status: 'failed',
      written: false,
      message: `the upgraded tree fails verification (${report.findings.length} finding(s)); left as it was`,
      findings: report.findings,
    });
  }
  return outcomes;
}
