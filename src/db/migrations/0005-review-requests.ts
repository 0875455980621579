/**
 * Migration 5: the pull/merge requests a run's passes went through
 * (`pull_request` delivery), kept with the run so the run view and the
 * dashboard list them with their state after the runner and its log are gone
 * and across a service restart.
 */
import type { Migration } from '../migrate.js';

/** Adds `review_requests` (jsonb array: pass, forge, number, url, state, branch, updatedAt; empty for push) to `scaffold_runs`. */
export const reviewRequestsMigration: Migration = {
  version: 5,
  name: 'review-requests',
  statements: [`ALTER TABLE scaffold_runs ADD COLUMN review_requests jsonb NOT NULL DEFAULT '[]'::jsonb`],
};
