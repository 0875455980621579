/**
 * Migration 12: a run started to rotate credentials (`POST
 * /clusters/{name}/rotate`) records which values its SealedSecrets got, so
 * the run list and the run page can tell a rotation from a scaffold: it is a
 * scaffold run (action `scaffold`) by every other measure. Older rows keep
 * NULL: not a rotation, or not known to be one.
 */
import type { Migration } from '../migrate.js';

/** Adds nullable `rotation` (`same` or `fresh`) to `scaffold_runs`. */
export const runRotationMigration: Migration = {
  version: 12,
  name: 'run-rotation',
  statements: [`ALTER TABLE scaffold_runs ADD COLUMN rotation text CHECK (rotation IN ('same', 'fresh'))`],
};
