/**
 * Migration 1: the run and run-log tables.
 *
 * Kept as a TypeScript module rather than a `.sql` file so it travels with the
 * compiled code: `tsc` does not copy `.sql` files to `dist/`, and a module needs
 * no path resolution at run time. One statement per entry, because PGlite's
 * parameterised query path accepts a single statement at a time.
 *
 * Never edit an applied migration; add the next numbered file instead.
 */
import type { Migration } from '../migrate.js';

/** Creates `scaffold_runs` and `scaffold_run_logs`. */
export const initMigration: Migration = {
  version: 1,
  name: 'init',
  statements: [
    // Ids sort bytewise (COLLATE "C") whatever the database locale, so the
    // (created_at, id) order of keyset pagination is the same on every server.
    `CREATE TABLE scaffold_runs (
      id              text        COLLATE "C" PRIMARY KEY,
      cluster_name    text        NOT NULL,
      cluster_domain  text        NOT NULL,
      cluster_region  text        NOT NULL,
      repository_url  text        NOT NULL,
      branch          text        NOT NULL,
      reference       text        NOT NULL,
      status          text        NOT NULL DEFAULT 'pending'
                      CONSTRAINT scaffold_runs_status_check
                      CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
      step            integer     NOT NULL DEFAULT 0 CHECK (step >= 0),
      step_name       text,
      message         text        NOT NULL DEFAULT '',
      job             text        NOT NULL,
      gitops_path     text,
      commits         jsonb       NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(commits) = 'array'),
      attempt         integer     NOT NULL DEFAULT 1 CHECK (attempt >= 1),
      sealing         text        NOT NULL CHECK (sealing IN ('certificate', 'kubeconfig')),
      created_by      text        NOT NULL,
      created_at      timestamptz NOT NULL,
      updated_at      timestamptz NOT NULL,
      started_at      timestamptz,
      finished_at     timestamptz,
      log_seq         integer     NOT NULL DEFAULT 0 CHECK (log_seq >= 0)
    )`,
    `COMMENT ON TABLE scaffold_runs IS 'One scaffold run per row. Holds no credential: secrets travel to the runner separately.'`,
    `COMMENT ON COLUMN scaffold_runs.log_seq IS 'Last seq handed out in scaffold_run_logs; bumped under the row lock so concurrent appends never collide.'`,
    // The rule "one active run per cluster" lives in the database, not in a
    // read-then-insert in the application: two concurrent creates race, and the
    // index makes the loser fail with a unique violation (23505).
    `CREATE UNIQUE INDEX scaffold_runs_one_active_per_cluster
       ON scaffold_runs (cluster_name)
       WHERE status IN ('pending', 'running')`,
    // Keyset pagination, newest first, with and without a cluster filter.
    `CREATE INDEX scaffold_runs_created_idx ON scaffold_runs (created_at DESC, id DESC)`,
    `CREATE INDEX scaffold_runs_cluster_created_idx ON scaffold_runs (cluster_name, created_at DESC, id DESC)`,
    `CREATE TABLE scaffold_run_logs (
      run_id  text        COLLATE "C" NOT NULL REFERENCES scaffold_runs (id) ON DELETE CASCADE,
      seq     integer     NOT NULL CHECK (seq >= 1),
      time    timestamptz NOT NULL,
      line    text        NOT NULL,
      PRIMARY KEY (run_id, seq)
    )`,
  ],
};
