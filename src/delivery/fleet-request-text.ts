/**
 * What a fleet change's pull/merge request says, pure: an upgrade wave
 * (`scaffold/upgrade/<rollout>/wave-<n>`) or a removal
 * (`scaffold/remove/<cluster>`), so reviewers see the clusters and what
 * changes in each without opening the diff.
 */
import type { RemovalPlan } from '../fleet/plan-removal.js';
import type { ClusterUpgrade } from '../fleet/plan-upgrade.js';
import type { ReviewDelivery } from './delivery.js';
import { fileList } from './request-text.js';

/** The request's words and names; the caller adds the workspace, the branch and the signal. */
export type FleetReviewText = Pick<ReviewDelivery, 'head' | 'title' | 'body' | 'labels' | 'subject' | 'unmerged' | 'fields'>;

/** One wave of a rollout, as its request names it: `wave` counts from 0 like the rollout record, the text from 1. */
export interface UpgradeWave {
  readonly rolloutId: string;
  readonly wave: number;
  readonly waves: number;
}

export function upgradeBranchOf(rolloutId: string, wave: number): string {
  return `scaffold/upgrade/${rolloutId}/wave-${wave + 1}`;
}

export function removalBranchOf(cluster: string): string {
  return `scaffold/remove/${cluster}`;
}

type UpgradeSummary = Pick<ClusterUpgrade, 'name' | 'added' | 'modified' | 'removed' | 'credentialsKept'>;

/** The request of one upgrade wave: each cluster it writes, with its diff summary and files. */
export function upgradeReviewText(wave: UpgradeWave, upgrades: readonly UpgradeSummary[], reference: string, branch: string): FleetReviewText {
  const names = upgrades.map((u) => u.name);
  const ordinal = `wave ${wave.wave + 1} of ${wave.waves}`;
  const perCluster = upgrades.flatMap((u) => [
    `## ${u.name}`,
    '',
    `${u.added.length} file(s) added, ${u.modified.length} modified, ${u.removed.length} removed; ${u.credentialsKept} sealed credential(s) kept byte for byte.`,
    '',
    ...fileList('Files added', u.added),
    ...fileList('Files modified', u.modified),
    ...fileList('Files removed', u.removed),
  ]);
  return {
    head: upgradeBranchOf(wave.rolloutId, wave.wave),
    title: `Upgrade ${names.length === 1 ? `cluster ${names[0] ?? ''}` : `${names.length} clusters`} from ${reference} (${ordinal})`,
    body: [
      `Re-renders **${names.join('**, **')}** from the reference environment \`${reference}\` with their recorded identity and attributes; one commit per cluster, verified before it was committed.`,
      '',
      `The rollout waits for this request to be merged into \`${branch}\` before its next wave starts.`,
      '',
      ...perCluster,
      `Upgrade rollout \`${wave.rolloutId}\`, ${ordinal}, opened by gitops-scaffolder.`,
    ].join('\n'),
    labels: ['gitops-scaffolder', 'scaffold-action:upgrade'],
    subject: `${ordinal} of upgrade ${wave.rolloutId}`,
    unmerged: `so the upgrade of ${names.join(', ')} never reached ${branch}; the rollout stopped there (start a new rollout to try again)`,
    fields: { change: 'upgrade', rollout: wave.rolloutId, wave: wave.wave },
  };
}

/** The request of a removal: the files deleted and those kept. */
export function removalReviewText(plan: RemovalPlan, branch: string): FleetReviewText {
  return {
    head: removalBranchOf(plan.name),
    title: `Remove cluster ${plan.name}`,
    body: [
      `Decommissions **${plan.name}**: deletes the ${plan.remove.length} file(s) gitops-scaffolder generated under \`${plan.gitopsPath}/\`. Once merged into \`${branch}\`, the cluster's Flux prunes what they deployed.`,
      '',
      ...fileList('Files removed', plan.remove),
      ...fileList('Files kept (not written by gitops-scaffolder)', plan.kept),
      ...(plan.fluxBootstrap ? ["`flux-system/`, written by flux bootstrap, is kept: remove it once the cluster's Flux is gone.", ''] : []),
      'Opened by gitops-scaffolder.',
    ].join('\n'),
    labels: ['gitops-scaffolder', 'scaffold-action:remove'],
    subject: `the removal of ${plan.name}`,
    unmerged: `so ${plan.gitopsPath}/ is still on ${branch}; remove the cluster again to open a new one`,
    fields: { change: 'remove', cluster: plan.name },
  };
}
