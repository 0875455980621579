/**
 * What kustomize-controller builds for a path that has no kustomization file.
 * Flux does not fail there: it generates a kustomization.yaml listing, from a
 * walk of the directory, every subdirectory that holds a kustomization file
 * (not descending into it) and every other `.yaml`/`.yml` file, each of which
 * must decode as Kubernetes objects. Public Flux repositories rely on this:
 * `flux bootstrap` points the sync at `clusters/<name>`, which usually holds
 * only flux-system/ and a few files of Flux Kustomizations.
 *
 * This is the listing; verify builds the subdirectories with kustomize and
 * reads the files as they are.
 */
import { KUSTOMIZATION_FILE_NAMES } from '../gitops/cluster-ownership.js';
import type { RepoReader } from '../gitops/repo-reader.js';

/** The resources of the kustomization Flux would generate for a directory. */
export interface GeneratedKustomization {
  /** Subdirectories holding a kustomization file, repository-relative, sorted. */
  readonly roots: readonly string[];
  /** YAML files outside them, repository-relative, sorted. */
  readonly files: readonly string[];
}

function isKustomizationFile(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return (KUSTOMIZATION_FILE_NAMES as readonly string[]).includes(name);
}

/**
 * @param dir - a repository-relative directory (`.` for the root)
 * @returns undefined when `dir` has a kustomization file of its own (kustomize builds it as it is)
 */
export async function fluxGeneratedKustomization(reader: RepoReader, dir: string): Promise<GeneratedKustomization | undefined> {
  const prefix = dir === '.' || dir === '' ? '' : `${dir}/`;
  const below = (await reader.list(dir === '.' ? '' : dir)).map((path) => path.slice(prefix.length));
  if (below.some((rel) => !rel.includes('/') && isKustomizationFile(rel))) return undefined;
  const rootDirs = new Set(below.filter((rel) => rel.includes('/') && isKustomizationFile(rel)).map((rel) => rel.slice(0, rel.lastIndexOf('/'))));
  // The walk stops at the shallowest directory with a kustomization file.
  const rootOf = (rel: string): string | undefined => {
    const parts = rel.split('/');
    for (let depth = 1; depth < parts.length; depth += 1) {
      const candidate = parts.slice(0, depth).join('/');
      if (rootDirs.has(candidate)) return candidate;
    }
    return undefined;
  };
  const roots = new Set<string>();
  const files: string[] = [];
  for (const rel of below) {
    const root = rootOf(rel);
    if (root !== undefined) roots.add(`${prefix}${root}`);
    else if (/\.ya?ml$/.test(rel)) files.push(`${prefix}${rel}`);
  }
  return { roots: [...roots].sort(compare), files: files.sort(compare) };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
