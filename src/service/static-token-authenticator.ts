/**
 * Bearer tokens from configuration (API_TOKENS): the embedded-mode authenticator.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { AuthenticationError } from '../errors.js';
import type { Authenticator, Caller } from './authenticator.js';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Checks a bearer token against a fixed list. The caller's identity is
 * `static:<index>` (position in the list, from 0), so audit records never hold the token.
 */
export class StaticTokenAuthenticator implements Authenticator {
  readonly #digests: readonly Buffer[];

  /** @param tokens - the accepted tokens; the service config enforces at least 16 characters each */
  constructor(tokens: readonly string[]) {
    this.#digests = tokens.map(digest);
  }

  /** @throws AuthenticationError when the token matches none of the configured ones */
  async authenticate(token: string): Promise<Caller> {
    // Comparing fixed-length digests keeps timingSafeEqual's equal-length
    // precondition and hides the configured tokens' lengths. Every entry is
    // compared (no early exit), so the time does not reveal which one matched.
    const presented = digest(token);
    let match = -1;
    this.#digests.forEach((candidate, index) => {
      if (timingSafeEqual(candidate, presented) && match < 0) match = index;
    });
    if (match < 0) throw new AuthenticationError('the bearer token is not valid');
    return { identity: `static:${match}` };
  }
}
