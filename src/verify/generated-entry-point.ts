/**
 * A cluster path without a kustomization file gets one from Flux that takes in
 * every directory holding a kustomization file (see
 * flux-generated-kustomization.ts). When such a directory is also the path of
 * one of the cluster's Flux Kustomizations, its objects are applied twice: by
 * the sync of the cluster path, without that Kustomization's postBuild
 * substitution, dependsOn or health checks, and by the Kustomization itself,
 * two owners pruning each other's objects. A generated tree whose entry point
 * was deleted looks exactly like that.
 */
import type { Finding } from './finding.js';

/** One Flux Kustomization of the cluster whose path resolved. */
export interface KustomizationPath {
  /** `namespace/name`. */
  readonly key: string;
  /** The file it is written in. */
  readonly file: string;
  /** Its spec.path as a repository directory. */
  readonly dir: string;
}

/** Findings for directories both the generated entry point and a Kustomization apply. */
export function checkGeneratedEntryPoint(clusterDir: string, generatedRoots: readonly string[], kustomizations: readonly KustomizationPath[]): Finding[] {
  const roots = new Set(generatedRoots);
  return kustomizations
    .filter((k) => roots.has(k.dir))
    .map((k) => ({
      file: k.file,
      object: `Kustomization ${k.key}`,
      message: `${k.dir} is applied twice: ${clusterDir} has no kustomization file, so Flux's sync of it takes in every directory with one, this path included; give ${clusterDir} a kustomization.yaml listing only what the sync applies`,
    }));
}
