/**
 * The port verification uses to run kustomize. The core only sees the built
 * YAML; `kustomize/kubectl-kustomize.ts` implements it by spawning
 * `kubectl kustomize`, the same engine Flux's kustomize-controller embeds.
 */

/** Builds a kustomization directory of a repository into multi-document YAML. */
export interface KustomizeBuilder {
  /**
   * Builds `dir` as `kustomize build` would.
   *
   * @param repoRoot - absolute path of the repository's working tree
   * @param dir - repository-relative directory holding a kustomization file
   * @param signal - aborts the build
   * @returns the built objects as multi-document YAML
   * @throws ValidationError carrying kustomize's own error text when the build fails
   */
  build(repoRoot: string, dir: string, signal?: AbortSignal): Promise<string>;
  /**
   * What besides the input files decides a build's output (the engine's
   * binary and flags), for a cache keyed by inputs; undefined when that cannot
   * be told, and a builder without it is never cached.
   */
  engine?(): Promise<string | undefined>;
}
