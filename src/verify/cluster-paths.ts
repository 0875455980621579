/**
 * Where a cluster's files are: a Kustomization's `spec.path` as a repository
 * directory, the cluster's entry point, and the cluster path in the previous
 * commit.
 */
import { ValidationError } from '../errors.js';
import { KUSTOMIZATION_FILE_NAMES } from '../gitops/cluster-ownership.js';
import { assertRepoPath } from '../gitops/file-tree.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import type { ClusterHistory, ClusterSnapshot } from './cluster-history.js';
import { isRecord } from '../model/is-record.js';
import { manifestDocuments } from './manifest-documents.js';

/** `note` instead of a finding when the path is in an artifact verify cannot see. */
export type PathResolution = { readonly ok: true; readonly dir: string } | { readonly ok: false; readonly message: string; readonly note?: true };

/** The cluster's kustomization file and the resources it lists, when it has one that parses. */
export async function entryPointOf(reader: RepoReader, clusterDir: string): Promise<{ entryPoint?: { file: string; resources: string[] } }> {
  for (const name of KUSTOMIZATION_FILE_NAMES) {
    const file = `${clusterDir}/${name}`;
    const text = await reader.read(file);
    if (text === undefined) continue;
    const parsed = manifestDocuments(text);
    const first = parsed.error === undefined ? parsed.documents[0] : undefined;
    if (!isRecord(first)) return {};
    const resources = Array.isArray(first.resources) ? first.resources.filter((r): r is string => typeof r === 'string') : [];
    return { entryPoint: { file, resources } };
  }
  return {};
}

/** The cluster path in the previous commit, when the history knows it. */
export async function previousOf(history: ClusterHistory | undefined, clusterDir: string): Promise<{ previous?: ClusterSnapshot }> {
  const previous = await history?.previous(clusterDir);
  return previous !== undefined ? { previous } : {};
}

/**
 * `spec.path` as a repository directory. Flux reads it relative to the
 * source's root; here the source is this repository.
 */
export async function resolvePath(reader: RepoReader, object: Record<string, unknown>): Promise<PathResolution> {
  const raw = isRecord(object.spec) ? object.spec.path : undefined;
  if (typeof raw !== 'string' || raw.trim() === '') return { ok: false, message: 'spec.path is not set' };
  let dir = raw.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  if (dir === '') dir = '.';
  try {
    assertRepoPath(dir, 'spec.path');
  } catch (error) {
    if (error instanceof ValidationError) return { ok: false, message: error.message };
    throw error;
  }
  if (dir !== '.' && !(await reader.isDirectory(dir))) return { ok: false, message: `spec.path ${raw} does not exist` };
  return { ok: true, dir };
}
