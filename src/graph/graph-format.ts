/**
 * The output formats of `generate-gitops-env graph --format` and the one place
 * that maps a format to its renderer.
 */
import { ValidationError } from '../errors.js';
import type { FluxGraph } from './flux-graph.js';
import { renderDot } from './render-dot.js';
import { renderJson } from './render-json.js';
import { renderMermaid } from './render-mermaid.js';
import { renderSvg, type RenderSvgOptions } from './render-svg.js';

/** A format the Flux dependency graph can be drawn in. */
export type GraphFormat = 'mermaid' | 'dot' | 'json' | 'svg';

/** Every {@link GraphFormat}, in the order help text lists them; the first is the CLI default. */
export const GRAPH_FORMATS: readonly GraphFormat[] = Object.freeze(['mermaid', 'dot', 'json', 'svg'] as const);

/**
 * Renders the graph in the given format: {@link renderMermaid},
 * {@link renderDot}, {@link renderJson} or {@link renderSvg}. Every result is
 * deterministic text ending with a newline; only SVG needs to be awaited, the
 * others resolve at once.
 *
 * @param options - passed to {@link renderSvg} (e.g. a shared Graphviz instance); ignored by the other formats
 * @throws ValidationError when `format` is not one of {@link GRAPH_FORMATS} (a caller outside the type system)
 */
export async function renderGraph(graph: FluxGraph, format: GraphFormat, options: RenderSvgOptions = {}): Promise<string> {
  switch (format) {
    case 'mermaid':
      return renderMermaid(graph);
    case 'dot':
      return renderDot(graph);
    case 'json':
      return renderJson(graph);
    case 'svg':
      return renderSvg(graph, options);
    default: {
      const unknown: never = format;
      throw new ValidationError([{ field: 'format', message: `unknown graph format ${JSON.stringify(unknown)}; expected one of ${GRAPH_FORMATS.join(', ')}` }]);
    }
  }
}
