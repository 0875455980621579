/**
 * The service as `serve --executor local` wires it, for fleet tests: runs in
 * PGlite, each run a real `scaffold-runner` child process (through tsx) under
 * the LocalExecutor and the RunMonitor, the real GitFleetSource and HTTP app.
 * Upgrades and removals are runs, so testing them means running the runner.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { FleetRunSecrets } from '../../src/delivery/fleet-run-secrets.js';
import { PgRunStore } from '../../src/db/pg-run-store.js';
import { CliGitRemote } from '../../src/git/cli-git-remote.js';
import { readLandedCommits } from '../../src/git/landed-commits.js';
import { createHttpApp } from '../../src/http/create-http-app.js';
import { LocalExecutor } from '../../src/local/local-executor.js';
import type { Logger } from '../../src/logger.js';
import { RunMonitor } from '../../src/service/run-monitor.js';
import { RunService } from '../../src/service/run-service.js';
import { StaticTokenAuthenticator } from '../../src/service/static-token-authenticator.js';
import { GitFleetSource } from '../../src/sources/git-fleet-source.js';
import { REPO_ROOT } from './runner.js';
import { unusedPreviewer } from './unused-executor.js';

/** What a fleet test talks to. */
export interface LocalFleetService {
  readonly app: FastifyInstance;
  readonly store: PgRunStore;
  readonly service: RunService;
  /** Stops following runs, waits for the local runners, closes the app and the store. */
  close(): Promise<void>;
}

export interface LocalFleetServiceOptions {
  /** Where runs keep their working copies and results. */
  readonly dataDir: string;
  readonly apiToken: string;
  /** The repository a request naming none uses. */
  readonly defaultRepositoryUrl?: string;
  /** The service's forge credentials for pull_request fleet runs. @default push only */
  readonly fleetRunSecrets?: FleetRunSecrets;
  /** Runner settings (e.g. SCAFFOLD_MERGE_POLL_INTERVAL). */
  readonly runnerEnv?: Readonly<Record<string, string>>;
  readonly logger?: Logger;
}

export async function startLocalFleetService(options: LocalFleetServiceOptions): Promise<LocalFleetService> {
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const store = await PgRunStore.open();
  const executor = new LocalExecutor({
    runnerCommand: { command: process.execPath, args: ['--import', import.meta.resolve('tsx'), join(REPO_ROOT, 'src/runner-cli.ts')] },
    dataDir: options.dataDir,
    landedCommits: readLandedCommits,
    ...(options.runnerEnv !== undefined ? { extraEnv: options.runnerEnv } : {}),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  const monitor = new RunMonitor({ store, executor, options: { reconcileIntervalMs: 200, recheckDelayMs: 50 } });
  const service = new RunService({
    store,
    executor,
    previewer: unusedPreviewer,
    reference: 'development',
    tracker: monitor,
    ...(options.defaultRepositoryUrl !== undefined ? { defaultRepository: { ensure: async () => options.defaultRepositoryUrl! } } : {}),
    ...(options.fleetRunSecrets !== undefined ? { fleetRunSecrets: options.fleetRunSecrets } : {}),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  const fleetSource = new GitFleetSource({ git: new CliGitRemote({}), reference: 'development', workRoot: options.dataDir, ttlMs: 0 });
  const app = await createHttpApp({
    service,
    authenticator: new StaticTokenAuthenticator([options.apiToken]),
    store,
    fleetSource,
    rolloutStore: store.rollouts(),
  });
  const stop = new AbortController();
  await monitor.start(stop.signal);
  return {
    app,
    store,
    service,
    async close() {
      await app.close();
      stop.abort();
      await monitor.idle();
      await executor.close();
      await store.close();
    },
  };
}
