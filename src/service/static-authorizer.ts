/**
 * The embedded mode's authorizer: a caller that presented one of the configured
 * tokens (API_TOKENS, or the token generated at first start) may do everything.
 * There is no cluster to hold Roles in that mode; a token is the whole credential.
 */
import type { Action, Authorizer } from './authorizer.js';
import type { Caller } from './authenticator.js';

/** Allows every authenticated caller every action. */
export class AllowAllAuthorizer implements Authorizer {
  async authorize(_caller: Caller, _action: Action): Promise<void> {
    // Authentication already happened; nothing more to decide.
  }
}
