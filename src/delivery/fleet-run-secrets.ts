/**
 * What a fleet run (an upgrade, a removal) is given to reach the forge: the
 * service's own credentials (`SCAFFOLD_FORGE_TOKEN` or its GitHub App), never
 * a caller's. They go only with a pull_request delivery, and only to the one
 * forge API they belong to: a request whose repository (or `api_url`) points
 * elsewhere is refused, as a caller could otherwise name a host of theirs and
 * receive the token. A push carries the token only to an https repository on
 * the token's own forge; otherwise it goes with no credentials (a repository
 * that takes anonymous pushes, or an ssh key in the runner's environment).
 */
import { UnavailableError, ValidationError } from '../errors.js';
import { parseRepositoryUrl } from '../model/repository-url.js';
import type { RunSecrets } from '../run/run-record.js';
import { checkApiUrl, defaultApiUrl } from './delivery-settings.js';
import type { DeliverySettings } from '../run/delivery.js';
import { FORGES, forgeDescriptor } from '../model/forges.js';
import { SERVICE_FORGE_CREDENTIALS, type ServiceForgeAuth } from './service-forge-auth.js';

/** The secrets of a fleet run delivered as `settings` ask to `repositoryUrl`. @throws as {@link fleetRunSecrets} says */
export type FleetRunSecrets = (settings: DeliverySettings | undefined, repositoryUrl: string) => RunSecrets;

/**
 * The secrets for fleet runs with `service`'s credentials.
 * The returned function throws UnavailableError for pull_request without
 * credentials, and ValidationError when the repository's forge API is not theirs.
 */
export function fleetRunSecrets(service: ServiceForgeAuth): FleetRunSecrets {
  return (settings, repositoryUrl) => {
    const { auth, apiUrl } = service;
    if (settings === undefined || settings.mode === 'push') {
      // A push needs no API; the token goes along only to an https repository on its own forge. An App's token is minted for a request's run only.
      return auth?.kind === 'token' && apiUrl !== undefined && onForgeOf(repositoryUrl, apiUrl) ? { repositoryCredentials: { token: auth.token } } : {};
    }
    if (auth === undefined || apiUrl === undefined || settings.forge === undefined) {
      throw new UnavailableError(`this service has no forge credentials: pull_request delivery of upgrades and removals needs ${SERVICE_FORGE_CREDENTIALS}`);
    }
    const bound = checkApiUrl(apiUrl);
    const asked = checkApiUrl(settings.apiUrl ?? defaultApiUrl(settings.forge, repositoryUrl));
    if (asked !== bound)
      throw new ValidationError([
        { field: 'delivery.api_url', message: `the service's forge credentials are only sent to ${apiUrl}; this repository's forge API is ${asked}` },
      ]);
    // The run also pushes its branch with them: only to an https repository on that same forge (an explicit api_url proves nothing about git's host).
    if (parseRepositoryUrl(repositoryUrl, 'repository_url').kind !== 'https' || checkApiUrl(defaultApiUrl(settings.forge, repositoryUrl)) !== bound) {
      throw new ValidationError([
        { field: 'repository_url', message: `the service's forge credentials only push to https repositories of the forge at ${apiUrl}` },
      ]);
    }
    if (auth.kind === 'token') return { repositoryCredentials: { token: auth.token } };
    if (!forgeDescriptor(settings.forge).acceptsGithubApp)
      throw new ValidationError([{ field: 'delivery.forge', message: `the service's GitHub App cannot open requests on ${settings.forge}` }]);
    return { githubApp: { appId: auth.appId, installationId: auth.installationId, privateKey: auth.privateKey } };
  };
}

/** Whether `repositoryUrl` is an https repository of the forge whose API is `apiUrl` (whichever kind of forge it is). */
function onForgeOf(repositoryUrl: string, apiUrl: string): boolean {
  if (parseRepositoryUrl(repositoryUrl, 'repository_url').kind !== 'https') return false;
  const bound = checkApiUrl(apiUrl);
  return FORGES.some((forge) => checkApiUrl(defaultApiUrl(forge, repositoryUrl)) === bound);
}
