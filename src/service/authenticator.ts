/**
 * The authentication port of the HTTP API. `kubernetes/token-review-authenticator.ts`
 * checks ServiceAccount tokens with TokenReview; `service/static-token-authenticator.ts`
 * checks configured tokens (embedded mode).
 */

/** Who a caller is once authenticated, e.g. `system:serviceaccount:kubeopera-core:host-cluster-controller`. */
export interface Caller {
  readonly identity: string;
  /**
   * What the API server said about the caller besides the name (TokenReview's
   * `user`): authorization asks about exactly this user, so rules bound to a
   * group (`system:serviceaccounts:NS`, an OIDC group) apply.
   */
  readonly groups?: readonly string[];
  readonly uid?: string;
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** Checks bearer tokens. */
export interface Authenticator {
  /**
   * @throws AuthenticationError when the token is not valid
   * @throws ForbiddenError when the identity is valid but not on the allow-list (when there is one)
   * @throws UnavailableError when the token cannot be checked right now (e.g. TokenReview unreachable)
   */
  authenticate(token: string): Promise<Caller>;
}
