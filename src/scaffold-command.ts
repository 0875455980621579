/**
 * `gitops-scaffolder scaffold`: the embedded main job. One whole scaffold in
 * this process, against a local bare repository seeded with the reference
 * platform, with no cluster, no external database and no network.
 */
import { Command } from 'commander';
import { runLocalScaffold } from './embedded/local-scaffold.js';
import { isAppError } from './errors.js';
import { EXIT_OK, exitCodeOf } from './exit-codes.js';
import { createPinoLogger } from './pino-logger.js';
import { failedResult, StepError } from './runner/run-scaffold.js';
import { readInputFile } from './read-input-file.js';
import { assertNotificationAddress, assertNotificationProvider } from './gitops/notification-schema.js';
import { terminalOutput } from './cli/terse-run-output.js';
import { inFlagTerms } from './cli/flag-names.js';
import { REFERENCE_ENVIRONMENT, DEFAULT_BRANCH } from './model/defaults.js';

interface ScaffoldFlags {
  cluster: string;
  domain: string;
  region: string;
  reference: string;
  dataDir: string;
  repoUrl?: string;
  branch: string;
  cert?: string;
  registryAuth?: string;
  notificationProvider?: string;
  notificationAddressFile?: string;
  rotateCredentials: boolean;
}

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
      const logger = createPinoLogger({ base: { component: 'scaffold' }, ...terminalOutput() });
      const cluster = { name: flags.cluster, domain: flags.domain, region: flags.region };
      try {
        const certificatePem = flags.cert ? await readInputFile(flags.cert, '--cert') : undefined;
        const registryAuth = flags.registryAuth ? await readInputFile(flags.registryAuth, '--registry-auth') : undefined;
        const notificationAddress = flags.notificationAddressFile
          ? await readInputFile(flags.notificationAddressFile, '--notification-address-file')
          : undefined;
        const notifications =
          flags.notificationProvider !== undefined || notificationAddress !== undefined
            ? {
                provider: assertNotificationProvider(flags.notificationProvider ?? '', '--notification-provider'),
                address: assertNotificationAddress(notificationAddress ?? '', '--notification-address-file'),
              }
            : undefined;
        const result = await runLocalScaffold({
          dataDir: flags.dataDir,
          cluster,
          reference: flags.reference,
          branch: flags.branch,
          logger,
          rotateCredentials: flags.rotateCredentials,
          ...(flags.repoUrl ? { repositoryUrl: flags.repoUrl } : {}),
          ...(certificatePem ? { certificatePem } : {}),
          ...(registryAuth ? { registryAuth } : {}),
          ...(notifications ? { notifications } : {}),
        });
        const repo = result.repositoryUrl.startsWith('file://') ? new URL(result.repositoryUrl).pathname : result.repositoryUrl;
        process.stderr.write(
          [
            '',
            `Scaffolded ${result.gitops_path} into ${repo}`,
            ...(result.commits ?? []).map((c) => `  ${c.pass.padEnd(14)} ${c.sha}`),
            result.repositoryUrl.startsWith('file://') ? `See it with: git --git-dir ${repo} log --stat -2` : '',
            '',
          ].join('\n'),
        );
        process.stdout.write(`${JSON.stringify(result)}\n`);
        process.exitCode = EXIT_OK;
      } catch (error) {
        const result = failedResult(error, cluster);
        const cause = error instanceof StepError ? error.cause : error;
        // Input refused before any step names the flag typed (--cluster), not the spec field.
        const named = error instanceof StepError ? error : inFlagTerms(error);
        const message = named !== error && isAppError(named) ? named.message : result.message;
        process.stderr.write(`\nscaffold failed: ${isAppError(cause) || error instanceof StepError ? message : String(error)}\n`);
        process.stdout.write(`${JSON.stringify(result)}\n`);
        process.exitCode = exitCodeOf(cause);
      }
    });
}
