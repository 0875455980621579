/**
 * Migration 2: a cluster's catalog attributes (role, infrastructure and DNS
 * provider), optional, so a retry or a reconciled run renders the same layers.
 */
import type { Migration } from '../migrate.js';

/** Adds nullable `cluster_role`, `cluster_infra_provider`, `cluster_dns_provider` to `scaffold_runs`. */
export const clusterAttributesMigration: Migration = {
  version: 2,
  name: 'cluster-attributes',
  statements: [
    `ALTER TABLE scaffold_runs ADD COLUMN cluster_role text`,
    `ALTER TABLE scaffold_runs ADD COLUMN cluster_infra_provider text`,
    `ALTER TABLE scaffold_runs ADD COLUMN cluster_dns_provider text`,
  ],
};
