/**
 * `generate-gitops-env graph`: a cluster's Flux dependency graph.
 */
import { Option, type Command } from 'commander';
import type { drawClusterGraph as DrawClusterGraph } from '../workspace/draw-cluster-graph.js';
import { ValidationError } from '../errors.js';
import { GRAPH_FORMATS, type GraphFormat } from '../graph/graph-format.js';
import { existingDirectory } from './cli-io.js';

/** The graph renderer (Graphviz compiled to WebAssembly, kustomize) loads only when a graph is drawn. */
const drawClusterGraph: typeof DrawClusterGraph = async (...args) => (await import('../workspace/draw-cluster-graph.js')).drawClusterGraph(...args);
import { formatData, outputOption, type OutputFormat } from './output-format.js';

/** Adds `graph` to `program`. */
export function registerGraphCommand(program: Command): void {
  program
    .command('graph')
    .description("Draw a cluster's Flux dependency graph (from dependsOn).")
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--cluster <name>', 'cluster name')
    .addOption(new Option('--format <format>', 'picture format (default: mermaid)').choices(GRAPH_FORMATS))
    .addOption(outputOption())
    .action(async (opts: { repo: string; cluster: string; format?: GraphFormat; output: OutputFormat }) => {
      if (opts.format !== undefined && opts.output !== 'text') {
        throw new ValidationError([{ field: '--output', message: `-o ${opts.output} prints the graph as data: drop --format ${opts.format}` }]);
      }
      if (opts.output === 'text') {
        process.stdout.write(await drawClusterGraph(await existingDirectory(opts.repo), opts.cluster, opts.format ?? 'mermaid'));
        return;
      }
      // The JSON picture is already the graph as data; YAML is the same document.
      const data: unknown = JSON.parse(await drawClusterGraph(await existingDirectory(opts.repo), opts.cluster, 'json'));
      process.stdout.write(formatData(data, opts.output));
    });
}
