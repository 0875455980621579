/**
 * Migration 8: a cluster is identified by (repository, branch, name), not by
 * its name alone. Two branches (or two repositories) may each hold a cluster
 * of the same name, written under different trees: a run on one must not
 * block a run on the other. The one-active-run rule moves to that key, and
 * a cluster's runs are looked up by it.
 *
 * The new index is less strict than the old one, so building it cannot fail
 * on rows the old rule admitted.
 */
import type { Migration } from '../migrate.js';

/** Replaces the per-name active-run index by one per (repository_url, branch, cluster_name); adds the matching lookup index. */
export const clusterKeyMigration: Migration = {
  version: 8,
  name: 'cluster-key',
  statements: [
    `DROP INDEX scaffold_runs_one_active_per_cluster`,
    `CREATE UNIQUE INDEX scaffold_runs_one_active_per_cluster_key
       ON scaffold_runs (repository_url, branch, cluster_name)
       WHERE status IN ('pending', 'running')`,
    `CREATE INDEX scaffold_runs_cluster_key_created_idx ON scaffold_runs (cluster_name, repository_url, branch, created_at DESC, id DESC)`,
  ],
};
