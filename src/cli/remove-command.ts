/** `generate-gitops-env remove`: delete the generator's files of one cluster, nothing else. */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { removeWorkTree } from '../workspace/remove-work-tree.js';

const say = (line: string) => process.stderr.write(`${line}\n`);

/** Registers `remove --repo DIR --cluster NAME [--commit]`. */
export function registerRemoveCommand(cli: Command): void {
  cli
    .command('remove')
    .description("Delete the files gitops-scaffolder generated for one cluster (as its provenance lists them); everything else stays.")
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--cluster <name>', 'the cluster to decommission')
    .option('--reference <name>', 'the reference environment (never removed)', 'development')
    .option('--commit', 'record the removal as one commit (only the removed files are staged)', false)
    .action(async (opts: { repo: string; cluster: string; reference: string; commit: boolean }) => {
      const outcome = await removeWorkTree(resolve(opts.repo), { cluster: opts.cluster, reference: opts.reference, commit: opts.commit });
      for (const path of outcome.remove) process.stdout.write(`D ${path}\n`);
      say(`Removed ${outcome.remove.length} generated file(s) of ${outcome.gitopsPath}/.`);
      if (outcome.kept.length > 0) {
        say(`Kept ${outcome.kept.length} file(s) gitops-scaffolder did not write: ${outcome.kept.map((p) => p.slice(outcome.gitopsPath.length + 1)).join(', ')}`);
      }
      if (outcome.fluxBootstrap) {
        say(`  ${outcome.gitopsPath}/flux-system/ was written by flux bootstrap: it is the cluster's own Flux installation and is left for you (uninstall Flux on the cluster first, then delete it).`);
      }
      say(outcome.commit !== undefined ? `Committed ${outcome.commit.slice(0, 12)}.` : 'Next: commit the removal (or run with --commit).');
    });
}
