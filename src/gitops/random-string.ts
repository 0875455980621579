/**
 * Credential strings from a byte source, without modulo bias. The byte source
 * is injected so the core stays pure and tests can make output reproducible;
 * production passes `crypto.randomBytes`.
 */

/** A source of cryptographically strong random bytes. */
export type RandomBytes = (size: number) => Uint8Array;

/** Letters and digits only: safe in URLs, DSNs, shell and YAML without quoting. */
export const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A string of `length` characters drawn uniformly from `alphabet`.
 * Bytes at or above the largest multiple of the alphabet size are rejected, so
 * every character is equally likely.
 */
export function randomString(random: RandomBytes, length: number, alphabet = ALPHANUMERIC): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of random(length * 2)) {
      if (byte >= limit) continue;
      out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}
