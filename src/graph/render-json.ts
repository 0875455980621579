/**
 * JSON of a cluster's Flux dependency graph, for programs: a web page drawing
 * it, a pipeline checking apply order.
 */
import { refKey, type FluxGraph, type FluxNode, type HealthCheckRef } from './flux-graph.js';
import { dependencyKeys, graphViewOf } from './graph-view.js';
import { topoSort } from './topo-sort.js';

/** One Kustomization in {@link GraphJson}. */
interface GraphJsonNode {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly path: string;
  readonly dependsOn: readonly string[];
  readonly healthChecks: readonly HealthCheckRef[];
  readonly wait: boolean;
  /** Present (true) only for a Kustomization with `spec.suspend: true`. */
  readonly suspended?: boolean;
  readonly file?: string;
}

/** The document {@link renderJson} writes. */
interface GraphJson {
  readonly nodes: readonly GraphJsonNode[];
  readonly edges: readonly { readonly from: string; readonly to: string }[];
  readonly order: readonly string[];
  readonly cycles: readonly (readonly string[])[];
}

/**
 * Renders the graph as pretty-printed JSON (two-space indent, trailing newline):
 *
 * ```
 * { "nodes": [{ "id", "name", "namespace", "path", "dependsOn": [ids], "healthChecks": [...], "wait", "suspended"?, "file"? }],
 *   "edges": [{ "from": dependency id, "to": dependent id }],
 *   "order": [ids in apply order],
 *   "cycles": [[ids of one loop, first repeated last]] }
 * ```
 *
 * - An id is `namespace/name`. `dependsOn` is sorted and deduplicated; a
 *   dependsOn on a Kustomization absent from the graph stays in `dependsOn` and
 *   `edges` (so a consumer may see an id that is not in `nodes`: that is the
 *   finding `verify` reports) but does not hold up `order`.
 * - `healthChecks` are as written in the spec; `file` appears when known.
 * - `order` is {@link topoSort}'s: every id after all of its dependencies.
 * - `cycles` is always present, empty when there are none. A loop does not make
 *   this fail: `cycles` lists each one (`findCycles`, topo-sort.ts), and `order` then
 *   holds only the Kustomizations Flux can apply, leaving out those on a loop
 *   and everything that depends on them, which Flux would hold back forever.
 * - Deterministic: nodes sorted by id, edges by (from, to); the same graph yields
 *   byte-identical text. A duplicated id is listed once (the first).
 */
export function renderJson(graph: FluxGraph): string {
  const { nodes, edges, cycles } = graphViewOf(graph);
  const document: GraphJson = {
    nodes: nodes.map(jsonNode),
    edges: edges.map(({ from, to }) => ({ from, to })),
    order: topoSort(applicable(nodes, cycles)).map(refKey),
    cycles,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

function jsonNode(node: FluxNode): GraphJsonNode {
  return {
    id: refKey(node),
    name: node.name,
    namespace: node.namespace,
    path: node.path,
    dependsOn: dependencyKeys(node),
    healthChecks: node.healthChecks.map((check) => ({
      ...(check.apiVersion !== undefined ? { apiVersion: check.apiVersion } : {}),
      kind: check.kind,
      name: check.name,
      ...(check.namespace !== undefined ? { namespace: check.namespace } : {}),
    })),
    wait: node.wait,
    ...(node.suspended ? { suspended: true } : {}),
    ...(node.file !== undefined ? { file: node.file } : {}),
  };
}

/** The nodes neither on a loop nor depending, directly or not, on one. */
function applicable(nodes: readonly FluxNode[], cycles: readonly (readonly string[])[]): FluxNode[] {
  const held = new Set(cycles.flat());
  if (held.size === 0) return [...nodes];
  for (let grew = true; grew;) {
    grew = false;
    for (const node of nodes) {
      if (!held.has(refKey(node)) && node.dependsOn.some((dep) => held.has(refKey(dep)))) {
        held.add(refKey(node));
        grew = true;
      }
    }
  }
  return nodes.filter((node) => !held.has(refKey(node)));
}
