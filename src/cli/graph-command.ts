/**
 * `generate-gitops-env graph`: a cluster's Flux dependency graph.
 */
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { drawClusterGraph } from '../app/draw-cluster-graph.js';
import { GRAPH_FORMATS, type GraphFormat } from '../graph/graph-format.js';
import { choice } from './cli-io.js';

/** Adds `graph` to `program`. */
export function registerGraphCommand(program: Command): void {
  program
    .command('graph')
    .description("Draw a cluster's Flux dependency graph (from dependsOn).")
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--cluster <name>', 'cluster name')
    .addOption(new Option('--format <format>', 'output format').argParser(choice<GraphFormat>(GRAPH_FORMATS, '--format')).default('mermaid'))
    .action(async (opts: { repo: string; cluster: string; format: GraphFormat }) => {
      process.stdout.write(await drawClusterGraph(resolve(opts.repo), opts.cluster, opts.format));
    });
}
