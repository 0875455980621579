/**
 * Mermaid flowchart of a cluster's Flux dependency graph, for Markdown that
 * GitHub, GitLab and most wikis render in place.
 */
import { refKey, type FluxGraph } from './flux-graph.js';
import { claimUniqueId, graphViewOf, missingLabel, nodeLabel, type GraphViewLabel } from './graph-view.js';

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
  const { nodes, missing, keys, edges } = graphViewOf(graph);

  const taken = new Set<string>();
  const ids = new Map<string, string>();
  for (const key of keys) ids.set(key, claimUniqueId(`k_${key.replace(/[^A-Za-z0-9_]/g, '_')}`, taken, '_'));

  const lines = ['flowchart TD'];
  for (const node of nodes) lines.push(`  ${ids.get(refKey(node))!}["${labelText(nodeLabel(node))}"]`);
  for (const key of missing) lines.push(`  ${ids.get(key)!}["${labelText(missingLabel(key))}"]:::missing`);
  edges.forEach(({ from, to }) => lines.push(`  ${ids.get(from)!} --> ${ids.get(to)!}`));
  if (missing.length > 0) lines.push('  classDef missing stroke-dasharray: 5 5,color:#616161');
  const cycleLinks = edges.flatMap(({ onCycle }, index) => (onCycle ? [index] : []));
  if (cycleLinks.length > 0) lines.push(`  linkStyle ${cycleLinks.join(',')} stroke:#c62828,stroke-width:2px`);
  return `${lines.join('\n')}\n`;
}

function labelText(label: GraphViewLabel): string {
  return [label.title, label.detail, ...label.checks].map(escapeLabel).join('<br/>');
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
