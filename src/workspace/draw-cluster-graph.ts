/**
 * A cluster's Flux dependency graph, as Flux sees it: the objects
 * `kubectl kustomize clusters/<name>` yields (the entry point lists only the
 * Flux objects), drawn from their dependsOn. A cluster path without a
 * kustomization file (a public Flux repository's) is built as Flux generates it.
 */
import { NotFoundError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { fluxPathBuilder } from '../verify/flux-path-build.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { fluxGraphOf, type FluxGraph } from '../graph/flux-graph.js';
import { renderGraph, type GraphFormat } from '../graph/graph-format.js';
import { ValidationError } from '../errors.js';

/**
 * Reads the graph of `clusters/<cluster>` in the working tree at `dir`.
 * @throws ValidationError for a bad cluster name or a tree that does not build
 * @throws NotFoundError when the cluster has no Flux Kustomization
 */
export async function clusterGraph(dir: string, cluster: string): Promise<FluxGraph> {
  const name = clusterNameSchema.safeParse(cluster);
  if (!name.success) throw new ValidationError([{ field: '--cluster', message: name.error.issues[0]!.message }]);
  const build = fluxPathBuilder({ reader: new FsRepoReader(dir), builder: new KubectlKustomize(), repoRoot: dir });
  const built = await build(`clusters/${name.data}`);
  if (!built.ok) throw new ValidationError(built.error);
  const graph = fluxGraphOf(built.objects.map((object) => ({ object })));
  if (graph.nodes.length === 0) throw new NotFoundError(`clusters/${name.data} has no Flux Kustomization`);
  return graph;
}

/** Draws the graph of `clusters/<cluster>` in `format`. */
export async function drawClusterGraph(dir: string, cluster: string, format: GraphFormat): Promise<string> {
  return renderGraph(await clusterGraph(dir, cluster), format);
}
