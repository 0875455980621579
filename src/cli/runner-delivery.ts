/**
 * The runner's delivery, built from its settings and the credentials in its
 * environment (a token, or a GitHub App).
 */
import { ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import { RUNNER_ENV } from '../run-contract/runner-inputs.js';
import type { GitCredentials } from '../run/ports.js';
import type { ForgeAuth } from '../delivery/create-delivery.js';
import type { DeliverySettings, PassDelivery } from '../run/delivery.js';
import { githubAppAuth, type GitHubAppNames, type SecretReader } from '../delivery/github-app-auth.js';
import { pushDelivery } from '../delivery/push-delivery.js';
import { forgeDescriptor } from '../model/forges.js';

/** GitHub App credentials, from the environment or files (`NAME_FILE`), never flags: the run contract's names. */
export const GITHUB_APP_ENV: GitHubAppNames = {
  appId: RUNNER_ENV.githubAppId,
  installationId: RUNNER_ENV.githubAppInstallationId,
  privateKey: RUNNER_ENV.githubAppPrivateKey,
} as const;

export interface RunnerDeliveryOptions {
  readonly repositoryUrl: string;
  /** The repository credentials: the token is also the forge API token. */
  readonly credentials: GitCredentials | undefined;
  /** Reads a secret from `NAME` or the file `NAME_FILE`. */
  readonly readSecret: SecretReader;
  readonly logger: Logger;
  readonly pollIntervalMs?: number;
}

/**
 * The runner's delivery, and the credentials git pushes with: with a GitHub
 * App, an installation token minted here (valid one hour) replaces them.
 */
export async function runnerDelivery(
  settings: DeliverySettings,
  options: RunnerDeliveryOptions,
): Promise<{ delivery: PassDelivery; credentials: GitCredentials | undefined }> {
  const app =
    settings.forge !== undefined && forgeDescriptor(settings.forge).acceptsGithubApp ? await githubAppAuth(options.readSecret, GITHUB_APP_ENV) : undefined;
  if (settings.mode === 'push' && !app) return { delivery: pushDelivery, credentials: options.credentials };
  const token =
    options.credentials?.kind === 'token' ? options.credentials.token : options.credentials?.kind === 'basic' ? options.credentials.password : undefined;
  const auth: ForgeAuth | undefined = app ?? (token ? { kind: 'token', token } : undefined);
  if (!auth || !settings.forge) {
    throw new ValidationError([
      { field: 'delivery', message: 'pull_request needs a forge token (SCAFFOLD_GIT_TOKEN, also used to push) or a GitHub App (SCAFFOLD_GITHUB_APP_*)' },
    ]);
  }
  // The forge clients (Octokit and the others) load only here: a pushed run needs none of them.
  const [{ createForgeClient }, { GitHubForge }, { PullRequestDelivery }] = await Promise.all([
    import('../delivery/create-delivery.js'),
    import('../delivery/github-forge.js'),
    import('../delivery/pull-request-delivery.js'),
  ]);
  const forge = createForgeClient({
    forge: settings.forge,
    repositoryUrl: options.repositoryUrl,
    auth,
    logger: options.logger,
    ...(settings.apiUrl ? { apiUrl: settings.apiUrl } : {}),
  });
  let credentials = options.credentials;
  if (app && forge instanceof GitHubForge && credentials?.kind !== 'ssh')
    credentials = { kind: 'token', token: await forge.gitToken(), username: 'x-access-token' };
  const delivery =
    settings.mode === 'push'
      ? pushDelivery
      : new PullRequestDelivery({
          forge,
          autoMerge: settings.autoMerge ?? false,
          logger: options.logger,
          ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
        });
  return { delivery, credentials };
}
