/**
 * The forge client for a run's repository: which repository the forge calls it
 * and where its API lives follow from the repository URL unless `api_url` says.
 */
import { ValidationError } from '../errors.js';
import { type Logger, silentLogger } from '../logger.js';
import { GITHUB_APP_FORGES, forgeDescriptor } from '../model/forges.js';
import { checkApiUrl, defaultApiUrl, repositoryPathOf } from './delivery-settings.js';
import type { ForgeClient, ForgeName } from './forge-client.js';
import { FORGE_CLIENTS } from './forge-clients.js';
import type { GitHubAuth } from './github-forge.js';

/** How to call the forge: a token (also the one git pushes with), or a GitHub App installation. */
export type ForgeAuth = GitHubAuth;

export interface ForgeClientOptions {
  readonly forge: ForgeName;
  readonly repositoryUrl: string;
  readonly apiUrl?: string;
  readonly auth: ForgeAuth;
  readonly logger?: Logger;
}

export function createForgeClient(options: ForgeClientOptions): ForgeClient {
  const path = repositoryPathOf(options.repositoryUrl);
  const apiUrl = checkApiUrl(options.apiUrl ?? defaultApiUrl(options.forge, options.repositoryUrl));
  const logger = options.logger ?? silentLogger;
  const slash = path.lastIndexOf('/');
  const [owner, repo] = [path.slice(0, slash), path.slice(slash + 1)];
  if (options.auth.kind !== 'token' && !forgeDescriptor(options.forge).acceptsGithubApp) {
    const forges = GITHUB_APP_FORGES.map((forge) => `"${forge}"`).join(' or ');
    throw new ValidationError([{ field: 'delivery.forge', message: `GitHub App credentials only work with forge ${forges}` }]);
  }
  return FORGE_CLIENTS[options.forge]({ apiUrl, path, owner, repo, auth: options.auth, logger });
}
