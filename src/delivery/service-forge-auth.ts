/**
 * The service's own forge credentials (a token, or a GitHub App whose values
 * may also come from `NAME_FILE`) and the one API they belong to, read from
 * its environment (or the files of its Secret), never from a request. Upgrade
 * and removal runs open their pull/merge requests with them
 * (`fleet-run-secrets.ts`).
 */
import { ValidationError } from '../errors.js';
import { secretFromEnvOrFile } from '../read-input-file.js';
import type { ForgeAuth } from './create-delivery.js';
import { checkApiUrl } from './delivery-settings.js';
import { githubAppAuth } from './github-app-auth.js';

/** The service's forge credentials and the API they are sent to. */
export interface ServiceForgeAuth {
  readonly auth?: ForgeAuth;
  readonly apiUrl?: string;
}

/** The variables the credentials come from. */
export const SERVICE_FORGE_ENV = {
  token: 'SCAFFOLD_FORGE_TOKEN',
  apiUrl: 'SCAFFOLD_FORGE_API_URL',
  githubApp: {
    appId: 'SCAFFOLD_FORGE_GITHUB_APP_ID',
    installationId: 'SCAFFOLD_FORGE_GITHUB_APP_INSTALLATION_ID',
    privateKey: 'SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY',
  },
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
export async function serviceForgeAuth(env: Readonly<Record<string, string | undefined>>): Promise<ServiceForgeAuth> {
  const token = env[SERVICE_FORGE_ENV.token]?.trim();
  const app = await githubAppAuth((name) => secretFromEnvOrFile(env, name), SERVICE_FORGE_ENV.githubApp);
  if (token && app) {
    throw new ValidationError([
      { field: SERVICE_FORGE_ENV.token, message: `is set together with a GitHub App (${SERVICE_FORGE_ENV.githubApp.appId}): set one of them` },
    ]);
  }
  const auth: ForgeAuth | undefined = app ?? (token ? { kind: 'token', token } : undefined);
  if (auth === undefined) return {};
  const apiUrl = env[SERVICE_FORGE_ENV.apiUrl]?.trim();
  const given = auth.kind === 'token' ? SERVICE_FORGE_ENV.token : 'a GitHub App';
  if (!apiUrl)
    throw new ValidationError([
      { field: SERVICE_FORGE_ENV.apiUrl, message: `is required with ${given}: the forge API the credentials are sent to, e.g. https://api.github.com` },
    ]);
  return { auth, apiUrl: checkApiUrl(apiUrl, SERVICE_FORGE_ENV.apiUrl) };
}
