/**
 * Migration 10: a failed run keeps what kind of failure ended it (the runner's
 * error code) and whether running it again may succeed, so a caller can retry
 * an unreachable remote and stop on a validation failure without parsing the
 * message. Both are set together, and only on failed runs; older failed rows
 * keep NULL (unknown).
 */
import type { Migration } from '../migrate.js';

/** Adds nullable `error_code` (text) and `transient` (boolean) to `scaffold_runs`, set together on failed runs only. */
export const runFailureMigration: Migration = {
  version: 10,
  name: 'run-failure',
  statements: [
    `ALTER TABLE scaffold_runs ADD COLUMN error_code text`,
    `ALTER TABLE scaffold_runs ADD COLUMN transient boolean`,
    `ALTER TABLE scaffold_runs ADD CONSTRAINT scaffold_runs_failure_check
       CHECK ((error_code IS NULL) = (transient IS NULL) AND (error_code IS NULL OR status = 'failed'))`,
  ],
};
