/**
 * `gitops-scaffolder scaffold`: the embedded main job. One whole scaffold in
 * this process, against a local bare repository seeded with the reference
 * platform, with no cluster, no external database and no network.
 */
import type { Command } from 'commander';
import type { ScaffoldFlags } from './run-scaffold-command.js';
import { REFERENCE_ENVIRONMENT, DEFAULT_BRANCH } from './model/defaults.js';

/** Adds the `scaffold` subcommand to the service's program. */
export function registerScaffoldCommand(program: Command): void {
  program
    .command('scaffold')
    .description('Run one whole scaffold here (embedded defaults: a local bare repository, a local stand-in sealing key)')
    .requiredOption('--cluster <name>', 'the new cluster (DNS-1123 label)')
    .requiredOption('--domain <domain>', "the cluster's DNS domain")
    .requiredOption('--region <region>', "the cluster's region")
    .option('--reference <name>', 'reference environment', REFERENCE_ENVIRONMENT)
    .option('--data-dir <dir>', 'where the local repository and key live', process.env.DATA_DIR ?? '.gitops-scaffolder')
    .option('--repo-url <url>', 'push here instead of the local repository')
    .option('--branch <branch>', 'branch', DEFAULT_BRANCH)
    .option('--cert <pem-file>', 'seal with this certificate instead of the local stand-in key')
    .option('--registry-auth <file>', 'a .dockerconfigjson to use as the registry pull secret')
    .option('--notification-provider <type>', "where Flux's failures are sent: slack, msteams or generic (with --notification-address-file)")
    .option('--notification-address-file <file>', "a file holding the Provider's webhook URL (https://), sealed like every credential")
    .option('--rotate-credentials', 'seal fresh credentials even where sealed ones exist', false)
    .action(async (flags: ScaffoldFlags) => {
      // Loaded when the command runs: `--help` and `--version` load none of the generator.
      const { runScaffoldCommand } = await import('./run-scaffold-command.js');
      await runScaffoldCommand(flags);
    });
}
