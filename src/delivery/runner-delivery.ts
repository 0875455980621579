/**
 * Delivery settings between the service and the runner: the one place their
 * environment variables are named (the executors set them, the runner's flags
 * read them), their validation, and the runner's delivery built from them.
 */
import { ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { GitCredentials } from '../runner/ports.js';
import { checkApiUrl, createForgeClient, type DeliverySettings, type ForgeAuth } from './create-delivery.js';
import { DELIVERY_MODES, type DeliveryMode, type PassDelivery } from './delivery.js';
import { FORGES, type ForgeName } from './forge-client.js';
import { GitHubForge } from './github-forge.js';
import { PullRequestDelivery } from './pull-request-delivery.js';
import { pushDelivery } from './push-delivery.js';

/** The runner's environment variables for delivery (each also a flag, see runner-cli). */
export const DELIVERY_ENV = {
  mode: 'SCAFFOLD_DELIVERY',
  forge: 'SCAFFOLD_FORGE',
  apiUrl: 'SCAFFOLD_FORGE_API_URL',
  autoMerge: 'SCAFFOLD_AUTO_MERGE',
} as const;

/** GitHub App credentials, from the environment or files (`NAME_FILE`), never flags. */
export const GITHUB_APP_ENV = {
  appId: 'SCAFFOLD_GITHUB_APP_ID',
  installationId: 'SCAFFOLD_GITHUB_APP_INSTALLATION_ID',
  privateKey: 'SCAFFOLD_GITHUB_APP_PRIVATE_KEY',
} as const;

/** What the executors add to a runner's environment for `settings` (nothing for push, the default). */
export function deliveryEnv(settings: DeliverySettings | undefined): Record<string, string> {
  if (!settings || settings.mode === 'push') return {};
  return {
    [DELIVERY_ENV.mode]: settings.mode,
    ...(settings.forge ? { [DELIVERY_ENV.forge]: settings.forge } : {}),
    ...(settings.apiUrl ? { [DELIVERY_ENV.apiUrl]: settings.apiUrl } : {}),
    [DELIVERY_ENV.autoMerge]: String(settings.autoMerge ?? false),
  };
}

/** Raw settings as a request or flags give them. */
export interface RawDeliverySettings {
  readonly mode?: string;
  readonly forge?: string;
  readonly apiUrl?: string;
  readonly autoMerge?: boolean;
}

/**
 * Checks delivery settings; `fields` names them as the caller's user typed them.
 * @throws ValidationError listing every problem
 */
export function parseDeliverySettings(
  raw: RawDeliverySettings,
  fields: { readonly mode: string; readonly forge: string; readonly apiUrl: string } = { mode: 'delivery.mode', forge: 'delivery.forge', apiUrl: 'delivery.api_url' },
): DeliverySettings {
  const issues: { field: string; message: string }[] = [];
  const mode = (raw.mode ?? 'push') as DeliveryMode;
  if (!DELIVERY_MODES.includes(mode)) issues.push({ field: fields.mode, message: `must be one of ${DELIVERY_MODES.join(', ')}` });
  const forge = raw.forge as ForgeName | undefined;
  if (forge !== undefined && !FORGES.includes(forge)) issues.push({ field: fields.forge, message: `must be one of ${FORGES.join(', ')}` });
  if (mode === 'pull_request' && forge === undefined) issues.push({ field: fields.forge, message: 'is required with pull_request: github, gitlab or gitea' });
  let apiUrl: string | undefined;
  if (raw.apiUrl !== undefined) {
    try {
      apiUrl = checkApiUrl(raw.apiUrl, fields.apiUrl);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...error.issues);
    }
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return { mode, autoMerge: raw.autoMerge ?? false, ...(forge ? { forge } : {}), ...(apiUrl ? { apiUrl } : {}) };
}

export interface RunnerDeliveryOptions {
  readonly repositoryUrl: string;
  /** The repository credentials: the token is also the forge API token. */
  readonly credentials: GitCredentials | undefined;
  /** Reads a secret from `NAME` or the file `NAME_FILE`. */
  readonly readSecret: (name: string) => Promise<string | undefined>;
  readonly logger: Logger;
  readonly pollIntervalMs?: number;
}

async function githubAppAuth(readSecret: RunnerDeliveryOptions['readSecret']): Promise<ForgeAuth | undefined> {
  const [appId, installationId, privateKey] = await Promise.all([readSecret(GITHUB_APP_ENV.appId), readSecret(GITHUB_APP_ENV.installationId), readSecret(GITHUB_APP_ENV.privateKey)]);
  if (appId === undefined && installationId === undefined && privateKey === undefined) return undefined;
  if (!appId || !installationId || !privateKey) {
    throw new ValidationError([{ field: 'SCAFFOLD_GITHUB_APP_*', message: 'a GitHub App needs its id, installation id and private key together' }]);
  }
  return { kind: 'app', appId, installationId, privateKey: `${privateKey}\n` };
}

/**
 * The runner's delivery, and the credentials git pushes with: with a GitHub
 * App, an installation token minted here (valid one hour) replaces them.
 */
export async function runnerDelivery(settings: DeliverySettings, options: RunnerDeliveryOptions): Promise<{ delivery: PassDelivery; credentials: GitCredentials | undefined }> {
  const app = settings.forge === 'github' ? await githubAppAuth(options.readSecret) : undefined;
  if (settings.mode === 'push' && !app) return { delivery: pushDelivery, credentials: options.credentials };
  const token = options.credentials?.kind === 'token' ? options.credentials.token : options.credentials?.kind === 'basic' ? options.credentials.password : undefined;
  const auth: ForgeAuth | undefined = app ?? (token ? { kind: 'token', token } : undefined);
  if (!auth || !settings.forge) {
    throw new ValidationError([{ field: 'delivery', message: 'pull_request needs a forge token (SCAFFOLD_GIT_TOKEN, also used to push) or a GitHub App (SCAFFOLD_GITHUB_APP_*)' }]);
  }
  const forge = createForgeClient({ forge: settings.forge, repositoryUrl: options.repositoryUrl, auth, logger: options.logger, ...(settings.apiUrl ? { apiUrl: settings.apiUrl } : {}) });
  let credentials = options.credentials;
  if (app && forge instanceof GitHubForge && credentials?.kind !== 'ssh') credentials = { kind: 'token', token: await forge.gitToken(), username: 'x-access-token' };
  const delivery =
    settings.mode === 'push'
      ? pushDelivery
      : new PullRequestDelivery({ forge, autoMerge: settings.autoMerge ?? false, logger: options.logger, ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}) });
  return { delivery, credentials };
}
