/**
 * The embedded mode's bearer token when API_TOKENS is unset: generated at first
 * start, kept in the data directory (0600, beside the local sealing key), and
 * reused on every later start so a dashboard tab or a script keeps working.
 *
 * Only its creator sees it printed (see `embeddedStartupNotice`); afterwards it
 * is read from the file, never logged.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { keepPrivate, writePrivateFile } from './private-file.js';

/** The token and where it lives. */
export interface EmbeddedApiToken {
  readonly token: string;
  readonly file: string;
  /** Whether this call generated it. */
  readonly created: boolean;
}

/** The file name under the data directory. */
export const EMBEDDED_TOKEN_FILE = 'api-token';

/** Loads the token in `dataDir`, generating it on first use. */
export async function ensureEmbeddedApiToken(dataDir: string): Promise<EmbeddedApiToken> {
  const file = join(dataDir, EMBEDDED_TOKEN_FILE);
  try {
    const token = (await readFile(file, 'utf8')).trim();
    // A truncated or hand-edited file falls through to a fresh token (the config's own 16-character floor).
    if (/^\S{16,}$/.test(token)) {
      await keepPrivate(file);
      return { token, file, created: false };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // 32 URL-safe characters: 192 random bits, no character a shell or a header needs quoted.
  const token = randomBytes(24).toString('base64url');
  await writePrivateFile(file, `${token}\n`);
  return { token, file, created: true };
}

/**
 * What `serve` prints in embedded mode: the dashboard's URL, and the generated
 * token the one time it is created (later: where it is kept). The token itself
 * only on a terminal (`onTerminal`): stderr redirected to a file or a log
 * collector would keep a credential there, so that reader is told the file instead.
 */
export function embeddedStartupNotice(dashboardUrl: string, token: EmbeddedApiToken | undefined, onTerminal: boolean): string {
  const lines = [`gitops-scaffolder: dashboard at ${dashboardUrl}`];
  if (token?.created && onTerminal) {
    lines.push(`gitops-scaffolder: API token (shown once; kept in ${token.file}): ${token.token}`);
  } else if (token?.created) {
    lines.push(`gitops-scaffolder: API token generated, not printed (stderr is not a terminal): sign in with the one in ${token.file}`);
  } else if (token !== undefined) {
    lines.push(`gitops-scaffolder: API token: sign in with the one in ${token.file}`);
  } else {
    lines.push('gitops-scaffolder: API token: one of API_TOKENS');
  }
  return `${lines.join('\n')}\n`;
}
