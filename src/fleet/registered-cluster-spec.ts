/**
 * A generated cluster's spec as its provenance records it: what an upgrade
 * renders it with, and what the run that upgrades or removes it is recorded as.
 */
import type { ClusterSpec } from '../model/cluster-spec.js';
import type { ClusterEntry } from './cluster-registry.js';

export function registeredClusterSpec(entry: Pick<ClusterEntry, 'name' | 'attributes'>): ClusterSpec {
  const { attributes } = entry;
  return {
    name: entry.name,
    domain: attributes.domain ?? '',
    region: attributes.region ?? '',
    ...(attributes.role !== undefined ? { role: attributes.role } : {}),
    ...(attributes.infraProvider !== undefined ? { infra_provider: attributes.infraProvider } : {}),
    ...(attributes.dnsProvider !== undefined ? { dns_provider: attributes.dnsProvider } : {}),
  };
}
