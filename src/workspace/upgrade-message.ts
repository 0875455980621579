/** The commit message of one cluster's upgrade (`POST /api/v1/upgrades`): what changed and what was kept. */
import type { ClusterUpgrade } from '../fleet/plan-upgrade.js';

export function upgradeMessage(upgrade: ClusterUpgrade, reference: string): string {
  return [
    `Upgrade cluster ${upgrade.name}`,
    '',
    `Re-renders it from the reference environment ${reference} with its recorded identity and attributes:`,
    `${upgrade.added.length} file(s) added, ${upgrade.modified.length} modified, ${upgrade.removed.length} removed; ${upgrade.credentialsKept} sealed credential(s) kept byte for byte.`,
  ].join('\n');
}
