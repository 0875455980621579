/**
 * Mermaid flowchart of a cluster's Flux dependency graph, for Markdown that
 * GitHub, GitLab and most wikis render in place.
 */
import { refKey, type FluxGraph, type FluxNode } from './flux-graph.js';
import { findCycles } from './topo-sort.js';

/** Flux's default namespace; names in it are shown without the prefix. */
const DEFAULT_NAMESPACE = 'flux-system';

/**
 * Renders the graph as a Mermaid `flowchart TD`: one node per Kustomization
 * labelled with its name, `spec.path` and one `✓ Kind/name` line per health
 * check (`✓ wait: all resources` when `spec.wait` is set), lines joined by
 * `<br/>`; one `dependency --> dependent` edge per dependsOn, so the chart reads
 * top-down in apply order.
 *
 * - Node ids are `k_` plus `namespace_name` with every character outside
 *   `[A-Za-z0-9_]` replaced by `_` (the prefix keeps ids clear of Mermaid
 *   keywords such as `end` and of the `o`/`x` edge heads); a suffix keeps them
 *   unique when two names collide after that.
 * - Labels are double-quoted, and every character Mermaid could read as syntax
 *   (`"`, `#`, `&`, `<`, `>`, brackets, braces, parentheses, `|`, `;`, backtick) is
 *   written as a Mermaid entity code (`#34;`), so no name breaks the chart.
 * - A dependsOn on a Kustomization absent from the graph is drawn as a dashed
 *   node (class `missing`); edges on a dependsOn loop are drawn red with
 *   `linkStyle`. Nothing fails: the chart is how a loop is found.
 * - Deterministic: nodes sorted by `namespace/name`, edges by (from, to); the
 *   same graph yields byte-identical text, ending with a newline. A duplicated
 *   `namespace/name` is drawn once (the first).
 *
 * @example
 * ```
 * flowchart TD
 *   k_flux_system_apps["apps<br/>./clusters/eu-prod-1/apps<br/>✓ HelmRelease/podinfo"]
 *   k_flux_system_infrastructure["infrastructure<br/>./clusters/eu-prod-1/infrastructure"]
 *   k_flux_system_infrastructure --> k_flux_system_apps
 * ```
 */
export function renderMermaid(graph: FluxGraph): string {
  const nodes = uniqueNodes(graph.nodes);
  const known = new Set(nodes.map(refKey));
  const edges = nodes
    .flatMap((node) => [...new Set(node.dependsOn.map(refKey))].map((from) => ({ from, to: refKey(node) })))
    .sort((a, b) => compare(a.from, b.from) || compare(a.to, b.to));
  const missing = [...new Set(edges.map((e) => e.from).filter((k) => !known.has(k)))].sort(compare);

  const onCycle = new Set<string>();
  for (const cycle of findCycles(nodes)) {
    // A loop reads in dependsOn direction; edges point from dependency to dependent.
    for (let i = 0; i + 1 < cycle.length; i++) onCycle.add(`${cycle[i + 1]!}\n${cycle[i]!}`);
  }

  const taken = new Set<string>();
  const ids = new Map<string, string>();
  for (const key of [...known, ...missing].sort(compare)) {
    const candidate = `k_${key.replace(/[^A-Za-z0-9_]/g, '_')}`;
    let id = candidate;
    for (let n = 2; taken.has(id); n++) id = `${candidate}_${n}`;
    taken.add(id);
    ids.set(key, id);
  }

  const lines = ['flowchart TD'];
  for (const node of nodes) lines.push(`  ${ids.get(refKey(node))!}["${labelOf(node)}"]`);
  for (const key of missing) lines.push(`  ${ids.get(key)!}["${escapeLabel(displayName(key))}<br/>not in this cluster"]:::missing`);
  edges.forEach(({ from, to }) => lines.push(`  ${ids.get(from)!} --> ${ids.get(to)!}`));
  if (missing.length > 0) lines.push('  classDef missing stroke-dasharray: 5 5,color:#616161');
  const cycleLinks = edges.flatMap(({ from, to }, index) => (onCycle.has(`${from}\n${to}`) ? [index] : []));
  if (cycleLinks.length > 0) lines.push(`  linkStyle ${cycleLinks.join(',')} stroke:#c62828,stroke-width:2px`);
  return `${lines.join('\n')}\n`;
}

function labelOf(node: FluxNode): string {
  const lines = [displayName(refKey(node)), node.path || '(no path)'];
  for (const check of node.healthChecks) lines.push(`✓ ${check.kind}/${check.name}`);
  if (node.wait) lines.push('✓ wait: all resources');
  return lines.map(escapeLabel).join('<br/>');
}

function displayName(key: string): string {
  const prefix = `${DEFAULT_NAMESPACE}/`;
  return key.startsWith(prefix) ? key.slice(prefix.length) : key;
}

/**
 * Writes a character Mermaid could read as syntax as its entity code: `#34;`
 * for `"`. Mermaid turns `#<decimal>;` back into the character when it draws
 * the label (https://mermaid.js.org/syntax/flowchart.html#entity-codes-to-escape-characters).
 * Control characters, which would end the statement, become spaces.
 */
function escapeLabel(text: string): string {
  return [...text]
    .map((c) => {
      const code = c.charCodeAt(0);
      if (code < 0x20 || code === 0x7f) return ' ';
      return MERMAID_SPECIAL.has(c) ? `#${code};` : c;
    })
    .join('');
}

const MERMAID_SPECIAL = new Set(['"', '#', '&', '<', '>', '[', ']', '(', ')', '{', '}', '|', '`', ';']);

function uniqueNodes(nodes: readonly FluxNode[]): FluxNode[] {
  const byKey = new Map<string, FluxNode>();
  for (const node of nodes) if (!byKey.has(refKey(node))) byKey.set(refKey(node), node);
  return [...byKey.values()].sort((a, b) => compare(refKey(a), refKey(b)));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
