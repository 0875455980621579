#!/usr/bin/env node
/**
 * Composition root of `scaffold-runner`: one run as one process (a
 * Kubernetes Job in production, a child process in embedded mode): a
 * scaffold, or with --action (SCAFFOLD_ACTION) an upgrade or a removal.
 *
 * Every flag can also come from the environment (`SCAFFOLD_REPO_URL`, …; see `cli/runner-flags.ts`).
 * Credentials come only from the environment or files, never from flags, since
 * arguments are visible in the process list. Logs are one JSON event a line on
 * stdout (human-readable on a terminal); the result JSON goes to --result-file
 * or the Kubernetes termination-message path.
 */
import { randomUUID } from 'node:crypto';
import { access, lstat, mkdir, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { type Command, CommanderError } from 'commander';
import { unknownFlagError } from './cli/cli-conventions.js';
import { ValidationError, type AppError } from './errors.js';
import { packageVersion } from './package-paths.js';
import { EXIT_BAD_INPUT, EXIT_CANCELLED, EXIT_FAILURE, EXIT_OK, exitCodeOf } from './exit-codes.js';
import type { Logger } from './logger.js';
import type { KubeConfigSource } from './kubernetes/kube-config.js';
import type { ClusterSpec } from './model/cluster-spec.js';
import type { RunInputFields } from './run-contract/run-inputs.js';
import type { CredentialRotation } from './gitops/sealed-credentials.js';
import { booleanFromEnv, rotationNames, runnerCommand, type RunnerFlags } from './cli/runner-flags.js';
import type { GitCredentials } from './run/ports.js';
import type { RunResult } from './run/run-record.js';
import { parseDuration } from './duration.js';
import { FIELD_FLAGS } from './cli/flag-names.js';
import { terminalOutput } from './cli/terse-run-output.js';
import { readInputFile, secretFromEnvOrFile } from './read-input-file.js';
import { DELIVERY_ENV, parseDeliverySettings } from './delivery/delivery-settings.js';
import { RUNNER_ENV } from './run-contract/runner-inputs.js';
import { runActionOf, type FleetAction } from './model/run-action.js';
import { ownQueueAuth, parseQueueKey, type QueueAuth } from './git/queue-auth.js';
import { limitTiering } from './process/v8-tiering.js';
import { CODE_CACHE_USE, RUNNER_CODE_STARTS, type RunnerCodeStart } from './process/runner-code.js';
// What only a run needs (client-node, the forge clients, pino, verify's kubectl
// and schemas) is imported where the run starts: `--version` and `--help` load
// none of it, and that module graph cost 1.5 CPU-seconds a process.

/** The run was stopped by a signal (a cancelled run), not by a failure of its own. */
class CancelledError extends Error {
  override readonly name = 'CancelledError';
}

/** How the runner names each input of the shared request rules: by the flag a user types. */
const RUNNER_FIELDS: RunInputFields = {
  cluster: 'cluster',
  certificate: '--cert',
  kubeconfig: '--kubeconfig',
  registry: '--registry-auth',
  notificationProvider: '--notification-provider',
  notificationAddress: '--notification-address-file',
};

/** Where Kubernetes reads a container's termination message from. */
const TERMINATION_MESSAGE_PATH = '/dev/termination-log';

/** `--batch a,b,c`: the further clusters of a batch upgrade, or undefined for none (names are checked by the run). */
function batchOf(value: string | undefined): readonly string[] | undefined {
  const names = (value ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return names.length > 0 ? names : undefined;
}

async function readSecretFile(path: string, what: string): Promise<string> {
  return (await readInputFile(path, what)).trim();
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

/** The landing queue's key and this run's attempt: the service's shared key, else one of this process's own (git/queue-auth.ts). */
async function queueAuthFrom(env: NodeJS.ProcessEnv): Promise<QueueAuth> {
  const attemptText = env[RUNNER_ENV.attempt];
  if (attemptText !== undefined && !/^[1-9][0-9]{0,5}$/.test(attemptText))
    throw new ValidationError([{ field: RUNNER_ENV.attempt, message: 'must be a positive integer' }]);
  const attempt = attemptText === undefined ? 1 : Number(attemptText);
  const key = await secretFromEnvOrFile(env, RUNNER_ENV.queueKey);
  return key === undefined ? ownQueueAuth(attempt) : { key: parseQueueKey(key, RUNNER_ENV.queueKey), shared: true, attempt };
}

/**
 * The result bounding, loaded when a run starts (not for --version/--help), so writing the result
 * needs no import after a signal: under `tsx`, Ctrl-C reaches its compiler service in the same
 * process group, and a module first imported after that cannot be compiled any more.
 */
let runResultModule: Promise<typeof import('./run-contract/run-result.js')> | undefined;
function loadRunResult(): Promise<typeof import('./run-contract/run-result.js')> {
  runResultModule ??= import('./run-contract/run-result.js');
  return runResultModule;
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
  // Bounded for every executor alike: a Job's termination message keeps only its first 4096 bytes.
  const { boundedResult } = await loadRunResult();
  await writeFile(target, `${JSON.stringify(boundedResult(result))}\n`, { mode: 0o600 });
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
  return runnerCommand(async (flags) => {
    const [{ createPinoLogger }, { holdLease }] = await Promise.all([import('./pino-logger.js'), import('./run-contract/run-lease.js')]);
    const logger = createPinoLogger({ level: flags.logLevel, base: { component: 'scaffold-runner' }, ...terminalOutput() });
    // Without the cache the run is the same, its start-up slower.
    const codeCache = (globalThis as Record<symbol, unknown>)[CODE_CACHE_USE] as RunnerCodeStart | undefined;
    if (codeCache !== undefined) logger.debug({ codeCache }, RUNNER_CODE_STARTS[codeCache]);
    const id = flags.id ?? randomUUID();
    // Held from the first moment: while it is fresh, nobody declares the run lost or retries it.
    const lease = flags.leaseFile ? await holdLease(flags.leaseFile, id) : undefined;
    try {
      await run(flags, id, env, logger);
    } finally {
      await lease?.release();
    }
  });
}

/** What a scaffold needs beyond the common flags, checked before step 1: nothing is cloned for a request that can only fail. */
interface ScaffoldInputs {
  readonly cluster: ClusterSpec;
  readonly certificatePem?: string;
  readonly registryAuth?: string;
  readonly notifications?: { readonly provider: string; readonly address: string };
  readonly rotateCredentials: CredentialRotation;
  readonly rotateValues: 'same' | 'fresh';
  readonly freshValues: boolean;
}

/** A scaffold's own rules: exactly one of certificate and kubeconfig (unless --wait-ready brings the kubeconfig), and the service's input rules under the runner's flag names. */
async function scaffoldInputs(
  flags: RunnerFlags,
  env: NodeJS.ProcessEnv,
  kubeconfig: KubeConfigSource | undefined,
  waitReady: boolean,
): Promise<ScaffoldInputs> {
  const { domain, region } = flags;
  if (domain === undefined || region === undefined) {
    throw new ValidationError([
      ...(domain === undefined ? [{ field: '--domain', message: "is required for a scaffold: the cluster's DNS domain" }] : []),
      ...(region === undefined ? [{ field: '--region', message: "is required for a scaffold: the cluster's region" }] : []),
    ]);
  }
  const cluster: ClusterSpec = {
    name: flags.cluster,
    domain,
    region,
    ...(flags.role !== undefined ? { role: flags.role } : {}),
    ...(flags.infraProvider !== undefined ? { infra_provider: flags.infraProvider } : {}),
    ...(flags.dnsProvider !== undefined ? { dns_provider: flags.dnsProvider } : {}),
  };
  const certificatePem = env[RUNNER_ENV.certificatePem] || (flags.cert ? await readSecretFile(flags.cert, '--cert') : undefined);
  // With --wait-ready the kubeconfig is there for Flux; a certificate may still be given alongside it.
  if (!waitReady && (certificatePem === undefined) === (kubeconfig === undefined)) {
    throw new ValidationError([
      { field: '--kubeconfig/--cert', message: "give exactly one: the new cluster's kubeconfig (to fetch its certificate) or its sealing certificate" },
    ]);
  }
  const rotateOnly = rotationNames(flags.rotateOnly ?? env[RUNNER_ENV.rotateOnly]);
  const rotateCredentials = flags.rotateCredentials === true || booleanFromEnv(env, RUNNER_ENV.rotateCredentials) || rotateOnly || false;
  const freshValues = flags.freshValues === true || booleanFromEnv(env, RUNNER_ENV.freshValues);
  if (freshValues && rotateCredentials === false)
    throw new ValidationError([
      { field: '--fresh-values', message: 'writes the Jobs for the credentials a rotation seals anew: give --rotate-credentials or --rotate-only' },
    ]);
  const rotateValues = flags.rotateValues === 'same' ? 'same' : 'fresh';
  if (freshValues && rotateValues === 'same')
    throw new ValidationError([
      { field: '--fresh-values', message: 'sets new values where the databases keep them, but --rotate-values same keeps the values: drop one of them' },
    ]);
  // Said here with the runner's flag names; runScaffold refuses it too.
  if (rotateCredentials !== false && rotateValues === 'same' && (kubeconfig === undefined || certificatePem !== undefined)) {
    throw new ValidationError([
      {
        field: '--rotate-values',
        message:
          "same needs --kubeconfig and no --cert: the cluster's Sealed Secrets controller re-encrypts the values (/v1/rotate) and serves the certificate they are sealed for",
      },
    ]);
  }
  const registryAuth = env[RUNNER_ENV.registryAuth] || (flags.registryAuth ? await readSecretFile(flags.registryAuth, '--registry-auth') : undefined);
  const notificationAddress =
    env[RUNNER_ENV.notificationAddress] ||
    (flags.notificationAddressFile ? await readSecretFile(flags.notificationAddressFile, '--notification-address-file') : undefined);
  if ((flags.notificationProvider === undefined) !== (notificationAddress === undefined)) {
    throw new ValidationError([
      flags.notificationProvider === undefined
        ? { field: '--notification-provider', message: 'the notification address needs its Provider type: slack, msteams or generic' }
        : { field: '--notification-address-file', message: `the ${flags.notificationProvider} Provider needs its webhook address` },
    ]);
  }
  const notifications =
    flags.notificationProvider !== undefined && notificationAddress !== undefined
      ? { provider: flags.notificationProvider, address: notificationAddress }
      : undefined;
  const { runInputIssues } = await import('./run-contract/run-inputs.js');
  const checked = runInputIssues(
    {
      cluster,
      reference: flags.reference,
      ...(certificatePem === undefined ? {} : { certificatePem }),
      ...(registryAuth === undefined ? {} : { registryDockerconfigjson: registryAuth }),
      ...(notifications === undefined ? {} : { notifications }),
    },
    RUNNER_FIELDS,
  );
  if (checked.issues.length > 0 || checked.cluster === undefined)
    throw new ValidationError(checked.issues.map(({ field, message }) => ({ field: FIELD_FLAGS[field] ?? field, message })));
  return {
    cluster: checked.cluster,
    rotateCredentials,
    rotateValues,
    freshValues,
    ...(certificatePem ? { certificatePem } : {}),
    ...(registryAuth ? { registryAuth } : {}),
    ...(notifications ? { notifications } : {}),
  };
}

/**
 * An upgrade's or a removal's rules: it seals nothing, so it needs no certificate and takes no rotation;
 * only a removal deleting the data needs the kubeconfig (to wait for Flux).
 * @returns whether the removal deletes the data
 */
async function checkFleetChangeInputs(
  flags: RunnerFlags,
  env: NodeJS.ProcessEnv,
  waitReady: boolean,
  kubeconfig: KubeConfigSource | undefined,
): Promise<boolean> {
  const { clusterNameSchema } = await import('./model/cluster-spec.js');
  const parsed = clusterNameSchema.safeParse(flags.cluster);
  if (!parsed.success) throw new ValidationError([{ field: '--cluster', message: parsed.error.issues[0]!.message }]);
  if (
    flags.rotateCredentials === true ||
    booleanFromEnv(env, RUNNER_ENV.rotateCredentials) ||
    rotationNames(flags.rotateOnly ?? env[RUNNER_ENV.rotateOnly]) !== undefined
  ) {
    throw new ValidationError([
      {
        field: '--rotate-credentials/--rotate-only',
        message: `${flags.action === 'upgrade' ? 'an upgrade keeps' : 'a removal deletes'} sealed credentials, it never seals them anew: rotate credentials with a scaffold run`,
      },
    ]);
  }
  if (waitReady && !runActionOf(flags.action).leavesTree)
    throw new ValidationError([
      { field: '--wait-ready', message: `a ${runActionOf(flags.action).dashboard.noun} leaves nothing of the cluster for its Flux to make Ready` },
    ]);
  if (flags.freshValues === true || booleanFromEnv(env, RUNNER_ENV.freshValues))
    throw new ValidationError([{ field: '--fresh-values', message: 'only a rotation seals fresh values: rotate credentials with a scaffold run' }]);
  if (flags.notificationProvider !== undefined || flags.notificationAddressFile !== undefined || env[RUNNER_ENV.notificationAddress]) {
    throw new ValidationError([
      {
        field: '--notification-provider',
        message: `${flags.action === 'upgrade' ? 'an upgrade keeps' : 'a removal deletes'} the cluster's notification Provider and its sealed address as they are: change them with a scaffold run`,
      },
    ]);
  }
  const deleteData = flags.deleteData === true || booleanFromEnv(env, RUNNER_ENV.deleteData);
  if (deleteData && flags.action !== 'remove') throw new ValidationError([{ field: '--delete-data', message: 'only a removal deletes data' }]);
  if (deleteData && kubeconfig === undefined) {
    throw new ValidationError([
      {
        field: '--delete-data',
        message:
          "needs the cluster's kubeconfig (--kubeconfig): the removal may land only once the cluster's Flux has applied the lifting of the prune protection, or the data stays",
      },
    ]);
  }
  return deleteData;
}

/**
 * The clients a run needs of its cluster. Loading the Kubernetes client costs
 * about 0.4 CPU-s, half of what the rest of a run loads: only a run given its
 * cluster's kubeconfig loads it (one given a certificate talks to no cluster).
 */
async function clusterClients(source: KubeConfigSource, logger: Logger) {
  const [{ loadKubeConfig }, { KubeSealingCertificateSource }, { KubeFluxReadiness }] = await Promise.all([
    import('./kubernetes/kube-config.js'),
    import('./kubernetes/kube-sealing-certificate-source.js'),
    import('./kubernetes/kube-flux-readiness.js'),
  ]);
  return {
    certificates: () => new KubeSealingCertificateSource({ kubeConfig: loadKubeConfig(source), logger }),
    readiness: () => new KubeFluxReadiness({ kubeConfig: loadKubeConfig(source), logger }),
  };
}

async function run(flags: RunnerFlags, id: string, env: NodeJS.ProcessEnv, logger: Logger): Promise<void> {
  let result: RunResult;
  const [{ failedResult, StepError }] = await Promise.all([import('./runner/step-runner.js'), loadRunResult()]);
  try {
    const [
      { clusterNameSchema },
      { CliGitRemote },
      { createWorkTreeVerifier },
      { runScaffold, verifierFor },
      { runFleetChange },
      { waitForFluxReady },
      { commitContainment },
      { runnerDelivery },
      { useRunnerChildLauncher },
    ] = await Promise.all([
      import('./model/cluster-spec.js'),
      import('./git/cli-git-remote.js'),
      import('./workspace/verify-work-tree.js'),
      import('./runner/run-scaffold.js'),
      import('./runner/run-fleet-change.js'),
      import('./runner/wait-for-flux-ready.js'),
      import('./workspace/commit-containment.js'),
      import('./cli/runner-delivery.js'),
      import('./process/size-aware-launcher.js'),
    ]);
    // One run, about 115 MB: forking git and kubectl from here costs less than starting the spawn helper.
    useRunnerChildLauncher();
    for (const [field, value] of [
      ['--sealed-secrets-namespace', flags.sealedSecretsNamespace],
      ['--sealed-secrets-name', flags.sealedSecretsName],
      ['--reference', flags.reference],
    ] as const) {
      const parsed = clusterNameSchema.safeParse(value);
      if (!parsed.success) throw new ValidationError([{ field, message: parsed.error.issues[0]!.message }]);
    }
    const kubeconfigData = env[RUNNER_ENV.kubeconfigData];
    const kubeconfig: KubeConfigSource | undefined = kubeconfigData
      ? { kind: 'inline', yaml: kubeconfigData }
      : flags.kubeconfig
        ? { kind: 'file', path: flags.kubeconfig }
        : undefined;
    const cluster = kubeconfig === undefined ? undefined : await clusterClients(kubeconfig, logger);
    const waitReady = flags.waitReady === true || booleanFromEnv(env, RUNNER_ENV.waitReady);
    const readyTimeoutMs = waitReady ? parseDuration(flags.readyTimeout, '--ready-timeout') : 0;
    if (waitReady && kubeconfig === undefined) {
      throw new ValidationError([{ field: '--wait-ready', message: "needs the cluster's kubeconfig (--kubeconfig) to read its Flux Kustomizations" }]);
    }
    const batch = batchOf(flags.batch);
    if (batch !== undefined && (flags.action !== 'upgrade' || waitReady || flags.delivery !== 'push')) {
      throw new ValidationError([
        {
          field: '--batch',
          message: 'only a pushed upgrade upgrades a batch of clusters (no --wait-ready: it reads one cluster; no pull requests: a batch lands as it verifies)',
        },
      ]);
    }
    const scaffolding = flags.action === 'scaffold' ? await scaffoldInputs(flags, env, kubeconfig, waitReady) : undefined;
    const deleteData = scaffolding ? false : await checkFleetChangeInputs(flags, env, waitReady, kubeconfig);
    const deliverySettings = parseDeliverySettings(
      {
        mode: flags.delivery,
        autoMerge: flags.autoMerge === true || booleanFromEnv(env, DELIVERY_ENV.autoMerge),
        ...(flags.forge ? { forge: flags.forge } : {}),
        ...(flags.forgeApiUrl ? { apiUrl: flags.forgeApiUrl } : {}),
      },
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
    const scratchRoot = flags.scratchDir;
    if (scratchRoot) await mkdir(scratchRoot, { recursive: true, mode: 0o700 });
    // Kubernetes sends SIGTERM when the Job is deleted (a cancelled run) and the
    // local executor does the same: abort the step in flight (git, the wait) so
    // the run still writes its result and removes its working copy.
    // A signal often arrives twice: Ctrl-C reaches the whole foreground process
    // group, and a wrapper in it (`npx tsx`, npm) relays its copy to us too. With
    // `once`, that copy found no handler and killed the runner (130) before it
    // wrote its result or removed its working copy. Copies within a second are
    // the same request; a signal sent later is someone insisting: leave now.
    const stop = new AbortController();
    let stoppingSince: number | undefined;
    const onTerm = (signal: NodeJS.Signals): void => {
      if (stoppingSince === undefined) {
        stoppingSince = performance.now();
        stop.abort(new CancelledError(`the runner received ${signal}`));
      } else if (performance.now() - stoppingSince > 1000) {
        process.stderr.write(`scaffold-runner: ${signal} again: exiting without cleaning up\n`);
        process.exit(EXIT_CANCELLED);
      }
    };
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onTerm);
    const deps = {
      // git stays in the runner's process group: the executor's kill of that group stops a push in flight.
      git: new CliGitRemote({ logger, gitProcessGroup: 'caller', queueAuth: await queueAuthFrom(env) }),
      logger,
      delivery,
      verify: verifierFor(createWorkTreeVerifier(scratchRoot ? { scratchRoot } : {})),
      ...(workRoot ? { workRoot } : {}),
      // The work tree's files on the scratch volume with verify's copies; its history stays in the work dir.
      ...(scratchRoot ? { workTreeRoot: scratchRoot } : {}),
    };
    // Flux may apply a later commit (another run's) that contains this run's: that counts. Opened once asked for.
    let containment: ReturnType<typeof commitContainment> | undefined;
    const containsOf = () => (commit: string, other: string) => {
      containment ??= commitContainment(new CliGitRemote({ logger }), {
        repositoryUrl: flags.repoUrl,
        branch: flags.branch,
        signal: stop.signal,
        ...(credentials ? { credentials } : {}),
      });
      return containment.contains(commit, other);
    };
    const common = {
      id,
      repositoryUrl: flags.repoUrl,
      branch: flags.branch,
      reference: flags.reference,
      generatorVersion: packageVersion(),
      ...(credentials ? { credentials } : {}),
      signal: stop.signal,
    };
    const done = scaffolding
      ? await runScaffold(
          { ...deps, ...(cluster ? { certificates: cluster.certificates() } : {}) },
          {
            ...common,
            cluster: scaffolding.cluster,
            controller: { namespace: flags.sealedSecretsNamespace, name: flags.sealedSecretsName },
            controllerTimeoutMs: parseDuration(flags.controllerTimeout, '--controller-timeout'),
            rotateCredentials: scaffolding.rotateCredentials,
            rotateValues: scaffolding.rotateValues,
            ...(scaffolding.freshValues ? { freshValues: true } : {}),
            ...(scaffolding.certificatePem ? { certificatePem: scaffolding.certificatePem } : {}),
            ...(scaffolding.registryAuth ? { registryAuth: scaffolding.registryAuth } : {}),
            ...(scaffolding.notifications ? { notifications: scaffolding.notifications } : {}),
          },
        )
      : await runFleetChange(
          { ...deps, ...(deleteData ? { readiness: cluster!.readiness(), contains: containsOf() } : {}) },
          {
            ...common,
            cluster: { name: flags.cluster },
            ...(batch !== undefined ? { batch } : {}),
            // Every action but a scaffold is a fleet change (run-fleet-change.ts).
            action: flags.action as FleetAction,
            ...(deleteData ? { deleteData: { timeoutMs: parseDuration(flags.liftTimeout, '--lift-timeout') } } : {}),
          },
        ).finally(() => containment?.dispose());
    if (waitReady) {
      // Flux may apply a later commit (another run's) that contains this run's: that counts.
      const containment = commitContainment(new CliGitRemote({ logger }), {
        repositoryUrl: flags.repoUrl,
        branch: flags.branch,
        signal: stop.signal,
        ...(credentials ? { credentials } : {}),
      });
      try {
        result = await waitForFluxReady(
          {
            readiness: cluster!.readiness(),
            logger: logger.child({ run_id: id, cluster: flags.cluster }),
          },
          { result: done, timeoutMs: readyTimeoutMs, signal: stop.signal, contains: (commit, other) => containment.contains(commit, other) },
        );
      } finally {
        await containment.dispose();
      }
    } else {
      result = done;
    }
  } catch (error) {
    result = failedResult(error, { name: flags.cluster });
    const cause = error instanceof StepError ? error.cause : error;
    // The result file keeps the contract's two outcomes (the service records cancels itself); the log says what happened.
    logger.error(
      { event: 'run_finished', status: cause instanceof CancelledError ? 'cancelled' : 'failed', step: result.step, commits: result.commits },
      result.message,
    );
    process.exitCode = (await writeResultOrSay(flags.resultFile, result, logger))
      ? cause instanceof CancelledError
        ? EXIT_CANCELLED
        : exitCodeOf(cause)
      : EXIT_FAILURE;
    return;
  }
  // Pushed but not Ready (--wait-ready) is a failed run: the result says which Kustomizations and why.
  process.exitCode = (await writeResultOrSay(flags.resultFile, result, logger)) && result.status === 'succeeded' ? EXIT_OK : EXIT_FAILURE;
}

limitTiering(process.env);
const runner = program(process.env);

/** Runs the command line; no top-level await, so the bin can also start this file as CommonJS (process/code-cache.ts). */
async function main(): Promise<void> {
  try {
    // A mistyped flag first, as the other binaries report it: commander would call `--domian` a missing --domain.
    const unknown = unknownFlagError(runner, process.argv.slice(2));
    if (unknown !== undefined) {
      process.stderr.write(`${unknown}\n`);
      throw new CommanderError(EXIT_BAD_INPUT, 'commander.unknownOption', unknown.split('\n')[0] ?? unknown);
    }
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
}

void main();
