/**
 * The embedded main job: one whole scaffold on this machine, with no cluster,
 * no external database and no network. The target is a local bare repository
 * seeded with the reference platform; the sealing certificate is the caller's
 * or a local stand-in key kept in the data directory.
 */
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from '../logger.js';
import type { ClusterSpec } from '../model/cluster-spec.js';
import { CliGitRemote } from '../git/cli-git-remote.js';
import { ensureSeededBareRepository } from '../git/seed-repository.js';
import { platformDir, packageVersion } from '../package-paths.js';
import { runScaffold, verifierFor } from '../runner/run-scaffold.js';
import type { RunResult } from '../run/run-record.js';
import { ensureLocalSealingKey } from './local-sealing-key.js';
import { createWorkTreeVerifier } from '../workspace/verify-work-tree.js';
import { REFERENCE_ENVIRONMENT, DEFAULT_BRANCH } from '../model/defaults.js';

/** Inputs of {@link runLocalScaffold}. */
export interface LocalScaffoldOptions {
  /** Holds the default repository and the stand-in sealing key. */
  readonly dataDir: string;
  readonly cluster: ClusterSpec;
  /** @default 'development' */
  readonly reference?: string;
  /** @default the local bare repository `<dataDir>/gitops.git`, seeded on first use */
  readonly repositoryUrl?: string;
  /** @default 'main' */
  readonly branch?: string;
  /** @default the stand-in key in `<dataDir>/sealing/` */
  readonly certificatePem?: string;
  readonly registryAuth?: string;
  /** Failure notifications: the Provider type and its webhook address (sealed). */
  readonly notifications?: { readonly provider: string; readonly address: string };
  readonly rotateCredentials?: boolean;
  readonly logger: Logger;
  readonly signal?: AbortSignal;
}

/** Where the embedded default repository lives. */
export function defaultRepositoryPath(dataDir: string): string {
  return join(resolve(dataDir), 'gitops.git');
}

/**
 * Makes sure the embedded default repository exists, seeded with the reference platform.
 * @returns its file URL
 */
export async function ensureDefaultRepository(dataDir: string, logger: Logger): Promise<string> {
  const path = defaultRepositoryPath(dataDir);
  if (await ensureSeededBareRepository(path, platformDir())) {
    logger.info({ event: 'repository_seeded', repository: path }, `created the local GitOps repository ${path}, seeded with the reference platform`);
  }
  return pathToFileURL(path).href;
}

/**
 * Runs the seven steps against the local repository.
 * @throws StepError (see runScaffold) when a step fails
 */
export async function runLocalScaffold(options: LocalScaffoldOptions): Promise<RunResult & { readonly repositoryUrl: string }> {
  const { logger } = options;
  const repositoryUrl = options.repositoryUrl ?? (await ensureDefaultRepository(options.dataDir, logger));
  let certificatePem = options.certificatePem;
  if (certificatePem === undefined) {
    const key = await ensureLocalSealingKey(join(resolve(options.dataDir), 'sealing'));
    logger.info(
      { event: 'sealing_key', certificate: key.certificateFile, created: key.created },
      key.created
        ? `no cluster here: generated a local stand-in Sealed Secrets key in ${join(options.dataDir, 'sealing')} (keep tls.key private)`
        : `sealing with the local stand-in key ${key.certificateFile}`,
    );
    certificatePem = key.certificatePem;
  }
  const result = await runScaffold(
    {
      git: new CliGitRemote({ logger }),
      logger,
      verify: verifierFor(createWorkTreeVerifier()),
    },
    {
      id: randomUUID(),
      repositoryUrl,
      branch: options.branch ?? DEFAULT_BRANCH,
      cluster: options.cluster,
      reference: options.reference ?? REFERENCE_ENVIRONMENT,
      certificatePem,
      generatorVersion: packageVersion(),
      rotateCredentials: options.rotateCredentials ?? false,
      ...(options.registryAuth !== undefined ? { registryAuth: options.registryAuth } : {}),
      ...(options.notifications !== undefined ? { notifications: options.notifications } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
  return { ...result, repositoryUrl };
}
