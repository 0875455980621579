/**
 * The authorization port of the HTTP API: may this caller do this action?
 * `kubernetes/subject-access-review-authorizer.ts` asks the Kubernetes API
 * server (SubjectAccessReview, so ordinary Roles and ClusterRoles decide);
 * `service/static-authorizer.ts` allows every authenticated caller (embedded
 * mode, where a configured token is the whole credential).
 *
 * Actions are Kubernetes-style attributes on resources of the product's own
 * API group, so RBAC rules for them read like any other:
 * `apiGroups: ["gitops-scaffolder.io"], resources: ["scaffolds"], verbs: ["create"]`.
 * Which route needs which action is in `http/route-permissions.ts`.
 */
import type { Caller } from './authenticator.js';

/** The API group of the product's resources, as RBAC rules name it. */
export const API_GROUP = 'gitops-scaffolder.io';

/** The product's resources: runs (`scaffolds`) and the clusters they wrote (`clusters`). */
export type ProductResource = 'scaffolds' | 'clusters';

/** The Kubernetes verbs the API maps its actions to. */
export type ProductVerb = 'get' | 'list' | 'create' | 'update' | 'delete';

/** One action on a product resource, e.g. `create scaffolds` or `get scaffolds/logs` for run 42. */
export interface ResourceAction {
  readonly resource: ProductResource;
  readonly verb: ProductVerb;
  /** A sub-resource, e.g. `logs` (RBAC names it `scaffolds/logs`). */
  readonly subresource?: string;
  /** The object acted on (a run id, a cluster name), so rules may use resourceNames. */
  readonly name?: string;
}

/** An action on a URL that is not a resource (`/metrics`), like RBAC's nonResourceURLs. */
export interface PathAction {
  readonly path: string;
  readonly verb: 'get';
}

/** What a caller asks to do. */
export type Action = ResourceAction | PathAction;

/** Decides whether a caller may do an action. */
export interface Authorizer {
  /**
   * @throws ForbiddenError when the caller may not
   * @throws UnavailableError when it cannot be decided right now (e.g. the API server is unreachable)
   */
  authorize(caller: Caller, action: Action): Promise<void>;
}

/** `create scaffolds.gitops-scaffolder.io`, `get scaffolds.gitops-scaffolder.io/logs "42"`, `get /metrics`: for messages and logs. */
export function describeAction(action: Action): string {
  if ('path' in action) return `${action.verb} ${action.path}`;
  const sub = action.subresource === undefined ? '' : `/${action.subresource}`;
  const name = action.name === undefined ? '' : ` "${action.name}"`;
  return `${action.verb} ${action.resource}.${API_GROUP}${sub}${name}`;
}
