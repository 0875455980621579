/**
 * Migration 6: how an upgrade rollout delivers its waves (push, or one
 * pull/merge request per wave), so a resumed rollout delivers the same way,
 * and the requests it opened.
 */
import type { Migration } from '../migrate.js';

/** Adds nullable `delivery` (jsonb, null is push) and `requests` (jsonb: wave → number, url, state) to `upgrade_rollouts`. */
export const rolloutDeliveryMigration: Migration = {
  version: 6,
  name: 'rollout-delivery',
  statements: [`ALTER TABLE upgrade_rollouts ADD COLUMN delivery jsonb`, `ALTER TABLE upgrade_rollouts ADD COLUMN requests jsonb`],
};
