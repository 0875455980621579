/**
 * The fleet as the repository records it: every directory under `clusters/`
 * with what its `provenance.yaml` says (generator, reference, the platform
 * commit it was rendered from, identity and catalog attributes) and whether it
 * is behind the current reference. Pure apart from reading the repository
 * through the RepoReader port; the run history is the service's to add.
 */
import { parseProvenance, PROVENANCE_FILE, type Provenance } from '../gitops/provenance.js';
import type { RepoReader } from '../gitops/repo-reader.js';

/**
 * `generated`: rendered by gitops-scaffolder (has provenance). `reference`: the
 * template every cluster is rendered from. `unmanaged`: a directory under
 * `clusters/` without provenance (written by hand or by another tool).
 */
export type ClusterKind = 'generated' | 'reference' | 'unmanaged';

/**
 * `up_to_date`: rendered from the current platform commit. `behind`: from an
 * older one. `unknown`: the current commit or the recorded one is not known
 * (no git history, or a render outside a repository). `not_applicable`: the
 * reference itself and unmanaged directories.
 */
export type ClusterFreshness = 'up_to_date' | 'behind' | 'unknown' | 'not_applicable';

/** One cluster of the fleet. */
export interface ClusterEntry {
  readonly name: string;
  readonly kind: ClusterKind;
  /** `clusters/<name>`: the path Flux is pointed at. */
  readonly gitopsPath: string;
  /** Identity and catalog attributes, as recorded; only the name for an unmanaged directory. */
  readonly attributes: {
    readonly domain?: string;
    readonly region?: string;
    readonly role?: string;
    readonly infraProvider?: string;
    readonly dnsProvider?: string;
    /** The opt-in layers the cluster resumed (`enable_layers`); absent when none. */
    readonly enableLayers?: readonly string[];
  };
  /** What provenance.yaml records; undefined for the reference and unmanaged directories. */
  readonly provenance?: Pick<Provenance, 'generatorVersion' | 'reference' | 'platformCommit' | 'pass' | 'files'>;
  readonly freshness: ClusterFreshness;
  /** The platform commit it was rendered from, when `behind`. */
  readonly renderedFrom?: string;
}

/** What the registry compares against. */
export interface ClusterRegistryOptions {
  /** The reference environment of this service or CLI. */
  readonly reference: string;
  /**
   * The newest commit that touched the platform (base/, the reference,
   * scaffold.yaml): `platformCommitOf`. Undefined when unknown.
   */
  readonly platformCommit?: string;
}

const UNKNOWN_COMMIT = 'unknown';

/** Whether a cluster rendered from `provenance` is behind `platformCommit`. */
export function freshnessOf(provenance: Pick<Provenance, 'platformCommit'>, platformCommit: string | undefined): ClusterFreshness {
  if (platformCommit === undefined || provenance.platformCommit === UNKNOWN_COMMIT || typeof provenance.platformCommit !== 'string') return 'unknown';
  return provenance.platformCommit === platformCommit ? 'up_to_date' : 'behind';
}

/** The entry of one cluster directory, from its provenance text (undefined when it has none). */
export function clusterEntryOf(name: string, provenanceText: string | undefined, options: ClusterRegistryOptions): ClusterEntry {
  const gitopsPath = `clusters/${name}`;
  if (name === options.reference) return { name, kind: 'reference', gitopsPath, attributes: {}, freshness: 'not_applicable' };
  const provenance = parseProvenance(provenanceText);
  if (provenance === undefined || typeof provenance.cluster !== 'object' || provenance.cluster === null) {
    return { name, kind: 'unmanaged', gitopsPath, attributes: {}, freshness: 'not_applicable' };
  }
  const { cluster } = provenance;
  const freshness = freshnessOf(provenance, options.platformCommit);
  return {
    name,
    kind: 'generated',
    gitopsPath,
    attributes: {
      ...(typeof cluster.domain === 'string' ? { domain: cluster.domain } : {}),
      ...(typeof cluster.region === 'string' ? { region: cluster.region } : {}),
      ...(typeof cluster.role === 'string' ? { role: cluster.role } : {}),
      ...(typeof cluster.infra_provider === 'string' ? { infraProvider: cluster.infra_provider } : {}),
      ...(typeof cluster.dns_provider === 'string' ? { dnsProvider: cluster.dns_provider } : {}),
      ...(enableLayersOf(cluster.enable_layers) ?? {}),
    },
    provenance: {
      generatorVersion: String(provenance.generatorVersion ?? UNKNOWN_COMMIT),
      reference: String(provenance.reference ?? UNKNOWN_COMMIT),
      platformCommit: String(provenance.platformCommit ?? UNKNOWN_COMMIT),
      pass: provenance.pass,
      ...(provenance.files !== undefined ? { files: provenance.files } : {}),
    },
    freshness,
    ...(freshness === 'behind' ? { renderedFrom: provenance.platformCommit } : {}),
  };
}

/** A hand-edited provenance may hold anything: only a list of names counts. */
function enableLayersOf(value: unknown): { enableLayers: string[] } | undefined {
  if (!Array.isArray(value)) return undefined;
  const names = value.filter((name): name is string => typeof name === 'string');
  return names.length > 0 ? { enableLayers: names } : undefined;
}

/** The names of the directories directly under `clusters/`, sorted. */
export async function clusterNamesOf(reader: RepoReader): Promise<string[]> {
  const names = new Set<string>();
  for (const path of await reader.list('clusters')) {
    const parts = path.split('/');
    if (parts.length >= 3) names.add(parts[1]!);
  }
  return [...names].sort(compare);
}

/**
 * Every cluster under `clusters/`, sorted by name. Only each cluster's
 * provenance.yaml is read, so the cost is one small file per cluster.
 */
export async function readClusterRegistry(
  reader: RepoReader,
  options: ClusterRegistryOptions & {
    /** The directories under `clusters/`, when the reader holds only their provenance.yaml files. @default read from `reader` */
    readonly names?: readonly string[];
  },
): Promise<ClusterEntry[]> {
  const entries: ClusterEntry[] = [];
  for (const name of options.names !== undefined ? [...options.names].sort(compare) : await clusterNamesOf(reader)) {
    const text = name === options.reference ? undefined : await reader.read(`clusters/${name}/${PROVENANCE_FILE}`);
    entries.push(clusterEntryOf(name, text, options));
  }
  return entries;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
