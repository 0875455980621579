/**
 * Authorizes callers of the HTTP API with Kubernetes RBAC: each action is a
 * SubjectAccessReview (authorization.k8s.io/v1) about the authenticated user,
 * with their groups, on a resource of the `gitops-scaffolder.io` API group.
 * Platform teams grant access with ordinary (Cluster)Roles; see
 * deploy/base/access-roles.yaml for the shipped ones.
 *
 * The resources are cluster-scoped (no namespace in the review), so only
 * ClusterRoleBindings grant them. Decisions are cached briefly, keyed by the
 * user and the action (never a token): the dashboard polls a run every second,
 * and a revoked binding still stops working within the TTL.
 */
import { ApiException, AuthorizationV1Api, type KubeConfig, type V1SubjectAccessReviewSpec, type V1SubjectAccessReviewStatus } from '@kubernetes/client-node';
import { ForbiddenError, UnavailableError } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import type { Caller } from '../service/authenticator.js';
import { API_GROUP, describeAction, type Action, type Authorizer } from '../service/authorizer.js';
import { RedirectRefusingKubeConfig } from './redirect-refusing-kube-config.js';

/** What SubjectAccessReviewAuthorizer needs. */
export interface SubjectAccessReviewAuthorizerDeps {
  /** Credentials of the cluster whose RBAC decides (needs `create` on subjectaccessreviews). */
  readonly kubeConfig: KubeConfig;
  /** How long a decision is remembered; 0 disables the cache. @default 5000 */
  readonly cacheTtlMs?: number;
  readonly logger?: Logger;
}

// Bounds memory when many users and objects are asked about; entries are tiny.
const CACHE_LIMIT = 2000;

/** Implements Authorizer with the SubjectAccessReview API. */
export class SubjectAccessReviewAuthorizer implements Authorizer {
  private readonly api: AuthorizationV1Api;
  private readonly ttlMs: number;
  private readonly logger: Logger;
  private readonly cache = new Map<string, { readonly allowed: boolean; readonly expires: number }>();

  constructor(deps: SubjectAccessReviewAuthorizerDeps) {
    this.api = RedirectRefusingKubeConfig.of(deps.kubeConfig).makeApiClient(AuthorizationV1Api);
    this.ttlMs = deps.cacheTtlMs ?? 5000;
    this.logger = (deps.logger ?? silentLogger).child({ component: 'subject-access-review' });
  }

  /**
   * @throws ForbiddenError when RBAC does not allow the action (or explicitly denies it)
   * @throws UnavailableError when SubjectAccessReview cannot be reached or fails
   */
  async authorize(caller: Caller, action: Action): Promise<void> {
    const spec = specOf(caller, action);
    const key = JSON.stringify(spec);
    const cached = this.cache.get(key);
    let allowed: boolean;
    if (cached !== undefined && cached.expires > Date.now()) {
      allowed = cached.allowed;
    } else {
      allowed = await this.review(spec, action);
      this.remember(key, allowed);
    }
    if (!allowed) {
      // The API server's own wording, so an operator recognises what to grant.
      throw new ForbiddenError(
        `${caller.identity} cannot ${describeAction(action)}: grant it with a ClusterRole (e.g. gitops-scaffolder-viewer, -operator or -admin)`,
      );
    }
  }

  private async review(spec: V1SubjectAccessReviewSpec, action: Action): Promise<boolean> {
    let status: V1SubjectAccessReviewStatus | undefined;
    try {
      const answer = await this.api.createSubjectAccessReview({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
      status = answer.status;
    } catch (error) {
      const code = error instanceof ApiException ? error.code : undefined;
      const detail = code !== undefined ? `HTTP ${code}` : (((error as { code?: unknown }).code as string | undefined) ?? 'unreachable');
      this.logger.error({ status: code, detail }, 'SubjectAccessReview failed');
      throw new UnavailableError(`cannot check permissions right now (SubjectAccessReview: ${detail})`);
    }
    // An explicit deny wins over an allow (the API server already combines its authorizers).
    const allowed = status?.allowed === true && status.denied !== true;
    if (!allowed)
      this.logger.info(
        { user: spec.user, action: describeAction(action), reason: status?.reason ?? '', evaluationError: status?.evaluationError },
        'access denied',
      );
    return allowed;
  }

  private remember(key: string, allowed: boolean): void {
    if (this.ttlMs <= 0) return;
    if (this.cache.size >= CACHE_LIMIT) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(key, { allowed, expires: Date.now() + this.ttlMs });
  }
}

/** The review's spec: exactly the authenticated user, and the action as resource or non-resource attributes. */
function specOf(caller: Caller, action: Action): V1SubjectAccessReviewSpec {
  const user: V1SubjectAccessReviewSpec = {
    user: caller.identity,
    ...(caller.groups === undefined ? {} : { groups: [...caller.groups] }),
    ...(caller.uid === undefined ? {} : { uid: caller.uid }),
    ...(caller.extra === undefined ? {} : { extra: Object.fromEntries(Object.entries(caller.extra).map(([k, v]) => [k, [...v]])) }),
  };
  if ('path' in action) return { ...user, nonResourceAttributes: { path: action.path, verb: action.verb } };
  return {
    ...user,
    resourceAttributes: {
      group: API_GROUP,
      resource: action.resource,
      verb: action.verb,
      ...(action.subresource === undefined ? {} : { subresource: action.subresource }),
      ...(action.name === undefined ? {} : { name: action.name }),
    },
  };
}
