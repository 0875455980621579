/**
 * SVG picture of a cluster's Flux dependency graph, laid out by Graphviz
 * compiled to WebAssembly (`@viz-js/viz`): pure computation, offline, no
 * `dot` binary needed.
 */
import { instance, type Viz } from '@viz-js/viz';
import { refKey, type FluxGraph } from './flux-graph.js';
import { dependencyKeys, graphViewOf } from './graph-view.js';
import { renderDot } from './render-dot.js';

/** Options of {@link renderSvg}. */
export interface RenderSvgOptions {
  /**
   * A Graphviz instance to lay out with, from `@viz-js/viz`'s `instance()`.
   * Pass one when rendering many graphs (a service, a test suite): creating an
   * instance compiles and instantiates the WebAssembly module, measured at
   * about 15–20 ms the first time in a process and 7–10 ms after, against
   * 4–20 ms for laying out a cluster's graph. A CLI drawing one picture
   * gains nothing from sharing, so the default is a fresh instance per call
   * rather than a module-level cache (the project has no module singletons).
   * @default a new instance for this call
   */
  readonly viz?: Viz;
}

const TITLE_ID = 'flux-graph-title';
const DESC_ID = 'flux-graph-desc';

/**
 * Renders the graph as a standalone SVG document: the DOT of {@link renderDot}
 * laid out top-down by Graphviz's `dot` engine.
 *
 * For a web page: each Kustomization is a `<g class="node">` with
 * `id="node-<namespace>-<name>"` and a `<title>` holding its `namespace/name`;
 * each dependsOn is a `<g class="edge">` (`class="edge cycle"` on a loop) with
 * `id="edge-<from>--<to>"`; a dependency absent from the cluster is
 * `<g class="node missing">`, a suspended one (`spec.suspend: true`) `<g class="node suspended">`. Ids are
 * written with literal `-` (Graphviz writes `&#45;`), so a plain text search for
 * `id="node-flux-system-apps"` finds them.
 *
 * For accessibility: the root `<svg>` has `role="img"` and `aria-labelledby`
 * pointing at a `<title>` and a `<desc>` that lists every Kustomization with
 * its dependencies and any dependsOn loop, in words.
 *
 * Deterministic for a given `@viz-js/viz` version: Graphviz's comments (which
 * carry its version) are dropped.
 *
 * @throws Error from Graphviz if it cannot lay out the DOT (not expected: the DOT is escaped)
 */
export async function renderSvg(graph: FluxGraph, options: RenderSvgOptions = {}): Promise<string> {
  const viz = options.viz ?? (await instance());
  const dot = renderDot(graph);
  const svg = fitLabels(viz.renderString(dot, { format: 'svg', engine: 'dot' }), measuredTexts(viz, dot));
  const accessible = `role="img" aria-labelledby="${TITLE_ID} ${DESC_ID}"`;
  return svg
    .replace(/<!--[\s\S]*?-->\n?/g, '')
    .replace(/\bid="([^"]*)"/g, (_, id: string) => `id="${id.replace(/&#45;/g, '-')}"`)
    .replace(
      /<svg\b([^>]*)>\n?/,
      (_, attributes: string) =>
        `<svg${attributes} ${accessible}>\n<title id="${TITLE_ID}">Flux dependency graph</title>\n` +
        `<desc id="${DESC_ID}">${escapeXml(describe(graph))}</desc>\n`,
    );
}

/** One text Graphviz placed, with the width it measured for it (an xdot `T` operation). */
interface MeasuredText {
  readonly text: string;
  readonly width: number;
}

/**
 * The texts of the layout in drawing order, with the widths Graphviz sized the
 * boxes by. In WebAssembly Graphviz has no fonts: it measures with its built-in
 * Helvetica metrics, while a browser without Helvetica draws the SVG's
 * `font-family="Helvetica,sans-Serif"` in its own sans-serif (DejaVu Sans on
 * Debian is some 15% wider), so labels ran out of their boxes.
 */
function measuredTexts(viz: Viz, dot: string): MeasuredText[] {
  const layout = JSON.parse(viz.renderString(dot, { format: 'json', engine: 'dot' })) as {
    objects?: readonly { _ldraw_?: readonly { op: string; text?: string; width?: number }[] }[];
  };
  return (layout.objects ?? []).flatMap((object) =>
    (object._ldraw_ ?? []).flatMap((op) =>
      op.op === 'T' && typeof op.text === 'string' && typeof op.width === 'number' ? [{ text: op.text, width: op.width }] : [],
    ),
  );
}

/**
 * Gives every `<text>` the width Graphviz measured (`textLength` with
 * `lengthAdjust="spacingAndGlyphs"`), so whichever font the viewer has, each
 * label is drawn exactly as wide as its box was made for it. A text that does
 * not match its measurement (not expected) is left as it is.
 */
function fitLabels(svg: string, measured: readonly MeasuredText[]): string {
  let next = 0;
  return svg.replace(/<text\b([^>]*)>([^<]*)<\/text>/g, (whole, attributes: string, body: string) => {
    const measure = measured[next++];
    if (measure === undefined || unescapeXml(body) !== measure.text || measure.width <= 0) return whole;
    return `<text${attributes} textLength="${measure.width}" lengthAdjust="spacingAndGlyphs">${body}</text>`;
  });
}

function unescapeXml(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-fA-F]+);/g, (_, code: string) => String.fromCodePoint(Number.parseInt(code, 16)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** The graph in words, for screen readers: who depends on whom, and the loops. */
function describe(graph: FluxGraph): string {
  // The same nodes and loops as the picture (the first of a duplicated namespace/name).
  const { nodes, cycles } = graphViewOf(graph);
  const sentences = [`${nodes.length} Flux Kustomization${nodes.length === 1 ? '' : 's'}.`];
  for (const node of nodes) {
    const deps = dependencyKeys(node);
    sentences.push(`${refKey(node)} (${node.path}) ${deps.length > 0 ? `depends on ${deps.join(', ')}` : 'has no dependencies'}.`);
  }
  for (const cycle of cycles) sentences.push(`Dependency loop: ${cycle.join(' → ')}.`);
  return sentences.join(' ');
}

function escapeXml(text: string): string {
  return [...text]
    .map((c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? ' ' : c))
    .join('')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}
