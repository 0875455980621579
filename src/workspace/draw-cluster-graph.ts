/**
 * A cluster's Flux dependency graph, as Flux sees it: the objects
 * `kubectl kustomize clusters/<name>` yields (the entry point lists only the
 * Flux objects), drawn from their dependsOn. A cluster path without a
 * kustomization file (a public Flux repository's) is built as Flux generates it.
 */
import { NotFoundError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { assertConfinedWorkTree } from '../git/work-tree-guard.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import { MaterializedKustomize } from '../kustomize/materialized-kustomize.js';
import { fluxPathBuilder } from '../verify/flux-path-build.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { fluxGraphOf, type FluxGraph } from '../graph/flux-graph.js';
import { renderGraph, type GraphFormat } from '../graph/graph-format.js';
import { ValidationError } from '../errors.js';

/**
 * Reads the graph of `clusters/<cluster>` in the working tree at `dir`, or
 * through `reader` when one is given (the service reads a clone's git objects).
 * kustomize builds a copy of the files the reader hands out, never the tree.
 * @throws ValidationError for a bad cluster name, a tree that does not build, or one whose links leave it
 * @throws NotFoundError when the cluster has no Flux Kustomization
 */
export async function clusterGraph(dir: string, cluster: string, reader?: RepoReader): Promise<FluxGraph> {
  const name = clusterNameSchema.safeParse(cluster);
  if (!name.success) throw new ValidationError([{ field: '--cluster', message: name.error.issues[0]!.message }]);
  if (reader === undefined) await assertConfinedWorkTree(dir);
  const files = reader ?? new FsRepoReader(dir);
  const builder = new MaterializedKustomize(files);
  let built;
  try {
    built = await fluxPathBuilder({ reader: files, builder, repoRoot: dir })(`clusters/${name.data}`);
  } finally {
    await builder.dispose();
  }
  if (!built.ok) throw new ValidationError(built.error);
  const graph = fluxGraphOf(built.objects.map((object) => ({ object })));
  if (graph.nodes.length === 0) throw new NotFoundError(`clusters/${name.data} has no Flux Kustomization`);
  return graph;
}

/** Draws the graph of `clusters/<cluster>` in `format`. */
export async function drawClusterGraph(dir: string, cluster: string, format: GraphFormat): Promise<string> {
  return renderGraph(await clusterGraph(dir, cluster), format);
}
