/** `generate-gitops-env remove`: delete the generator's files of one cluster, nothing else, and say what Flux deletes. */
import type { Command } from 'commander';
import { existingDirectory } from './cli-io.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

const say = (line: string) => process.stderr.write(`${line}\n`);

/** Registers `remove --repo DIR --cluster NAME [--commit] [--delete-data]`. */
export function registerRemoveCommand(cli: Command): void {
  cli
    .command('remove')
    .description(
      "Delete the files gitops-scaffolder generated for one cluster (as its provenance lists them); everything else stays. Prints what the cluster's Flux then deletes: objects marked kustomize.toolkit.fluxcd.io/prune: disabled (namespaces and volumes of stateful workloads) stay unless --delete-data.",
    )
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--cluster <name>', 'the cluster to decommission')
    .option('--reference <name>', 'the reference environment (never removed)', REFERENCE_ENVIRONMENT)
    .option('--commit', 'record the removal as one commit (only the removed files are staged)', false)
    .option(
      '--delete-data',
      'also delete the data: first commit the lifting of the prune protection, then the removal (needs --commit; push the first commit and let Flux apply it before the second)',
      false,
    )
    .action(async (opts: { repo: string; cluster: string; reference: string; commit: boolean; deleteData: boolean }) => {
      // Loaded when the command runs: `--help` and `--version` load none of it.
      const { fluxEffect, removeWorkTree } = await import('../workspace/remove-work-tree.js');
      const outcome = await removeWorkTree(await existingDirectory(opts.repo), {
        cluster: opts.cluster,
        reference: opts.reference,
        commit: opts.commit,
        deleteData: opts.deleteData,
      });
      if (outcome.liftCommit !== undefined) say(`Lifted the prune protection in ${outcome.lifted?.join(', ')}: committed ${outcome.liftCommit.slice(0, 12)}.`);
      for (const path of outcome.remove) process.stdout.write(`D ${path}\n`);
      for (const path of outcome.write.keys()) process.stdout.write(`M ${path}\n`);
      say(`Removed ${outcome.remove.length} generated file(s) of ${outcome.gitopsPath}/.`);
      if (outcome.kept.length > 0) {
        say(
          `Kept ${outcome.kept.length} file(s) gitops-scaffolder did not write (or Flux's own installation): ${outcome.kept.map((p) => p.slice(outcome.gitopsPath.length + 1)).join(', ')}`,
        );
      }
      say('On the cluster, once pushed:');
      for (const line of fluxEffect(outcome)) say(`  ${line}`);
      for (const unbuilt of outcome.unbuilt ?? []) say(`  ${unbuilt.path} does not build, so what it deletes is not known: ${unbuilt.error}`);
      if (outcome.fluxBootstrap) {
        say(
          `  ${outcome.gitopsPath}/flux-system/ was written by flux bootstrap: it is the cluster's own Flux installation and is left for you (uninstall Flux on the cluster first, then delete it).`,
        );
      }
      if (outcome.liftCommit !== undefined) {
        say(
          `Data is deleted only if Flux applies ${outcome.liftCommit.slice(0, 12)} before the removal: push it, wait until the layers report it applied (flux get kustomizations), then push the removal commit.`,
        );
      } else if (!opts.deleteData && (outcome.prune ?? []).some((layer) => layer.protected.length > 0)) {
        say('Protected objects and their volumes stay on the cluster; delete them with --delete-data, or by hand.');
      }
      say(outcome.commit !== undefined ? `Committed ${outcome.commit.slice(0, 12)}.` : 'Next: commit the removal (or run with --commit).');
    });
}
