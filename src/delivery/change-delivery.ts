/**
 * How the service delivers a fleet change it committed itself (an upgrade
 * wave, a removal): pushed straight to the branch, or through its own
 * pull/merge request exactly as a scaffold pass is (PullRequestDelivery).
 * A direct push a protected branch refuses fails with the same error as a
 * run's, pointing at pull_request mode.
 */
import { UnavailableError, ValidationError } from '../errors.js';
import { type Logger, silentLogger } from '../logger.js';
import { parseRepositoryUrl } from '../model/repository-url.js';
import type { GitCredentials } from '../runner/ports.js';
import { createForgeClient, type ForgeAuth } from './create-delivery.js';
import type { ForgeName } from './forge-client.js';
import { checkApiUrl, defaultApiUrl } from './delivery-settings.js';
import type { DeliveredPass, DeliveryMode, DeliverySettings, ReviewDelivery } from './delivery.js';
import { PullRequestDelivery } from './pull-request-delivery.js';
import { isProtectedBranchRefusal, protectedBranchError } from './push-delivery.js';

/** Delivers a committed fleet change. */
export interface ChangeDelivery {
  readonly mode: DeliveryMode;
  /** What the clone the change is written in pushes with; absent: the service's own git access. */
  readonly credentials?: GitCredentials;
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
}

/** The service's own forge token for upgrades and removals, and the API it belongs to: its environment, never a request. */
export const SERVICE_FORGE_ENV = { token: 'SCAFFOLD_FORGE_TOKEN', apiUrl: 'SCAFFOLD_FORGE_API_URL' } as const;

/**
 * The service's forge credentials from its environment: none, or a token with the API it belongs to.
 * @throws ValidationError for a token without its API, or an API URL that is not https
 */
export function serviceForgeAuth(env: Readonly<Record<string, string | undefined>>): Pick<ForgeChangeDeliveryOptions, 'auth' | 'apiUrl'> {
  const token = env[SERVICE_FORGE_ENV.token]?.trim();
  if (!token) return {};
  const apiUrl = env[SERVICE_FORGE_ENV.apiUrl]?.trim();
  if (!apiUrl) throw new ValidationError([{ field: SERVICE_FORGE_ENV.apiUrl, message: `is required with ${SERVICE_FORGE_ENV.token}: the forge API the token is sent to, e.g. https://api.github.com` }]);
  return { auth: { kind: 'token', token }, apiUrl: checkApiUrl(apiUrl, SERVICE_FORGE_ENV.apiUrl) };
}

/**
 * The token also pushes the change's branch, but only to an https repository
 * whose own forge API (as derived from its host) is the token's: an explicit
 * `api_url` proves nothing about the host git would send the token to.
 */
function gitCredentialsFor(auth: ForgeAuth, forge: ForgeName, repositoryUrl: string, apiUrl: string): GitCredentials | undefined {
  if (auth.kind !== 'token' || parseRepositoryUrl(repositoryUrl, 'repository_url').kind !== 'https') return undefined;
  return checkApiUrl(defaultApiUrl(forge, repositoryUrl)) === apiUrl ? { kind: 'token', token: auth.token } : undefined;
}

/** The service's deliveries: push, or pull requests called with `options.auth` at `options.apiUrl` only. */
export function forgeChangeDeliveries(options: ForgeChangeDeliveryOptions): ChangeDeliveries {
  const logger = options.logger ?? silentLogger;
  return (settings, repositoryUrl) => {
    if (settings === undefined || settings.mode === 'push') return pushChangeDelivery;
    if (options.auth === undefined || options.apiUrl === undefined || settings.forge === undefined) {
      throw new UnavailableError(`pull_request delivery of upgrades and removals needs the service to have a forge token (${SERVICE_FORGE_ENV.token}, ${SERVICE_FORGE_ENV.apiUrl})`);
    }
    const apiUrl = checkApiUrl(settings.apiUrl ?? defaultApiUrl(settings.forge, repositoryUrl));
    if (apiUrl !== checkApiUrl(options.apiUrl)) {
      throw new ValidationError([{ field: 'delivery.api_url', message: `the service's forge token is only sent to ${options.apiUrl}; this repository's forge API is ${apiUrl}` }]);
    }
    const forge = createForgeClient({ forge: settings.forge, repositoryUrl, auth: options.auth, logger, apiUrl });
    const requests = new PullRequestDelivery({ forge, autoMerge: settings.autoMerge ?? false, logger, ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}) });
    const credentials = gitCredentialsFor(options.auth, settings.forge, repositoryUrl, apiUrl);
    return { mode: 'pull_request', ...(credentials ? { credentials } : {}), deliver: (change) => requests.deliverReview(change) };
  };
}
