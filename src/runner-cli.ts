#!/usr/bin/env node
/**
 * Composition root of `scaffold-runner`: one scaffold run as one process (a
 * Kubernetes Job in production, a child process in embedded mode).
 *
 * Every flag can also come from the environment (`SCAFFOLD_REPO_URL`, …).
 * Credentials come only from the environment or files, never from flags, since
 * arguments are visible in the process list. Logs are one JSON event a line on
 * stdout (human-readable on a terminal); the result JSON goes to --result-file
 * or the Kubernetes termination-message path.
 */
import { randomUUID } from 'node:crypto';
import { access, lstat, mkdir, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { createWorkTreeVerifier } from './workspace/verify-work-tree.js';
import { ValidationError, type AppError } from './errors.js';
import { EXIT_BAD_INPUT, EXIT_CANCELLED, EXIT_FAILURE, EXIT_OK, exitCodeOf } from './exit-codes.js';
import type { Logger } from './logger.js';
import { CliGitRemote } from './git/cli-git-remote.js';
import { loadKubeConfig, type KubeConfigSource } from './kubernetes/kube-config.js';
import { KubeSealingCertificateSource } from './kubernetes/kube-sealing-certificate-source.js';
import { KubeFluxReadiness } from './kubernetes/kube-flux-readiness.js';
import { waitForFluxReady } from './runner/wait-for-flux-ready.js';
import { commitContainment } from './workspace/commit-containment.js';
import { clusterNameSchema, type ClusterSpec } from './model/cluster-spec.js';
import { runInputIssues, type RunInputFields } from './model/run-inputs.js';
import { packageVersion } from './package-paths.js';
import { createPinoLogger } from './pino-logger.js';
import { failedResult, runScaffold, StepError, verifierFor } from './runner/run-scaffold.js';
import type { GitCredentials } from './runner/ports.js';
import type { RunResult } from './service/scaffold-run.js';
import { parseDuration } from './duration.js';
import { FIELD_FLAGS } from './cli/flag-names.js';
import { requiredFlagsHelp } from './cli/required-flags-help.js';
import { terminalOutput } from './cli/terse-run-output.js';
import { readInputFile, secretFromEnvOrFile } from './read-input-file.js';
import { holdLease } from './run-contract/run-lease.js';
import { runnerDelivery } from './delivery/runner-delivery.js';
import { DELIVERY_ENV, parseDeliverySettings } from './delivery/delivery-settings.js';
import { RUNNER_ENV } from './run-contract/runner-inputs.js';

/** The run was stopped by a signal (a cancelled run), not by a failure of its own. */
class CancelledError extends Error {
  override readonly name = 'CancelledError';
}

/** How the runner names each input of the shared request rules: by the flag a user types. */
const RUNNER_FIELDS: RunInputFields = { cluster: 'cluster', certificate: '--cert', kubeconfig: '--kubeconfig', registry: '--registry-auth' };

/** Where Kubernetes reads a container's termination message from. */
const TERMINATION_MESSAGE_PATH = '/dev/termination-log';

interface RunnerFlags {
  id?: string;
  repoUrl: string;
  branch: string;
  cluster: string;
  domain: string;
  role?: string;
  infraProvider?: string;
  dnsProvider?: string;
  region: string;
  reference: string;
  kubeconfig?: string;
  cert?: string;
  sealedSecretsNamespace: string;
  sealedSecretsName: string;
  resultFile?: string;
  workDir?: string;
  leaseFile?: string;
  controllerTimeout: string;
  registryAuth?: string;
  rotateCredentials: boolean;
  rotateOnly?: string;
  waitReady: boolean;
  readyTimeout: string;
  delivery: string;
  forge?: string;
  forgeApiUrl?: string;
  autoMerge: boolean;
  mergePollInterval: string;
  logLevel: string;
}

function option(flags: string, description: string, env: string, fallback?: string): Option {
  const o = new Option(flags, description).env(env);
  return fallback === undefined ? o : o.default(fallback);
}

async function readSecretFile(path: string, what: string): Promise<string> {
  return (await readInputFile(path, what)).trim();
}

/** A boolean switch from the environment: unset or empty is false. */
function booleanFromEnv(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = (env[name] ?? '').trim().toLowerCase();
  if (value === '' || value === 'false' || value === '0' || value === 'no') return false;
  if (value === 'true' || value === '1' || value === 'yes') return true;
  throw new ValidationError([{ field: name, message: 'must be true or false' }]);
}

/** `--rotate-only a,ns/b`: credential names as scaffold.yaml declares them (a DNS label, optionally after a namespace). */
function rotationNames(value: string | undefined): readonly string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const names = value.split(',').map((n) => n.trim());
  const bad = names.filter((n) => !/^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n));
  if (bad.length > 0) throw new ValidationError([{ field: '--rotate-only', message: `not credential names: ${bad.map((n) => JSON.stringify(n)).join(', ')}` }]);
  return names;
}

async function gitCredentialsFrom(env: NodeJS.ProcessEnv): Promise<GitCredentials | undefined> {
  const sshKey = await secretFromEnvOrFile(env, RUNNER_ENV.gitSshKey);
  if (sshKey) {
    const knownHosts = await secretFromEnvOrFile(env, RUNNER_ENV.gitKnownHosts);
    return { kind: 'ssh', privateKey: `${sshKey}\n`, ...(knownHosts ? { knownHosts } : {}) };
  }
  const token = await secretFromEnvOrFile(env, RUNNER_ENV.gitToken);
  if (!token) return undefined;
  const username = await secretFromEnvOrFile(env, RUNNER_ENV.gitUsername);
  return { kind: 'token', token, ...(username ? { username } : {}) };
}

async function writeResult(path: string | undefined, result: RunResult): Promise<void> {
  let target = path;
  if (!target) {
    try {
      await access(TERMINATION_MESSAGE_PATH, constants.W_OK);
      target = TERMINATION_MESSAGE_PATH;
    } catch {
      return;
    }
  }
  await writeFile(target, `${JSON.stringify(result)}\n`, { mode: 0o600 });
}

/**
 * Writes the result; when that fails (a full disk), says so on the event
 * stream, where the executor finds it, and removes a partial file, so the run
 * is recorded as "no space left on device" rather than as a malformed result.
 * @returns whether the result was written
 */
async function writeResultOrSay(path: string | undefined, result: RunResult, logger: Logger): Promise<boolean> {
  try {
    await writeResult(path, result);
    return true;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOSPC' ? 'no space left on device' : error instanceof Error ? error.message : String(error);
    logger.error({ event: 'result_not_written', status: 'failed', commits: result.commits }, `could not write the result file: ${reason}`);
    // Only a regular file: the path may be a device (/dev/termination-log, /dev/full).
    if (path && (await lstat(path).catch(() => undefined))?.isFile() === true) await rm(path, { force: true }).catch(() => undefined);
    return false;
  }
}

function program(env: NodeJS.ProcessEnv): Command {
  return new Command('scaffold-runner')
    .description("Scaffold one cluster's GitOps tree in two passes: infrastructure first, then everything sealed with the cluster's own key.")
    .version(packageVersion())
    .exitOverride()
    .showHelpAfterError()
    .configureHelp(requiredFlagsHelp)
    .addOption(option('--id <id>', 'run id, recorded in commit trailers (default: a new UUID)', RUNNER_ENV.id))
    .addOption(option('--repo-url <url>', 'the GitOps repository (https, ssh or file)', RUNNER_ENV.repoUrl).makeOptionMandatory())
    .addOption(option('--branch <branch>', 'branch to push to', RUNNER_ENV.branch, 'main'))
    .addOption(option('--cluster <name>', 'the new cluster (DNS-1123 label)', RUNNER_ENV.cluster).makeOptionMandatory())
    .addOption(option('--domain <domain>', "the cluster's DNS domain", RUNNER_ENV.domain).makeOptionMandatory())
    .addOption(option('--region <region>', "the cluster's region", RUNNER_ENV.region).makeOptionMandatory())
    .addOption(option('--role <role>', "the cluster's role, when the platform's catalog selects layers by it", RUNNER_ENV.role))
    .addOption(option('--infra-provider <provider>', "the cluster's infrastructure provider (catalog platforms)", RUNNER_ENV.infraProvider))
    .addOption(option('--dns-provider <provider>', "the cluster's DNS provider (catalog platforms)", RUNNER_ENV.dnsProvider))
    .addOption(option('--reference <name>', 'reference environment', RUNNER_ENV.reference, 'development'))
    .addOption(option('--kubeconfig <file>', "the new cluster's kubeconfig (steps 4-5 fetch its certificate)", RUNNER_ENV.kubeconfigFile))
    .addOption(option('--cert <pem-file>', "the cluster's sealing certificate (skips steps 4-5)", RUNNER_ENV.certificateFile))
    .addOption(option('--sealed-secrets-namespace <ns>', 'namespace of the Sealed Secrets controller', RUNNER_ENV.sealedSecretsNamespace, 'kube-system'))
    .addOption(option('--sealed-secrets-name <name>', 'name of the controller Deployment and Service', RUNNER_ENV.sealedSecretsName, 'sealed-secrets-controller'))
    .addOption(option('--controller-timeout <duration>', 'how long to wait for the controller (e.g. 900s, 15m)', RUNNER_ENV.controllerTimeout, '15m'))
    .addOption(option('--registry-auth <file>', 'a .dockerconfigjson to use as the registry pull secret', RUNNER_ENV.registryAuthFile))
    // Not .env(): commander turns a boolean flag on whenever its variable is set, so
    // SCAFFOLD_ROTATE_CREDENTIALS=false would rotate every credential. Read below.
    .addOption(new Option('--rotate-credentials', 'seal fresh credentials even where sealed ones exist (env SCAFFOLD_ROTATE_CREDENTIALS=true|false)').default(false))
    .addOption(new Option('--rotate-only <names>', 'seal fresh values for these credentials only: comma-separated name or namespace/name (env SCAFFOLD_ROTATE_ONLY)'))
    // Not .env() either, for the same reason: SCAFFOLD_WAIT_READY is read below.
    .addOption(new Option('--wait-ready', "after the last push, wait until the cluster's Flux Kustomizations are Ready at the pushed commit (needs --kubeconfig; env SCAFFOLD_WAIT_READY=true|false)").default(false))
    .addOption(option('--ready-timeout <duration>', 'how long --wait-ready waits (e.g. 600s, 15m)', RUNNER_ENV.readyTimeout, '15m'))
    .addOption(option('--delivery <mode>', 'push (straight to --branch) or pull_request (each pass through a pull/merge request)', DELIVERY_ENV.mode, 'push'))
    .addOption(option('--forge <name>', 'github, gitlab or gitea: who hosts the repository (pull_request)', DELIVERY_ENV.forge))
    .addOption(option('--forge-api-url <url>', "the forge's API (default: derived from --repo-url)", DELIVERY_ENV.apiUrl))
    // Not .env(), for the reason given at --rotate-credentials.
    .addOption(new Option('--auto-merge', `merge each request once the forge says it is mergeable (env ${DELIVERY_ENV.autoMerge}=true|false)`).default(false))
    .addOption(option('--merge-poll-interval <duration>', 'how often to look at an open request', 'SCAFFOLD_MERGE_POLL_INTERVAL', '15s'))
    .addOption(option('--result-file <file>', 'where to write the result JSON (default: the termination-message path)', RUNNER_ENV.resultFile))
    .addOption(option('--work-dir <dir>', 'where the working copy goes (default: the OS temp dir); the executor removes it after the run', RUNNER_ENV.workDir))
    .addOption(option('--lease-file <file>', 'a file renewed every few seconds while the run works, removed at its end (the run\'s owner lease)', RUNNER_ENV.leaseFile))
    .addOption(option('--log-level <level>', 'debug, info, warn or error', RUNNER_ENV.logLevel, 'info'))
    .action(async (flags: RunnerFlags) => {
      const logger = createPinoLogger({ level: flags.logLevel, base: { component: 'scaffold-runner' }, ...terminalOutput() });
      const id = flags.id ?? randomUUID();
      // Held from the first moment: while it is fresh, nobody declares the run lost or retries it.
      const lease = flags.leaseFile ? await holdLease(flags.leaseFile, id) : undefined;
      try {
        await scaffold(flags, id, env, logger);
      } finally {
        await lease?.release();
      }
    });
}

async function scaffold(flags: RunnerFlags, id: string, env: NodeJS.ProcessEnv, logger: Logger): Promise<void> {
  let cluster: ClusterSpec = {
    name: flags.cluster,
    domain: flags.domain,
    region: flags.region,
    ...(flags.role !== undefined ? { role: flags.role } : {}),
    ...(flags.infraProvider !== undefined ? { infra_provider: flags.infraProvider } : {}),
    ...(flags.dnsProvider !== undefined ? { dns_provider: flags.dnsProvider } : {}),
  };
  let result: RunResult;
  try {
    for (const [field, value] of [['--sealed-secrets-namespace', flags.sealedSecretsNamespace], ['--sealed-secrets-name', flags.sealedSecretsName], ['--reference', flags.reference]] as const) {
      const parsed = clusterNameSchema.safeParse(value);
      if (!parsed.success) throw new ValidationError([{ field, message: parsed.error.issues[0]!.message }]);
    }
    const certificatePem = env[RUNNER_ENV.certificatePem] || (flags.cert ? await readSecretFile(flags.cert, '--cert') : undefined);
    const kubeconfigData = env[RUNNER_ENV.kubeconfigData];
    const kubeconfig: KubeConfigSource | undefined = kubeconfigData
      ? { kind: 'inline', yaml: kubeconfigData }
      : flags.kubeconfig
        ? { kind: 'file', path: flags.kubeconfig }
        : undefined;
    const waitReady = flags.waitReady === true || booleanFromEnv(env, RUNNER_ENV.waitReady);
    const readyTimeoutMs = waitReady ? parseDuration(flags.readyTimeout, '--ready-timeout') : 0;
    if (waitReady && kubeconfig === undefined) {
      throw new ValidationError([{ field: '--wait-ready', message: "needs the cluster's kubeconfig (--kubeconfig) to read its Flux Kustomizations" }]);
    }
    // With --wait-ready the kubeconfig is there for Flux; a certificate may still be given alongside it.
    if (!waitReady && (certificatePem === undefined) === (kubeconfig === undefined)) {
      throw new ValidationError([{ field: '--kubeconfig/--cert', message: 'give exactly one: the new cluster\'s kubeconfig (to fetch its certificate) or its sealing certificate' }]);
    }
    const rotateOnly = rotationNames(flags.rotateOnly ?? env[RUNNER_ENV.rotateOnly]);
    const rotateCredentials = flags.rotateCredentials === true || booleanFromEnv(env, RUNNER_ENV.rotateCredentials) || rotateOnly || false;
    const registryAuth = env[RUNNER_ENV.registryAuth] || (flags.registryAuth ? await readSecretFile(flags.registryAuth, '--registry-auth') : undefined);
    // The service's rules, under the runner's flag names, before step 1: nothing is cloned for a request that can only fail.
    const checked = runInputIssues(
      {
        cluster,
        reference: flags.reference,
        ...(certificatePem === undefined ? {} : { certificatePem }),
        ...(registryAuth === undefined ? {} : { registryDockerconfigjson: registryAuth }),
      },
      RUNNER_FIELDS,
    );
    if (checked.issues.length > 0 || checked.cluster === undefined) throw new ValidationError(checked.issues.map(({ field, message }) => ({ field: FIELD_FLAGS[field] ?? field, message })));
    cluster = checked.cluster;
    const deliverySettings = parseDeliverySettings(
      { mode: flags.delivery, autoMerge: flags.autoMerge === true || booleanFromEnv(env, DELIVERY_ENV.autoMerge), ...(flags.forge ? { forge: flags.forge } : {}), ...(flags.forgeApiUrl ? { apiUrl: flags.forgeApiUrl } : {}) },
      { mode: '--delivery', forge: '--forge', apiUrl: '--forge-api-url' },
    );
    const { delivery, credentials } = await runnerDelivery(deliverySettings, {
      repositoryUrl: flags.repoUrl,
      credentials: await gitCredentialsFrom(env),
      readSecret: (name) => secretFromEnvOrFile(env, name),
      logger,
      pollIntervalMs: parseDuration(flags.mergePollInterval, '--merge-poll-interval'),
    });
    const workRoot = flags.workDir;
    if (workRoot) await mkdir(workRoot, { recursive: true, mode: 0o700 });
    const certificates = kubeconfig ? new KubeSealingCertificateSource({ kubeConfig: loadKubeConfig(kubeconfig), logger }) : undefined;
    // Kubernetes sends SIGTERM when the Job is deleted (a cancelled run) and the
    // local executor does the same: abort the step in flight (git, the wait) so
    // the run still writes its result and removes its working copy.
    const stop = new AbortController();
    const onTerm = (signal: NodeJS.Signals) => stop.abort(new CancelledError(`the runner received ${signal}`));
    process.once('SIGTERM', onTerm);
    process.once('SIGINT', onTerm);
    const scaffolded = await runScaffold(
      {
        // git stays in the runner's process group: the executor's kill of that group stops a push in flight.
        git: new CliGitRemote({ logger, gitProcessGroup: 'caller' }),
        logger,
        delivery,
        verify: verifierFor(createWorkTreeVerifier()),
        ...(certificates ? { certificates } : {}),
        ...(workRoot ? { workRoot } : {}),
      },
      {
        id,
        repositoryUrl: flags.repoUrl,
        branch: flags.branch,
        cluster,
        reference: flags.reference,
        controller: { namespace: flags.sealedSecretsNamespace, name: flags.sealedSecretsName },
        controllerTimeoutMs: parseDuration(flags.controllerTimeout, '--controller-timeout'),
        generatorVersion: packageVersion(),
        rotateCredentials,
        ...(certificatePem ? { certificatePem } : {}),
        ...(registryAuth ? { registryAuth } : {}),
        ...(credentials ? { credentials } : {}),
        signal: stop.signal,
      },
    );
    if (waitReady) {
      // Flux may apply a later commit (another run's) that contains this run's: that counts.
      const containment = commitContainment(new CliGitRemote({ logger }), { repositoryUrl: flags.repoUrl, branch: flags.branch, signal: stop.signal, ...(credentials ? { credentials } : {}) });
      try {
        result = await waitForFluxReady(
          { readiness: new KubeFluxReadiness({ kubeConfig: loadKubeConfig(kubeconfig!), logger }), logger: logger.child({ run_id: id, cluster: cluster.name }) },
          { result: scaffolded, timeoutMs: readyTimeoutMs, signal: stop.signal, contains: (commit, other) => containment.contains(commit, other) },
        );
      } finally {
        await containment.dispose();
      }
    } else {
      result = scaffolded;
    }
  } catch (error) {
    result = failedResult(error, cluster);
    logger.error({ event: 'run_finished', status: 'failed', step: result.step, commits: result.commits }, result.message);
    const cause = error instanceof StepError ? error.cause : error;
    process.exitCode = (await writeResultOrSay(flags.resultFile, result, logger)) ? (cause instanceof CancelledError ? EXIT_CANCELLED : exitCodeOf(cause)) : EXIT_FAILURE;
    return;
  }
  // Pushed but not Ready (--wait-ready) is a failed run: the result says which Kustomizations and why.
  process.exitCode = (await writeResultOrSay(flags.resultFile, result, logger)) && result.status === 'succeeded' ? EXIT_OK : EXIT_FAILURE;
}

const runner = program(process.env);
try {
  await runner.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? EXIT_OK : EXIT_BAD_INPUT;
    if (error.exitCode !== 0) {
      // A missing or malformed flag is still a finished run to whoever waits for
      // the result (the service reads the file or the termination message).
      const resultFile = (runner.opts() as Partial<RunnerFlags>).resultFile ?? process.env[RUNNER_ENV.resultFile];
      // "unknown option '--token=…'" would repeat a value someone put on the command line.
      const message = error.message.replace(/^error: /, '').replace(/('--?[^'=\s]+=)[^']*'/g, "$1…'");
      await writeResult(resultFile, { status: 'failed', message, commits: [] }).catch(() => undefined);
    }
  } else {
    // Only reached for input rejected before the run started (e.g. the cluster spec).
    process.stderr.write(`error: ${(error as AppError).message ?? String(error)}\n`);
    process.exitCode = exitCodeOf(error);
  }
}
