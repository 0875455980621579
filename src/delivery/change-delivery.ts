/**
 * How the service delivers a fleet change it committed itself (an upgrade
 * wave, a removal): pushed straight to the branch, or through its own
 * pull/merge request exactly as a scaffold pass is (PullRequestDelivery).
 * The service calls its forge with a token or a GitHub App, from its own
 * environment (or the files of its Secret), never a request.
 * A direct push a protected branch refuses fails with the same error as a
 * run's, pointing at pull_request mode.
 */
import { UnavailableError, ValidationError } from '../errors.js';
import { type Logger, silentLogger } from '../logger.js';
import { parseRepositoryUrl } from '../model/repository-url.js';
import { secretFromEnvOrFile } from '../read-input-file.js';
import type { GitCredentials } from '../runner/ports.js';
import { createForgeClient, type ForgeAuth, type ForgeClientOptions } from './create-delivery.js';
import type { ForgeClient } from './forge-client.js';
import { callForge } from './forge-error.js';
import { githubAppAuth } from './github-app-auth.js';
import { GitHubForge } from './github-forge.js';
import { checkApiUrl, defaultApiUrl } from './delivery-settings.js';
import type { DeliveredPass, DeliveryMode, DeliverySettings, ReviewDelivery } from './delivery.js';
import { PullRequestDelivery } from './pull-request-delivery.js';
import { isProtectedBranchRefusal, protectedBranchError } from './push-delivery.js';

/** Delivers a committed fleet change. */
export interface ChangeDelivery {
  readonly mode: DeliveryMode;
  /**
   * What the clone the change is written in pushes with (a GitHub App's
   * installation token is minted on each call); absent: the service's own git access.
   */
  credentials?(): Promise<GitCredentials>;
  /**
   * Brings the workspace's HEAD onto `change.branch` and leaves the workspace on the branch's new head.
   * @throws ForbiddenError when the branch refuses a direct push (push mode)
   * @throws ConflictError when the request was closed without being merged
   */
  deliver(change: ReviewDelivery): Promise<DeliveredPass>;
}

/** Today's way: one push (a concurrent writer is rebased over: a fleet change touches only its clusters' paths). */
export const pushChangeDelivery: ChangeDelivery = {
  mode: 'push',
  async deliver(change: ReviewDelivery): Promise<DeliveredPass> {
    try {
      return await change.workspace.push(change.signal ? { signal: change.signal } : {});
    } catch (error) {
      throw isProtectedBranchRefusal(error) ? protectedBranchError(change.branch, error) : error;
    }
  },
};

/** The delivery a change asks for (absent settings: push) against `repositoryUrl`. */
export type ChangeDeliveries = (settings: DeliverySettings | undefined, repositoryUrl: string) => ChangeDelivery;

/** How the service reaches its forge for fleet changes. */
export interface ForgeChangeDeliveryOptions {
  /** The service's forge credentials; without them pull_request is refused. */
  readonly auth?: ForgeAuth;
  /**
   * The one forge API the credentials belong to. The token goes nowhere else:
   * a request whose repository (or `api_url`) points at another API is refused,
   * as a caller could otherwise name a host of theirs and receive the token.
   */
  readonly apiUrl?: string;
  readonly logger?: Logger;
  /** Pause between looks at an open request. @default 15000 */
  readonly pollIntervalMs?: number;
  /** Makes the forge client (tests reach their double through it). @default createForgeClient */
  readonly createForge?: (options: ForgeClientOptions) => ForgeClient;
}

/**
 * The service's own forge credentials for upgrades and removals (a token, or a
 * GitHub App whose values may also come from `NAME_FILE`), and the API they
 * belong to: its environment, never a request.
 */
export const SERVICE_FORGE_ENV = {
  token: 'SCAFFOLD_FORGE_TOKEN',
  apiUrl: 'SCAFFOLD_FORGE_API_URL',
  githubApp: { appId: 'SCAFFOLD_FORGE_GITHUB_APP_ID', installationId: 'SCAFFOLD_FORGE_GITHUB_APP_INSTALLATION_ID', privateKey: 'SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY' },
} as const;

/** Every variable name the service reads for its forge credentials (the App's also as `NAME_FILE`). */
export const SERVICE_FORGE_ENV_NAMES: readonly string[] = [
  SERVICE_FORGE_ENV.token,
  SERVICE_FORGE_ENV.apiUrl,
  ...Object.values(SERVICE_FORGE_ENV.githubApp).flatMap((name) => [name, `${name}_FILE`]),
];

/** How messages name the service's forge credentials. */
export const SERVICE_FORGE_CREDENTIALS = `${SERVICE_FORGE_ENV.token} or a GitHub App (SCAFFOLD_FORGE_GITHUB_APP_*), with ${SERVICE_FORGE_ENV.apiUrl}`;

/**
 * The service's forge credentials from its environment: none, or a token or a
 * GitHub App (never both) with the API they belong to.
 * @throws ValidationError naming the variable at fault: a token and an App, a partial App, credentials without their API, an API URL that is not https
 */
export async function serviceForgeAuth(env: Readonly<Record<string, string | undefined>>): Promise<Pick<ForgeChangeDeliveryOptions, 'auth' | 'apiUrl'>> {
  const token = env[SERVICE_FORGE_ENV.token]?.trim();
  const app = await githubAppAuth((name) => secretFromEnvOrFile(env, name), SERVICE_FORGE_ENV.githubApp);
  if (token && app) {
    throw new ValidationError([{ field: SERVICE_FORGE_ENV.token, message: `is set together with a GitHub App (${SERVICE_FORGE_ENV.githubApp.appId}): set one of them` }]);
  }
  const auth: ForgeAuth | undefined = app ?? (token ? { kind: 'token', token } : undefined);
  if (auth === undefined) return {};
  const apiUrl = env[SERVICE_FORGE_ENV.apiUrl]?.trim();
  const given = auth.kind === 'token' ? SERVICE_FORGE_ENV.token : 'a GitHub App';
  if (!apiUrl) throw new ValidationError([{ field: SERVICE_FORGE_ENV.apiUrl, message: `is required with ${given}: the forge API the credentials are sent to, e.g. https://api.github.com` }]);
  return { auth, apiUrl: checkApiUrl(apiUrl, SERVICE_FORGE_ENV.apiUrl) };
}

/**
 * The credentials also push the change's branch, but only to an https
 * repository whose own forge API (as derived from its host) is theirs: an
 * explicit `api_url` proves nothing about the host git would send them to. A
 * GitHub App pushes with an installation token minted for the push.
 */
function gitCredentialsFor(auth: ForgeAuth, forge: ForgeClient, repositoryUrl: string, apiUrl: string): (() => Promise<GitCredentials>) | undefined {
  if (parseRepositoryUrl(repositoryUrl, 'repository_url').kind !== 'https' || checkApiUrl(defaultApiUrl(forge.forge, repositoryUrl)) !== apiUrl) return undefined;
  if (auth.kind === 'token') return async () => ({ kind: 'token', token: auth.token });
  if (!(forge instanceof GitHubForge)) return undefined;
  const statusOf = (error: unknown) => (error as { status?: number }).status;
  return async () => ({ kind: 'token', token: await callForge('GitHub', 'minting an installation token', statusOf, () => forge.gitToken()), username: 'x-access-token' });
}

/** The service's deliveries: push, or pull requests called with `options.auth` at `options.apiUrl` only. */
export function forgeChangeDeliveries(options: ForgeChangeDeliveryOptions): ChangeDeliveries {
  const logger = options.logger ?? silentLogger;
  return (settings, repositoryUrl) => {
    if (settings === undefined || settings.mode === 'push') return pushChangeDelivery;
    if (options.auth === undefined || options.apiUrl === undefined || settings.forge === undefined) {
      throw new UnavailableError(`pull_request delivery of upgrades and removals needs the service to have forge credentials (${SERVICE_FORGE_CREDENTIALS})`);
    }
    const apiUrl = checkApiUrl(settings.apiUrl ?? defaultApiUrl(settings.forge, repositoryUrl));
    if (apiUrl !== checkApiUrl(options.apiUrl)) {
      throw new ValidationError([{ field: 'delivery.api_url', message: `the service's forge token is only sent to ${options.apiUrl}; this repository's forge API is ${apiUrl}` }]);
    }
    const forge = (options.createForge ?? createForgeClient)({ forge: settings.forge, repositoryUrl, auth: options.auth, logger, apiUrl });
    const requests = new PullRequestDelivery({ forge, autoMerge: settings.autoMerge ?? false, logger, ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}) });
    const credentials = gitCredentialsFor(options.auth, forge, repositoryUrl, apiUrl);
    return { mode: 'pull_request', ...(credentials ? { credentials } : {}), deliver: (change) => requests.deliverReview(change) };
  };
}
