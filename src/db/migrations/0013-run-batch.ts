/**
 * Migration 13: a rollout upgrades a wave's clusters in batch runs, one runner
 * for many clusters, each landed as its own commit. The run keeps the
 * clusters it upgrades after its own (`batch`, names) and each one's outcome
 * (`batch_outcomes`); the one-active-run index still holds the run's own
 * cluster. Older rows keep NULL: runs about one cluster.
 */
import type { Migration } from '../migrate.js';

/** Adds nullable `batch` (a JSON array of cluster names) and `batch_outcomes` (a JSON object by cluster) to `scaffold_runs`. */
export const runBatchMigration: Migration = {
  version: 13,
  name: 'run-batch',
  statements: [`ALTER TABLE scaffold_runs ADD COLUMN batch jsonb`, `ALTER TABLE scaffold_runs ADD COLUMN batch_outcomes jsonb`],
};
