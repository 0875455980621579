/**
 * Migration 4: upgrade rollouts (`POST /api/v1/upgrades`), so a rollout's
 * waves, each cluster's outcome and where it stopped outlive the request.
 */
import type { Migration } from '../migrate.js';

/** Adds `upgrade_rollouts`; waves, per-cluster outcomes and the failure are jsonb (read and written whole). */
export const rolloutsMigration: Migration = {
  version: 4,
  name: 'rollouts',
  statements: [
    `CREATE TABLE upgrade_rollouts (
      id             text        PRIMARY KEY,
      repository_url text        NOT NULL,
      branch         text        NOT NULL,
      requested_by   text        NOT NULL,
      wave_size      integer     NOT NULL,
      waves          jsonb       NOT NULL,
      clusters       jsonb       NOT NULL,
      state          text        NOT NULL,
      failure        jsonb,
      created_at     timestamptz NOT NULL,
      finished_at    timestamptz
    )`,
    `CREATE INDEX upgrade_rollouts_created_at ON upgrade_rollouts (created_at DESC)`,
  ],
};
