/**
 * Migration 11: which actions exist is the registry's to say
 * (`model/run-action.ts`), not the schema's. Migration 7 listed the three
 * actions of its day in a CHECK, so every new action needed a migration to be
 * stored at all; the store now refuses an action the registry does not know
 * before it writes, and the column keeps only a check on the shape of a name.
 */
import type { Migration } from '../migrate.js';

/** Replaces `scaffold_runs.action`'s list of actions with a check that it is a lower-case kebab-case name. */
export const runActionByRegistryMigration: Migration = {
  version: 11,
  name: 'run-action-by-registry',
  statements: [
    `ALTER TABLE scaffold_runs DROP CONSTRAINT scaffold_runs_action_check`,
    `ALTER TABLE scaffold_runs ADD CONSTRAINT scaffold_runs_action_check CHECK (action ~ '^[a-z][a-z-]{0,30}[a-z]$')`,
  ],
};
