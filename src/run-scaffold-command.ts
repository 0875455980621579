/**
 * What `gitops-scaffolder scaffold` does once its flags are parsed: one whole
 * scaffold in this process (local-scaffold.ts), its summary on stderr and its
 * result as one JSON line on stdout. Loaded only when the command runs.
 */
import { runLocalScaffold } from './embedded/local-scaffold.js';
import { isAppError } from './errors.js';
import { EXIT_OK, exitCodeOf } from './exit-codes.js';
import { createPinoLogger } from './pino-logger.js';
import { failedResult, StepError } from './runner/run-scaffold.js';
import { readInputFile } from './read-input-file.js';
import { assertNotificationAddress, assertNotificationProvider } from './gitops/notification-schema.js';
import { terminalOutput } from './cli/terse-run-output.js';
import { inFlagTerms } from './cli/flag-names.js';

/** The `scaffold` command's flags, as commander parses them. */
export interface ScaffoldFlags {
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

/** Runs the scaffold the flags describe; sets the exit code. */
export async function runScaffoldCommand(flags: ScaffoldFlags): Promise<void> {
  const logger = createPinoLogger({ base: { component: 'scaffold' }, ...terminalOutput() });
  const cluster = { name: flags.cluster, domain: flags.domain, region: flags.region };
  try {
    const certificatePem = flags.cert ? await readInputFile(flags.cert, '--cert') : undefined;
    const registryAuth = flags.registryAuth ? await readInputFile(flags.registryAuth, '--registry-auth') : undefined;
    const notificationAddress = flags.notificationAddressFile ? await readInputFile(flags.notificationAddressFile, '--notification-address-file') : undefined;
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
}
