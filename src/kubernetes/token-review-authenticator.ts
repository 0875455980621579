/**
 * Authenticates callers of the HTTP API by their Kubernetes token (a
 * ServiceAccount's, or a user's where the API server accepts their OIDC
 * tokens): the API server says who the token belongs to (TokenReview). What the
 * caller may do is then up to RBAC (subject-access-review-authorizer.ts); an
 * optional allow-list of ServiceAccounts narrows who may call at all.
 *
 * The cache is keyed by the token's SHA-256, never the token, and holds only
 * allowed identities, briefly: a revoked token stops working within the TTL.
 */
import { createHash } from 'node:crypto';
import { ApiException, AuthenticationV1Api, type KubeConfig, type V1TokenReviewStatus } from '@kubernetes/client-node';
import { AuthenticationError, ForbiddenError, UnavailableError, ValidationError } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import type { Authenticator, Caller } from '../service/authenticator.js';
import { RedirectRefusingKubeConfig } from './redirect-refusing-kube-config.js';

/** What TokenReviewAuthenticator needs. */
export interface TokenReviewAuthenticatorDeps {
  /** Credentials of the cluster that issued the callers' tokens (needs `create` on tokenreviews). */
  readonly kubeConfig: KubeConfig;
  /**
   * Audiences the token must be valid for (e.g. this service's own, when callers
   * use projected tokens for it). @default the API server's audiences
   */
  readonly audiences?: readonly string[];
  /**
   * `system:serviceaccount:NS:NAME`, or `system:serviceaccount:NS:*` for every ServiceAccount of NS.
   * @default empty: every authenticated identity (RBAC decides what it may do)
   */
  readonly allowed?: readonly string[];
  /** How long an allowed identity is remembered; 0 disables the cache. @default 10000 */
  readonly cacheTtlMs?: number;
  readonly logger?: Logger;
}

const SERVICE_ACCOUNT = /^system:serviceaccount:([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z0-9]([-.a-z0-9]*[a-z0-9])?|\*)$/;
// Bounds memory when many distinct tokens arrive; entries are tiny.
const CACHE_LIMIT = 1000;

function hashOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Implements Authenticator with the TokenReview API. */
export class TokenReviewAuthenticator implements Authenticator {
  private readonly api: AuthenticationV1Api;
  private readonly audiences: readonly string[];
  private readonly exact: ReadonlySet<string>;
  private readonly namespaces: ReadonlySet<string>;
  private readonly restricted: boolean;
  private readonly ttlMs: number;
  private readonly logger: Logger;
  private readonly cache = new Map<string, { readonly caller: Caller; readonly expires: number }>();
  /** Concurrent requests with one token share one review. */
  private readonly inFlight = new Map<string, Promise<Caller>>();

  /** @throws ValidationError when an allow-list entry is not a ServiceAccount username */
  constructor(deps: TokenReviewAuthenticatorDeps) {
    const exact = new Set<string>();
    const namespaces = new Set<string>();
    (deps.allowed ?? []).forEach((entry, i) => {
      const m = SERVICE_ACCOUNT.exec(entry);
      if (!m) {
        throw new ValidationError([{ field: `allowed[${i}]`, message: 'must be system:serviceaccount:NAMESPACE:NAME or system:serviceaccount:NAMESPACE:*' }]);
      }
      if (m[3] === '*') namespaces.add(m[1] ?? '');
      else exact.add(entry);
    });
    this.api = RedirectRefusingKubeConfig.of(deps.kubeConfig).makeApiClient(AuthenticationV1Api);
    this.audiences = deps.audiences ?? [];
    this.exact = exact;
    this.namespaces = namespaces;
    this.restricted = exact.size + namespaces.size > 0;
    this.ttlMs = deps.cacheTtlMs ?? 10_000;
    this.logger = (deps.logger ?? silentLogger).child({ component: 'token-review-authenticator' });
  }

  /**
   * @throws AuthenticationError when the token is empty, not valid, or not valid for the audiences
   * @throws ForbiddenError when the identity is valid but not on the allow-list (when there is one)
   * @throws UnavailableError when TokenReview cannot be reached or fails (5xx, or our own credentials are refused)
   */
  async authenticate(token: string): Promise<Caller> {
    if (!token) throw new AuthenticationError('a bearer token is required');
    const key = hashOf(token);
    const cached = this.cache.get(key);
    if (cached && cached.expires > Date.now()) return cached.caller;
    if (cached) this.cache.delete(key);

    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const review = this.review(token, key).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, review);
    return review;
  }

  private async review(token: string, key: string): Promise<Caller> {
    let status: V1TokenReviewStatus | undefined;
    try {
      const answer = await this.api.createTokenReview({
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token, ...(this.audiences.length > 0 ? { audiences: [...this.audiences] } : {}) },
        },
      });
      status = answer.status;
    } catch (error) {
      // Neither the request nor the response is logged or quoted: both hold the token.
      const code = error instanceof ApiException ? error.code : undefined;
      const detail = code !== undefined ? `HTTP ${code}` : (((error as { code?: unknown }).code as string | undefined) ?? 'unreachable');
      this.logger.error({ status: code, detail }, 'TokenReview failed');
      throw new UnavailableError(`cannot check the token right now (TokenReview: ${detail})`);
    }

    if (!status?.authenticated) {
      // status.error is the authenticator's reason; it is logged, not returned to the caller.
      this.logger.info({ reason: status?.error ?? 'not authenticated', key: key.slice(0, 12) }, 'token rejected');
      throw new AuthenticationError('the token is not valid');
    }
    // An audience-unaware authenticator can accept a token without checking audiences;
    // the API docs ask clients that set spec.audiences to verify status.audiences.
    if (this.audiences.length > 0 && !(status.audiences ?? []).some((a) => this.audiences.includes(a))) {
      throw new AuthenticationError('the token is not valid for this service');
    }
    const identity = status.user?.username ?? '';
    if (!this.isAllowed(identity)) {
      this.logger.warn({ identity }, 'authenticated caller is not on the allow-list');
      throw new ForbiddenError(`${identity || 'the caller'} is not allowed to call this API`);
    }
    const { groups, uid, extra } = status.user ?? {};
    const caller: Caller = {
      identity,
      ...(groups === undefined ? {} : { groups }),
      ...(uid === undefined || uid === '' ? {} : { uid }),
      ...(extra === undefined || Object.keys(extra).length === 0 ? {} : { extra }),
    };
    if (this.ttlMs > 0) {
      if (this.cache.size >= CACHE_LIMIT) {
        // Maps iterate in insertion order: drop the oldest entry.
        const oldest = this.cache.keys().next().value;
        if (oldest !== undefined) this.cache.delete(oldest);
      }
      this.cache.set(key, { caller, expires: Date.now() + this.ttlMs });
    }
    return caller;
  }

  private isAllowed(identity: string): boolean {
    if (!this.restricted) return identity !== '';
    if (this.exact.has(identity)) return true;
    const m = SERVICE_ACCOUNT.exec(identity);
    return m !== null && m[3] !== '*' && this.namespaces.has(m[1] ?? '');
  }
}
