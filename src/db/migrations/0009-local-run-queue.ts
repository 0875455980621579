/**
 * Migration 9: the local executor's queue in the store, so runs waiting for a
 * slot survive a crash or a restart of the service (`db/pg-run-queue.ts`).
 *
 * A row outlives its wait as a tombstone (`claimed`, `dropped`, no secrets):
 * it is what makes a repeated start of a run a no-op instead of a second run.
 * `secrets` (sealed, `db/queued-secrets-cipher.ts`) is set exactly while the
 * run waits.
 */
import type { Migration } from '../migrate.js';

/** Adds `local_run_queue` and the index claims are served from. */
export const localRunQueueMigration: Migration = {
  version: 9,
  name: 'local-run-queue',
  statements: [
    `CREATE TABLE local_run_queue (
      run_id      text        COLLATE "C" PRIMARY KEY REFERENCES scaffold_runs (id) ON DELETE CASCADE,
      seq         bigserial   NOT NULL,
      state       text        NOT NULL CHECK (state IN ('queued', 'claimed', 'dropped')),
      secrets     text,
      claimed_by  text,
      enqueued_at timestamptz NOT NULL DEFAULT now(),
      claimed_at  timestamptz,
      CHECK ((state = 'queued') = (secrets IS NOT NULL))
    )`,
    `CREATE INDEX local_run_queue_waiting_idx ON local_run_queue (seq) WHERE state = 'queued'`,
  ],
};
