/**
 * The authentication port of the HTTP API. `kubernetes/token-review-authenticator.ts`
 * checks ServiceAccount tokens with TokenReview; `service/static-token-authenticator.ts`
 * checks configured tokens (embedded mode).
 */

/** Who a caller is once authenticated, e.g. `system:serviceaccount:kubeopera-core:host-cluster-controller`. */
export interface Caller {
  readonly identity: string;
}

/** Checks bearer tokens. */
export interface Authenticator {
  /**
   * @throws AuthenticationError when the token is not valid
   * @throws ForbiddenError when the identity is valid but not on the allow-list
   * @throws UnavailableError when the token cannot be checked right now (e.g. TokenReview unreachable)
   */
  authenticate(token: string): Promise<Caller>;
}
