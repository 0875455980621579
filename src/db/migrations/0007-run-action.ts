/**
 * Migration 7: upgrades and removals are runs too (`model/run-action.ts`). A
 * run records what it does, what its commit changed (an upgrade's or a
 * removal's file counts), and may seal nothing at all.
 */
import type { Migration } from '../migrate.js';

/** Adds `action` (scaffold, upgrade, remove) and nullable `changes` (jsonb) to `scaffold_runs`; `sealing` may be `none`; a rollout no longer keeps per-wave requests. */
export const runActionMigration: Migration = {
  version: 7,
  name: 'run-action',
  statements: [
    `ALTER TABLE scaffold_runs ADD COLUMN action text NOT NULL DEFAULT 'scaffold' CHECK (action IN ('scaffold', 'upgrade', 'remove'))`,
    `ALTER TABLE scaffold_runs ADD COLUMN changes jsonb`,
    `ALTER TABLE scaffold_runs DROP CONSTRAINT scaffold_runs_sealing_check`,
    `ALTER TABLE scaffold_runs ADD CONSTRAINT scaffold_runs_sealing_check CHECK (sealing IN ('certificate', 'kubeconfig', 'none'))`,
    // A rollout's pull requests are its runs' now (each run's review_requests).
    `ALTER TABLE upgrade_rollouts DROP COLUMN requests`,
  ],
};
