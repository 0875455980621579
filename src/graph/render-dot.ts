/**
 * Graphviz DOT of a cluster's Flux dependency graph. The SVG renderer lays this
 * text out, so the element ids and classes written here are what a web page
 * finds in the picture.
 */
import { refKey, type FluxGraph } from './flux-graph.js';
import { claimUniqueId, graphViewOf, missingLabel, nodeLabel, type GraphViewLabel } from './graph-view.js';

/**
 * Renders the graph as Graphviz DOT: `rankdir=TB`, one box per Kustomization
 * with an HTML-like label (name, `spec.path`, one `✓ Kind/name` line per health
 * check, `✓ wait: all resources` when `spec.wait` is set), and one edge per
 * dependsOn from the dependency to the dependent, so the picture reads top-down
 * in apply order.
 *
 * - Each Kustomization gets `id="node-<namespace>-<name>"` and no class of its
 *   own (so in SVG it is exactly `class="node"`); each edge gets
 *   `id="edge-<from>--<to>"`. Characters outside `[A-Za-z0-9_-]` become `-`, and
 *   a suffix keeps ids unique when two names collide after that.
 * - A dependsOn on a Kustomization that is not in the graph is drawn as a dashed
 *   box with `class="missing"`; edges on a dependsOn loop get `class="cycle"` and
 *   are drawn red. Nothing fails: the picture is how a loop is found.
 * - Names and paths are escaped for the label, and node names in the DOT are
 *   reduced to characters that DOT quoted strings cannot misread, so no name can
 *   break the syntax.
 * - Deterministic: nodes sorted by `namespace/name`, edges by (from, to); the
 *   same graph yields byte-identical text, ending with a newline. A duplicated
 *   `namespace/name` is drawn once (the first).
 */
export function renderDot(graph: FluxGraph): string {
  const { nodes, known, missing, keys, edges } = graphViewOf(graph);

  // Node and edge ids share one namespace: they end up as ids of one SVG document.
  const takenIds = new Set<string>();
  const takenNames = new Set<string>();
  const dotNames = new Map<string, string>();
  const elementIds = new Map<string, string>();
  for (const key of keys) {
    dotNames.set(key, claimUniqueId(dotName(key), takenNames, '#'));
    elementIds.set(key, claimUniqueId(`node-${slug(key)}`, takenIds, '-'));
  }

  const lines = [
    'digraph "Flux dependencies" {',
    `  graph [rankdir=TB fontname="${FONT}" nodesep=0.4 ranksep=0.6];`,
    `  node [shape=box style="rounded,filled" fillcolor="#f5f7fa" color="#3b5b8c" fontname="${FONT}" fontsize=12 margin="0.15,0.08"];`,
    `  edge [color="#3b5b8c" arrowsize=0.8];`,
  ];
  for (const node of nodes) {
    const key = refKey(node);
    // A suspended layer is drawn dashed and grey: waiting to be resumed, not failed.
    const suspended = node.suspended ? ' class="suspended" style="rounded,dashed,filled" fillcolor="#fafafa" color="#757575"' : '';
    lines.push(`  "${dotNames.get(key)!}" [id="${elementIds.get(key)!}"${suspended} label=<${htmlLabel(nodeLabel(node))}>];`);
  }
  for (const key of missing) {
    lines.push(
      `  "${dotNames.get(key)!}" [id="${elementIds.get(key)!}" class="missing" style="rounded,dashed" ` +
        `fillcolor="#ffffff" color="#9e9e9e" fontcolor="#616161" label=<${htmlLabel(missingLabel(key))}>];`,
    );
  }
  for (const { from, to, onCycle } of edges) {
    const id = claimUniqueId(`edge-${slug(from)}--${slug(to)}`, takenIds, '-');
    const cycle = onCycle ? ' class="cycle" color="#c62828" penwidth=2' : '';
    const dashed = known.has(from) ? '' : ' style=dashed color="#9e9e9e"';
    lines.push(`  "${dotNames.get(from)!}" -> "${dotNames.get(to)!}" [id="${id}"${cycle}${dashed}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

// A font Graphviz has built-in metrics for (it has no fontconfig in WebAssembly);
// its SVG writes `font-family="Helvetica,sans-Serif"`, so browsers fall back cleanly.
const FONT = 'Helvetica';
const tableOpen = '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">';

function htmlLabel(label: GraphViewLabel): string {
  const rows = [
    `<TR><TD><B>${escapeHtml(label.title)}</B></TD></TR>`,
    `<TR><TD><FONT POINT-SIZE="10">${escapeHtml(label.detail)}</FONT></TD></TR>`,
    ...label.checks.map((check) => `<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="10">${escapeHtml(check)}</FONT></TD></TR>`),
  ];
  return `${tableOpen}${rows.join('')}</TABLE>`;
}

/** XML escaping for Graphviz HTML-like labels; control characters become spaces. */
function escapeHtml(text: string): string {
  return withoutControls(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/**
 * A DOT node name for a key, to go between double quotes. Graphviz's lexer
 * only knows `\"` inside a quoted string, so a backslash before the closing
 * quote would swallow it; backslashes and control characters are replaced and
 * quotes escaped. Kubernetes names never hold these, so real names stay as
 * they are and become the SVG `<title>` of their node.
 */
function dotName(key: string): string {
  return withoutControls(key, '_').replace(/\\/g, '_').replace(/"/g, '\\"');
}

function withoutControls(text: string, replacement = ' '): string {
  return [...text].map((c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? replacement : c)).join('');
}

function slug(key: string): string {
  return key.replace(/[^A-Za-z0-9_-]/g, '-');
}
