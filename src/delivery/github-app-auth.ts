/**
 * A GitHub App's credentials (app id, installation id, private key) read from
 * secrets: the runner's (`SCAFFOLD_GITHUB_APP_*`) and the service's
 * (`SCAFFOLD_FORGE_GITHUB_APP_*`) by one rule, all three or none.
 */
import { ValidationError } from '../errors.js';
import type { GitHubAuth } from './github-forge.js';

/** Reads a secret from `NAME` or the file `NAME_FILE`; undefined when neither is set. */
export type SecretReader = (name: string) => Promise<string | undefined>;

/** The variables an App's three values come from. */
export interface GitHubAppNames {
  readonly appId: string;
  readonly installationId: string;
  readonly privateKey: string;
}

export type GitHubAppAuth = Extract<GitHubAuth, { kind: 'app' }>;

/**
 * The App `names` give, or undefined when none of them is set.
 * @throws ValidationError naming each variable missing from a partial App (never a value)
 */
export async function githubAppAuth(readSecret: SecretReader, names: GitHubAppNames): Promise<GitHubAppAuth | undefined> {
  const read = async (name: string) => (await readSecret(name))?.trim() || undefined;
  const [appId, installationId, privateKey] = await Promise.all([read(names.appId), read(names.installationId), read(names.privateKey)]);
  if (appId === undefined && installationId === undefined && privateKey === undefined) return undefined;
  if (appId === undefined || installationId === undefined || privateKey === undefined) {
    const given = { appId, installationId, privateKey };
    const missing = (Object.keys(names) as (keyof GitHubAppNames)[]).filter((key) => given[key] === undefined);
    const all = Object.values(names).join(', ');
    throw new ValidationError(
      missing.map((key) => ({ field: names[key], message: `is required: a GitHub App needs ${all} together (each also as NAME_FILE)` })),
    );
  }
  // A PEM read from a file was trimmed; the key parser wants its final newline.
  return { kind: 'app', appId, installationId, privateKey: `${privateKey}\n` };
}
