/**
 * The cluster-graph port: the Flux dependency graph of the tree a run
 * produced, drawn from the run's repository at the run's last commit. Used by
 * `GET /api/v1/scaffolds/{id}/graph`; implemented by
 * `app/git-cluster-graph-source.ts`.
 */
import type { RunRecord } from '../run/run-record.js';

/** How the graph is drawn: an SVG picture, or the JSON of `generate-gitops-env graph --format json`. */
export type ClusterGraphFormat = 'svg' | 'json';

/** Draws the Flux graph of a run's cluster. */
export interface ClusterGraphSource {
  /**
   * Draws `run.gitopsPath` as it is at the run's last commit (the branch head
   * when the run pushed none).
   *
   * @throws NotFoundError when the run has no gitops_path yet, or the tree has no Flux Kustomization
   * @throws ConflictError when the tree at that commit does not build
   * @throws UnavailableError when the repository cannot be read
   */
  graph(run: RunRecord, format: ClusterGraphFormat): Promise<string>;
}
