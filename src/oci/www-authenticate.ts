/** The `WWW-Authenticate` challenges a registry answers with, and the Basic header a client replies with. */
import type { RegistryCredentials } from './registry-client.js';

/** One `WWW-Authenticate` challenge. */
export interface Challenge {
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/**
 * Parses a `WWW-Authenticate` value (RFC 7235): one or more challenges, each a
 * scheme followed by comma-separated `name=value` or `name="quoted value"` parameters.
 */
export function parseChallenges(header: string): Challenge[] {
  const challenges: { scheme: string; params: Record<string, string> }[] = [];
  // A bare token starts a challenge (its scheme); `name=value` adds a parameter to the current one.
  const part = /[\s,]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*)))?/g;
  for (const match of header.matchAll(part)) {
    const name = match[1] as string;
    const quoted = match[2];
    const plain = match[3];
    const current = challenges[challenges.length - 1];
    if (quoted === undefined && plain === undefined) challenges.push({ scheme: name.toLowerCase(), params: {} });
    else if (current) current.params[name.toLowerCase()] = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : (plain as string);
  }
  return challenges;
}

export function basicAuthorization(credentials: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64')}`;
}
