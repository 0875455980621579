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
  /**
   * Every file the render wrote, relative to the cluster directory, sorted,
   * provenance itself left out. The next render removes exactly those of them it
   * no longer produces and keeps everything else (flux bootstrap's flux-system/).
   * Undefined when read back from a generator that did not record it.
   */
  readonly files?: readonly string[];
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
        // The optional layers it resumes: a later render that names none keeps them.
        ...(provenance.cluster.enable_layers?.length ? { enable_layers: [...provenance.cluster.enable_layers] } : {}),
      },
      ...(provenance.files !== undefined ? { files: [...provenance.files].filter((f) => f !== PROVENANCE_FILE).sort(compare) } : {}),
    },
    'What this cluster tree was rendered from. Written by gitops-scaffolder; not applied to the cluster.',
  );
}

/** Code-unit order, independent of locale, so the file is the same bytes everywhere. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A recorded file name that stays inside the cluster directory. */
function isInsidePath(path: unknown): path is string {
  return (
    typeof path === 'string' &&
    path !== '' &&
    !path.startsWith('/') &&
    !path.includes('\\') &&
    path.split('/').every((s) => s !== '' && s !== '.' && s !== '..')
  );
}

/**
 * Reads provenance back; undefined when absent or unreadable (treated as a first render).
 * `files` is kept only when it is a list; entries that would leave the cluster
 * directory are dropped, so a hand-edited file can never make a render delete
 * outside it.
 */
export function parseProvenance(text: string | undefined): Provenance | undefined {
  if (text === undefined) return undefined;
  let value: (Partial<Omit<Provenance, 'files'>> & { files?: unknown }) | null;
  try {
    value = parseDocument(text).toJS() as typeof value;
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object' || (value.pass !== 'infrastructure' && value.pass !== 'all')) return undefined;
  const { files, ...rest } = value;
  return { ...(rest as Omit<Provenance, 'files'>), ...(Array.isArray(files) ? { files: files.filter(isInsidePath) } : {}) };
}
