/**
 * What every renderer of the Flux graph draws, whatever the format: the
 * Kustomizations, the placeholders for dependencies absent from the cluster,
 * the dependsOn edges (marked when on a loop) and the lines of each node's
 * label. The renderers only write it in their syntax, so Mermaid, DOT, JSON
 * and SVG always agree on what is in the picture and in which order.
 */
import { refKey, type FluxGraph, type FluxNode } from './flux-graph.js';
import { findCycles } from './topo-sort.js';

/** Flux's default namespace; names in it are shown without the prefix. */
const DEFAULT_NAMESPACE = 'flux-system';

/** One dependsOn, from the dependency to the dependent, so a picture reads in apply order. */
export interface GraphViewEdge {
  /** `namespace/name` of the dependency; may be a {@link GraphView.missing} key. */
  readonly from: string;
  /** `namespace/name` of the dependent. */
  readonly to: string;
  /** The edge lies on a dependsOn loop. */
  readonly onCycle: boolean;
}

/** The text of a node's box: a title, a detail line, then one line per check. */
export interface GraphViewLabel {
  /** The name, without the namespace when that is flux-system. */
  readonly title: string;
  /** `spec.path` (`(no path)` when empty), or `not in this cluster` for a placeholder. */
  readonly detail: string;
  /** `✓ Kind/name` per health check, then `✓ wait: all resources` when `spec.wait` is set. */
  readonly checks: readonly string[];
}

/** A Flux graph prepared for drawing. */
export interface GraphView {
  /** The Kustomizations sorted by `namespace/name`; of a duplicated key, the first. */
  readonly nodes: readonly FluxNode[];
  /** The keys of {@link nodes}. */
  readonly known: ReadonlySet<string>;
  /** Keys that a dependsOn names but no Kustomization has, sorted. */
  readonly missing: readonly string[];
  /** Every key drawn, Kustomizations and placeholders together, sorted. */
  readonly keys: readonly string[];
  /** One per distinct dependsOn of each node, sorted by (from, to). */
  readonly edges: readonly GraphViewEdge[];
  /** {@link findCycles} of {@link nodes}. */
  readonly cycles: readonly (readonly string[])[];
}

/**
 * Prepares the graph for drawing. Deterministic: the same graph, in any input
 * order, yields the same view. Code-unit order, not localeCompare, so the
 * machine's locale cannot change it.
 */
export function graphViewOf(graph: FluxGraph): GraphView {
  const nodes = uniqueNodes(graph.nodes);
  const known = new Set(nodes.map(refKey));
  const cycles = findCycles(nodes);
  const onCycle = new Set<string>();
  for (const cycle of cycles) {
    // A loop reads in dependsOn direction; edges point from dependency to dependent.
    for (let i = 0; i + 1 < cycle.length; i++) onCycle.add(edgeKey(cycle[i + 1]!, cycle[i]!));
  }
  const edges = nodes
    .flatMap((node) => dependencyKeys(node).map((from) => ({ from, to: refKey(node), onCycle: onCycle.has(edgeKey(from, refKey(node))) })))
    .sort((a, b) => compareKeys(a.from, b.from) || compareKeys(a.to, b.to));
  const missing = [...new Set(edges.map((e) => e.from).filter((k) => !known.has(k)))].sort(compareKeys);
  return { nodes, known, missing, keys: [...known, ...missing].sort(compareKeys), edges, cycles };
}

/** The keys a node depends on, deduplicated and sorted. */
export function dependencyKeys(node: FluxNode): string[] {
  return [...new Set(node.dependsOn.map(refKey))].sort(compareKeys);
}

/** The label line of a suspended Kustomization (`spec.suspend: true`). */
export const SUSPENDED_LINE = '⏸ suspended: applies nothing until resumed';

/** The label of a Kustomization's box. */
export function nodeLabel(node: FluxNode): GraphViewLabel {
  const checks = node.healthChecks.map((check) => `✓ ${check.kind}/${check.name}`);
  // Suspended is a state, not a failure: the opt-in layer waits to be resumed.
  if (node.suspended) checks.unshift(SUSPENDED_LINE);
  if (node.wait) checks.push('✓ wait: all resources');
  return { title: displayName(refKey(node)), detail: node.path || '(no path)', checks };
}

/** The label of the placeholder for a {@link GraphView.missing} key. */
export function missingLabel(key: string): GraphViewLabel {
  return { title: displayName(key), detail: 'not in this cluster', checks: [] };
}

/**
 * `candidate`, or `candidate<separator>2`, `…3`, … for the first not in
 * `taken`; the result is added to `taken`. Keeps the ids a renderer derives from
 * keys unique when two keys look alike once reduced to an id's characters.
 */
export function claimUniqueId(candidate: string, taken: Set<string>, separator: string): string {
  let id = candidate;
  for (let n = 2; taken.has(id); n++) id = `${candidate}${separator}${n}`;
  taken.add(id);
  return id;
}

/** Code-unit order of two keys. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function displayName(key: string): string {
  const prefix = `${DEFAULT_NAMESPACE}/`;
  return key.startsWith(prefix) ? key.slice(prefix.length) : key;
}

function uniqueNodes(nodes: readonly FluxNode[]): FluxNode[] {
  const byKey = new Map<string, FluxNode>();
  for (const node of nodes) if (!byKey.has(refKey(node))) byKey.set(refKey(node), node);
  return [...byKey.values()].sort((a, b) => compareKeys(refKey(a), refKey(b)));
}

function edgeKey(from: string, to: string): string {
  return `${from}\n${to}`;
}
