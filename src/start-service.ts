/**
 * Composition root of the HTTP service: reads nothing itself (the
 * configuration comes in), picks the implementations of every port and wires
 * them together. Nothing else in the code base chooses an implementation.
 *
 * Loaded by `gitops-scaffolder serve` (main.ts) when the service starts, so
 * `--help`, `--version` and `scaffold` load none of it. The generator owner
 * plugs the dry-run previewer and the embedded default repository in through
 * {@link ServePlugins}.
 */
import { statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import type { FastifyInstance } from 'fastify';
import { PgRunStore } from './db/pg-run-store.js';
import { CachedRunStore } from './service/cached-run-store.js';
import { UnavailableError } from './errors.js';
import { createHttpApp } from './http/create-http-app.js';
import { KubeJobExecutor } from './kubernetes/kube-job-executor.js';
import { SubjectAccessReviewAuthorizer } from './kubernetes/subject-access-review-authorizer.js';
import { TokenReviewAuthenticator } from './kubernetes/token-review-authenticator.js';
import type { Logger } from './logger.js';
import { createPino, loggerFromPino } from './pino-logger.js';
import type { Authenticator } from './service/authenticator.js';
import type { Authorizer } from './service/authorizer.js';
import { AllowAllAuthorizer } from './service/static-authorizer.js';
import type { CatalogSource } from './service/catalog-source.js';
import type { ClusterGraphSource } from './service/cluster-graph-source.js';
import { readLandedCommits } from './git/landed-commits.js';
import { parseQueueKey } from './git/queue-auth.js';
import { ensureQueueKey } from './embedded/queue-key.js';
import { secretFromEnvOrFile } from './read-input-file.js';
import { RUNNER_ENV } from './run-contract/runner-inputs.js';
import { LocalExecutor, type RunnerCommand } from './local/local-executor.js';
import { RunMonitor } from './service/run-monitor.js';
import type { RunExecutor } from './service/run-executor.js';
import type { ScaffoldPreviewer } from './run/scaffold-previewer.js';
import { RunService, type DefaultRepository } from './service/run-service.js';
import type { ServiceConfig } from './service/service-config.js';
import { StaticTokenAuthenticator } from './service/static-token-authenticator.js';
import { GitCatalogSource } from './sources/git-catalog-source.js';
import { GitClusterGraphSource } from './sources/git-cluster-graph-source.js';
import { GitFleetSource } from './sources/git-fleet-source.js';
import { KubeControllerCertificateSource } from './kubernetes/kube-controller-certificate-source.js';
import { serviceForgeAuth } from './delivery/service-forge-auth.js';
import { fleetRunSecrets } from './delivery/fleet-run-secrets.js';
import type { FleetSource } from './service/fleet-source.js';
import { GitScaffoldPreviewer } from './sources/git-scaffold-previewer.js';
import { ensureDefaultRepository } from './embedded/local-scaffold.js';
import { embeddedStartupNotice, ensureEmbeddedApiToken, type EmbeddedApiToken } from './embedded/embedded-api-token.js';
import { UI_PREFIX } from './http/ui-routes.js';
import { CliGitRemote } from './git/cli-git-remote.js';
import { packageVersion } from './package-paths.js';

/**
 * Implementations the generator owner plugs in. Each is a small factory so it
 * can use the configuration and the logger.
 */
export interface ServePlugins {
  /**
   * The dry-run implementation (`POST /api/v1/scaffolds?dry_run=true`).
   * @default a previewer answering 503 "dry run is not wired yet"
   */
  readonly previewer?: (context: { readonly config: ServiceConfig; readonly logger: Logger }) => ScaffoldPreviewer;
  /**
   * Creates (once) the embedded default repository under `dataDir`, seeded with
   * the reference platform, and returns its URL. Used when DEFAULT_GITOPS_REPO_URL
   * is unset and runs execute locally.
   * @default none: requests must then name repository.url
   */
  readonly seedDefaultRepository?: (context: { readonly dataDir: string; readonly logger: Logger }) => Promise<string>;
  /**
   * Draws a run's Flux graph (`GET /api/v1/scaffolds/{id}/graph`, the dashboard's picture).
   * @default none: the endpoint answers 404
   */
  readonly graphSource?: (context: { readonly config: ServiceConfig; readonly logger: Logger }) => ClusterGraphSource;
  /**
   * Reads a repository's layer catalog (`GET /api/v1/catalog`, the dry-run form's choices).
   * @default none: the endpoint answers 404
   */
  readonly catalogSource?: (context: { readonly config: ServiceConfig; readonly logger: Logger }) => CatalogSource;
  /**
   * Reads a repository's fleet and decommissions clusters (`/api/v1/clusters`).
   * @default none: those endpoints answer 404
   */
  readonly fleetSource?: (context: { readonly config: ServiceConfig; readonly logger: Logger }) => FleetSource | Promise<FleetSource>;
}

export const defaultPlugins: ServePlugins = {
  previewer: ({ logger }) =>
    new GitScaffoldPreviewer({
      git: new CliGitRemote({ logger: logger.child({ component: 'dry-run' }) }),
      generatorVersion: packageVersion(),
      logger: logger.child({ component: 'dry-run' }),
    }),
  seedDefaultRepository: ({ dataDir, logger }) => ensureDefaultRepository(dataDir, logger),
  graphSource: ({ config, logger }) =>
    new GitClusterGraphSource({
      git: new CliGitRemote({ logger: logger.child({ component: 'graph' }) }),
      logger: logger.child({ component: 'graph' }),
      workRoot: config.dataDir,
    }),
  catalogSource: ({ config, logger }) =>
    new GitCatalogSource({
      git: new CliGitRemote({ logger: logger.child({ component: 'catalog' }) }),
      logger: logger.child({ component: 'catalog' }),
      workRoot: config.dataDir,
    }),
  fleetSource: async ({ config, logger }) =>
    new GitFleetSource({
      git: new CliGitRemote({ logger: logger.child({ component: 'fleet' }) }),
      reference: config.referenceEnvironment,
      logger: logger.child({ component: 'fleet' }),
      workRoot: config.dataDir,
    }),
};

/** An image reference ending in a sha256 digest: what runs cannot change when a tag moves. */
const PINNED_BY_DIGEST = /@sha256:[a-f0-9]{64}$/;

const unwiredPreviewer: ScaffoldPreviewer = {
  async preview() {
    throw new UnavailableError('dry run is not wired yet');
  },
};

/** A running service, as `serve` leaves it. */
export interface RunningService {
  readonly app: FastifyInstance;
  /** Where it listens, e.g. `http://127.0.0.1:8080`. */
  readonly address: string;
  /** Graceful stop: stop accepting, end followed log streams, stop the monitor and local runs, close the store. */
  close(): Promise<void>;
}

/** How {@link startService} is started besides its configuration. */
export interface StartServiceOptions {
  readonly plugins?: ServePlugins;
  readonly logger?: ReturnType<typeof createPino>;
  /** Where the embedded mode's start-up notice (dashboard URL, generated token) goes. @default stderr */
  readonly notice?: (text: string) => void;
  /** Whether `notice` reaches a terminal, the only place a generated token is printed. @default whether stderr is a TTY */
  readonly noticeOnTerminal?: boolean;
}

/**
 * Starts the service with `config`.
 * @throws UnavailableError when the database or the Kubernetes API cannot be reached
 */
export async function startService(config: ServiceConfig, options: StartServiceOptions = {}): Promise<RunningService> {
  const plugins = options.plugins ?? defaultPlugins;
  const pino = options.logger ?? createPino({ level: config.logLevel, pretty: process.stdout.isTTY === true, base: { service: 'gitops-scaffolder' } });
  const logger = loggerFromPino(pino);

  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  // One replica is the only writer, so a write-through cache of runs is coherent:
  // GETs of a run cost no round trip (see CachedRunStore).
  const pgStore = await PgRunStore.open({
    ...(config.databaseUrl === undefined ? { dataDir: join(config.dataDir, 'pgdata') } : { databaseUrl: config.databaseUrl }),
    logger: logger.child({ component: 'store' }),
  });
  const store = new CachedRunStore({ store: pgStore });

  const cleanups: (() => Promise<void>)[] = [() => store.close()];
  try {
    let kubeConfig: KubeConfig | undefined;
    const clusterConfig = (): KubeConfig => {
      if (kubeConfig === undefined) {
        kubeConfig = new KubeConfig();
        // The service's own ServiceAccount in a cluster; a developer's kubeconfig outside.
        if (process.env.KUBERNETES_SERVICE_HOST) kubeConfig.loadFromCluster();
        else kubeConfig.loadFromDefault();
      }
      return kubeConfig;
    };

    // The landing queue's key for the service and its runners: SCAFFOLD_QUEUE_KEY(_FILE), else kept in the data directory.
    const queueKey = (await secretFromEnvOrFile(process.env, RUNNER_ENV.queueKey)) ?? (await ensureQueueKey(config.dataDir));
    parseQueueKey(queueKey, RUNNER_ENV.queueKey);
    let executor: RunExecutor;
    if (config.executor === 'local') {
      // Runs waiting for a slot are rows of the store: a restart or a crash does not lose them.
      const local = new LocalExecutor({
        runnerCommand: runnerCommand(),
        dataDir: config.dataDir,
        logger: logger.child({ component: 'local-executor' }),
        landedCommits: readLandedCommits,
        queueKey,
        queue: pgStore.localRunQueue(queueKey),
      });
      cleanups.unshift(() => local.close());
      // Runs a stopped or crashed service left waiting; the monitor's first pass then follows them.
      await local.resume();
      executor = local;
    } else {
      // A tag can be moved by whoever controls the registry; every run's Job, with
      // the run's git and cluster credentials, would then start the new image.
      if (!PINNED_BY_DIGEST.test(config.runnerImage)) {
        logger.warn(
          { runnerImage: config.runnerImage },
          'the runner image is not pinned by digest: set SCAFFOLD_RUNNER_IMAGE to repository:tag@sha256:… (chart: runnerImage.digest) so runs start exactly the image you reviewed',
        );
      }
      executor = new KubeJobExecutor({
        kubeConfig: clusterConfig(),
        namespace: config.jobNamespace,
        image: config.runnerImage,
        serviceAccountName: config.runnerServiceAccount,
        tmpSizeLimit: config.runnerTmpSizeLimit,
        scratchSizeLimit: config.runnerScratchSizeLimit,
        memoryLimit: config.runnerMemoryLimit,
        ...(config.runnerImagePullSecrets.length > 0 ? { imagePullSecrets: config.runnerImagePullSecrets } : {}),
        queueKey,
        logger: logger.child({ component: 'kube-executor' }),
      });
    }

    // Embedded mode without API_TOKENS: a token generated at first start (the config allows it only outside a cluster).
    const embeddedToken: EmbeddedApiToken | undefined =
      config.authMode === 'static' && config.apiTokens.length === 0 ? await ensureEmbeddedApiToken(config.dataDir) : undefined;
    const authenticator: Authenticator =
      config.authMode === 'static'
        ? new StaticTokenAuthenticator(embeddedToken === undefined ? config.apiTokens : [embeddedToken.token])
        : new TokenReviewAuthenticator({
            kubeConfig: clusterConfig(),
            allowed: config.allowedServiceAccounts,
            ...(config.tokenReviewAudiences.length > 0 ? { audiences: config.tokenReviewAudiences } : {}),
            logger: logger.child({ component: 'auth' }),
          });
    // Static tokens are whole credentials; with TokenReview, Kubernetes RBAC decides each action.
    const authorizer: Authorizer =
      config.authMode === 'static'
        ? new AllowAllAuthorizer()
        : new SubjectAccessReviewAuthorizer({ kubeConfig: clusterConfig(), logger: logger.child({ component: 'auth' }) });

    const monitor = new RunMonitor({ store, executor, logger: logger.child({ component: 'monitor' }) });
    const catalogSource = plugins.catalogSource?.({ config, logger });
    const service = new RunService({
      store,
      executor,
      previewer: plugins.previewer?.({ config, logger }) ?? unwiredPreviewer,
      ...defaultRepositoryOf(config, plugins, logger),
      reference: config.referenceEnvironment,
      logger: logger.child({ component: 'service' }),
      tracker: monitor,
      // Upgrade and removal runs open their requests with the service's own forge credentials, never a caller's.
      fleetRunSecrets: fleetRunSecrets(await serviceForgeAuth(process.env)),
      kubeconfigSecretRefs: config.executor === 'kubernetes',
      repositoryPolicy: {
        scp: false,
        // Loopback is this host for a local run; inside a runner pod it would be the pod itself.
        plainTransports: config.executor === 'local' ? 'loopback' : 'never',
        localRepositories: [],
        allowList: config.allowedRepositoryUrls,
      },
      ...(catalogSource === undefined ? {} : { catalogSource }),
    });

    const stopMonitor = new AbortController();
    await monitor.start(stopMonitor.signal);
    cleanups.unshift(async () => {
      stopMonitor.abort();
      await monitor.idle();
    });

    const graphSource = plugins.graphSource?.({ config, logger });
    const fleetSource = await plugins.fleetSource?.({ config, logger });
    const app = await createHttpApp({
      allowedRepositoryUrls: config.allowedRepositoryUrls,
      service,
      authenticator,
      authorizer,
      store,
      pendingRunWrites: () => monitor.pendingWrites(),
      logger: pino,
      metricsPublic: config.metricsPublic,
      bodyLimit: config.bodyLimitBytes,
      requestTimeoutMs: config.requestTimeoutMs,
      ...(graphSource === undefined ? {} : { graphSource }),
      ...(catalogSource === undefined ? {} : { catalogSource }),
      ...(fleetSource === undefined ? {} : { fleetSource, rolloutStore: pgStore.rollouts() }),
      controllerCertificates: new KubeControllerCertificateSource({ logger: logger.child({ component: 'sealing-check' }) }),
    });
    cleanups.unshift(() => app.close());
    const address = await app.listen({ port: config.port, host: config.host });
    logger.info(
      { address, executor: config.executor, auth: config.authMode, database: config.databaseUrl === undefined ? 'pglite' : 'postgresql' },
      'gitops-scaffolder listening',
    );
    // Straight to the terminal, not the log: the generated token is printed once, to whoever started the service.
    if (config.authMode === 'static')
      (options.notice ?? ((text: string) => process.stderr.write(text)))(
        embeddedStartupNotice(`${address}${UI_PREFIX}`, embeddedToken, options.noticeOnTerminal ?? process.stderr.isTTY === true),
      );

    let closing: Promise<void> | undefined;
    return {
      app,
      address,
      close: () => (closing ??= runCleanups(cleanups, logger)),
    };
  } catch (error) {
    await runCleanups(cleanups, logger);
    throw error;
  }
}

async function runCleanups(cleanups: readonly (() => Promise<void>)[], logger: Logger): Promise<void> {
  for (const cleanup of cleanups) {
    try {
      await cleanup();
    } catch (error) {
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'shutdown step failed');
    }
  }
}

function defaultRepositoryOf(config: ServiceConfig, plugins: ServePlugins, logger: Logger): { defaultRepository?: DefaultRepository } {
  if (config.defaultGitopsRepoUrl !== undefined) {
    const url = config.defaultGitopsRepoUrl;
    return { defaultRepository: { ensure: async () => url } };
  }
  // A repository under the data directory is only reachable by local runs.
  if (config.executor !== 'local' || plugins.seedDefaultRepository === undefined) return {};
  const seed = plugins.seedDefaultRepository;
  let seeding: Promise<string> | undefined;
  return {
    defaultRepository: {
      ensure: () => {
        seeding ??= seed({ dataDir: config.dataDir, logger }).catch((error: unknown) => {
          seeding = undefined; // let the next request try again
          throw error;
        });
        return seeding;
      },
    },
  };
}

/**
 * scaffold-runner as package.json's bin runs it: the bundle (dist/bundle, scripts/bundle.mjs) when it was built
 * with or after this file, else the compiled runner-cli.js beside this file, or the .ts source through tsx when
 * running from src/. (A bundle older than this file is from an earlier build: its code is not this service's.)
 */
function runnerCommand(): RunnerCommand {
  const here = fileURLToPath(import.meta.url);
  // The loader is named by absolute URL: the runner's working directory is its run directory, where `tsx` does not resolve.
  if (here.endsWith('.ts')) return { command: process.execPath, args: ['--import', import.meta.resolve('tsx'), join(dirname(here), 'runner-cli.ts')] };
  const bundled = join(dirname(here), '..', 'bundle', 'scaffold-runner.js');
  const builtAt = (file: string): number => statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Number.NEGATIVE_INFINITY;
  if (builtAt(bundled) >= builtAt(here)) return { command: process.execPath, args: [bundled] };
  return { command: process.execPath, args: [join(dirname(here), 'runner-cli.js')] };
}
