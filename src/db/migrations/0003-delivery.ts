/**
 * Migration 3: how a run delivers its passes (push, or pull/merge requests on
 * a forge), so a retry or a reconciled run delivers the same way.
 */
import type { Migration } from '../migrate.js';

/** Adds nullable `delivery` (jsonb: mode, autoMerge, forge, apiUrl; null is push) to `scaffold_runs`. */
export const deliveryMigration: Migration = {
  version: 3,
  name: 'delivery',
  statements: [`ALTER TABLE scaffold_runs ADD COLUMN delivery jsonb`],
};
