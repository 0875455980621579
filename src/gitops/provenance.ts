/**
 * Provenance: one small file per generated cluster recording what its tree was
 * rendered from, so a later run (or a person) can tell what changed. It holds
 * no timestamp on purpose: re-rendering the same inputs must give the same bytes.
 */
import { parseDocument } from 'yaml';
import type { ClusterSpec } from '../model/cluster-spec.js';
import { toYaml } from './yaml.js';

/** The file, relative to the cluster directory. Not listed by any kustomization, so never applied. */
export const PROVENANCE_FILE = 'provenance.yaml';

/** The recorded facts. */
export interface Provenance {
  readonly generatorVersion: string;
  readonly reference: string;
  /** The newest commit that touched the platform (base/, the reference, scaffold.yaml), or `unknown`. */
  readonly platformCommit: string;
  readonly pass: 'infrastructure' | 'all';
  readonly cluster: ClusterSpec;
}

/** Serializes provenance. */
export function renderProvenance(provenance: Provenance): string {
  return toYaml(
    {
      generator: 'gitops-scaffolder',
      generatorVersion: provenance.generatorVersion,
      reference: provenance.reference,
      platformCommit: provenance.platformCommit,
      pass: provenance.pass,
      cluster: {
        name: provenance.cluster.name,
        domain: provenance.cluster.domain,
        region: provenance.cluster.region,
        // The catalog attributes it was rendered with, given or defaulted: a later
        // render that gives none keeps them.
        ...(provenance.cluster.role !== undefined ? { role: provenance.cluster.role } : {}),
        ...(provenance.cluster.infra_provider !== undefined ? { infra_provider: provenance.cluster.infra_provider } : {}),
        ...(provenance.cluster.dns_provider !== undefined ? { dns_provider: provenance.cluster.dns_provider } : {}),
      },
    },
    'What this cluster tree was rendered from. Written by gitops-scaffolder; not applied to the cluster.',
  );
}

/** Reads provenance back; undefined when absent or unreadable (treated as a first render). */
export function parseProvenance(text: string | undefined): Provenance | undefined {
  if (text === undefined) return undefined;
  const value = parseDocument(text).toJS() as Partial<Provenance> | null;
  if (!value || (value.pass !== 'infrastructure' && value.pass !== 'all')) return undefined;
  return value as Provenance;
}
