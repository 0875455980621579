/**
 * A run's delivery settings, pure: their validation (one rule for the API and
 * the runner), the repository path and API URL a forge is reached at, and the
 * environment variables that carry them from the executors to the runner.
 */
import { ValidationError } from '../errors.js';
import { isLoopbackHost, parseRepositoryUrl } from '../model/repository-url.js';
import { DELIVERY_MODES, type DeliveryMode, type DeliverySettings } from '../run/delivery.js';
import { FORGES, type ForgeName, forgeDescriptor, forgeNameList, isForgeName } from '../model/forges.js';

/** The repository's path on its host, without `.git`: `owner/repo`, or `group/sub/project` on GitLab. */
export function repositoryPathOf(repositoryUrl: string): string {
  const remote = parseRepositoryUrl(repositoryUrl, 'repository.url');
  if (remote.kind === 'file' || remote.host === undefined) {
    throw new ValidationError([{ field: 'delivery.mode', message: 'pull_request needs a repository hosted on a forge, not a local path' }]);
  }
  const raw = /^[a-z][a-z0-9+.-]*:\/\//i.test(remote.url) ? new URL(remote.url).pathname : remote.url.replace(/^[^:]*:/, '');
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw new ValidationError([{ field: 'repository.url', message: `"${remote.display}" has a malformed percent-escape` }]);
  }
  const path = decoded.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
  const segments = path.split('/');
  if (segments.filter(Boolean).length < 2) {
    throw new ValidationError([{ field: 'repository.url', message: `"${remote.display}" does not name an owner and a repository` }]);
  }
  // `acme/..git` passes git's rules but names the repository "." (or "...git", ".."): in an API URL that segment climbs out of the repository.
  if (segments.some((segment) => segment === '.' || segment === '..')) {
    throw new ValidationError([{ field: 'repository.url', message: `"${remote.display}" names a repository "." or "..", which no forge has` }]);
  }
  return path;
}

/** The API a forge serves next to a repository on `host` (GitHub.com's lives on its own host). */
export function defaultApiUrl(forge: ForgeName, repositoryUrl: string): string {
  const host = parseRepositoryUrl(repositoryUrl, 'repository.url').host;
  if (host === undefined) throw new ValidationError([{ field: 'delivery.api_url', message: 'is needed for a repository without a host' }]);
  return forgeDescriptor(forge).defaultApiUrl(host);
}

/** The token goes to this URL: https only, plain http to loopback (the test doubles). */
export function checkApiUrl(value: string, field = 'delivery.api_url'): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError([{ field, message: 'is not a URL' }]);
  }
  if (url.username || url.password || url.search || url.hash)
    throw new ValidationError([{ field, message: 'must not hold credentials, a query or a fragment' }]);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(host))) {
    throw new ValidationError([{ field, message: 'must be https (plain http only to a loopback address)' }]);
  }
  return url.toString().replace(/\/+$/, '');
}

/** The runner's environment variables for delivery (each also a flag, see runner-cli). */
export const DELIVERY_ENV = {
  mode: 'SCAFFOLD_DELIVERY',
  forge: 'SCAFFOLD_FORGE',
  apiUrl: 'SCAFFOLD_FORGE_API_URL',
  autoMerge: 'SCAFFOLD_AUTO_MERGE',
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
  fields: { readonly mode: string; readonly forge: string; readonly apiUrl: string } = {
    mode: 'delivery.mode',
    forge: 'delivery.forge',
    apiUrl: 'delivery.api_url',
  },
): DeliverySettings {
  const issues: { field: string; message: string }[] = [];
  const mode = (raw.mode ?? 'push') as DeliveryMode;
  if (!DELIVERY_MODES.includes(mode)) issues.push({ field: fields.mode, message: `must be one of ${DELIVERY_MODES.join(', ')}` });
  const forge = raw.forge as ForgeName | undefined;
  if (forge !== undefined && !isForgeName(forge)) issues.push({ field: fields.forge, message: `must be one of ${FORGES.join(', ')}` });
  if (mode === 'pull_request' && forge === undefined) issues.push({ field: fields.forge, message: `is required with pull_request: ${forgeNameList()}` });
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
