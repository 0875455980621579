/**
 * `generate-gitops-env verify`: checks a tree before it is pushed.
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { NotFoundError } from '../errors.js';
import { parseReferenceName } from '../model/cluster-spec.js';
import type { verifyWorkTree as VerifyWorkTree } from '../workspace/verify-work-tree.js';
import { EXIT_FAILURE, EXIT_OK } from '../exit-codes.js';
import { parseTargetFlux } from '../verify/flux-version.js';
import { existingDirectory, say } from './cli-io.js';
import { formatData, outputOption, type OutputFormat } from './output-format.js';

/** Loaded when the command runs: `--help` and `--version` load none of it. */
const verifyWorkTree: typeof VerifyWorkTree = async (...args) => (await import('../workspace/verify-work-tree.js')).verifyWorkTree(...args);

/** Adds `verify` to `program`. */
export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description('Check a tree before it is pushed: exit 0 when consistent, 1 with one finding a line.')
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .option('--cluster <name>', 'only this cluster (default: every cluster under clusters/)')
    .option('--target-flux <version>', "the Flux minor version the clusters run, e.g. 2.8 or 2.9 (default: scaffold.yaml's targetFlux, else 2.9)")
    .addOption(outputOption())
    .action(async (opts: { repo: string; cluster?: string; targetFlux?: string; output: OutputFormat }) => {
      const repo = await existingDirectory(opts.repo);
      // A cluster that is not there is bad input (exit 2, as `remove` says it), not a finding about a tree.
      if (opts.cluster !== undefined) {
        const gitopsPath = `clusters/${parseReferenceName(opts.cluster, '--cluster')}`;
        const info = await lstat(join(repo, gitopsPath)).catch(() => undefined);
        if (info?.isDirectory() !== true) throw new NotFoundError(`${gitopsPath} does not exist in the repository`);
      }
      const report = await verifyWorkTree(repo, {
        ...(opts.cluster !== undefined ? { cluster: opts.cluster } : {}),
        ...(opts.targetFlux !== undefined ? { targetFlux: parseTargetFlux(opts.targetFlux, '--target-flux') } : {}),
      });
      if (opts.output === 'text') {
        for (const finding of report.findings) process.stdout.write(`${finding}\n`);
        for (const note of report.notes) say(`note: ${note}`);
        say(`==> ${report.summary}`);
      } else {
        const data = {
          ok: report.findings.length === 0,
          findings: report.findings,
          notes: report.notes,
          kustomizationsChecked: report.kustomizationsChecked,
          summary: report.summary,
        };
        process.stdout.write(formatData(data, opts.output));
      }
      process.exitCode = report.findings.length > 0 ? EXIT_FAILURE : EXIT_OK;
    });
}
