/**
 * Which action each API route needs, in one table: the HTTP edge authorizes
 * every request with it (`create-http-app.ts`), and the shipped ClusterRoles
 * (deploy/base/access-roles.yaml) are checked against it by
 * test/integration/deploy-manifests.test.ts. A route under /api/ that is not
 * listed here makes the app refuse to start, so no endpoint is ever open by
 * omission.
 *
 * The verbs, on resources of the `gitops-scaffolder.io` API group:
 *
 * | route                                   | resource          | verb   |
 * | --------------------------------------- | ----------------- | ------ |
 * | POST /api/v1/scaffolds (dry run too)    | scaffolds         | create |
 * | GET /api/v1/catalog                     | scaffolds         | create |
 * | GET /api/v1/scaffolds                   | scaffolds         | list   |
 * | GET /api/v1/scaffolds/{id}, …/graph     | scaffolds         | get    |
 * | GET /api/v1/scaffolds/{id}/logs         | scaffolds/logs    | get    |
 * | POST /api/v1/scaffolds/{id}/retry       | scaffolds         | update |
 * | POST /api/v1/scaffolds/{id}/cancel      | scaffolds         | delete |
 * | GET /api/v1/clusters                    | clusters          | list   |
 * | GET /api/v1/clusters/{name}             | clusters          | get    |
 * | POST /api/v1/upgrades, …/{name}/rotate  | clusters          | update |
 * | POST …/{name}/sealing-check             | clusters          | update |
 * | GET /api/v1/upgrades                    | clusters          | list   |
 * | GET /api/v1/upgrades/{id}               | clusters          | get    |
 * | POST /api/v1/upgrades/{id}/cancel       | clusters          | update |
 * | DELETE …/clusters/{name} (dry run too)  | clusters          | delete |
 * | GET /metrics (unless METRICS_PUBLIC)    | nonResourceURL /metrics | get |
 *
 * Why these: a dry run and the catalog make the service fetch a repository for
 * someone about to create, so they need `create` (Kubernetes asks `create` of a
 * dry-run create too), and a removal's dry run needs `delete` for the same reason; retry re-runs an existing request (`update`); cancel ends
 * a run the way deleting a Job ends it (`delete`); logs are a sub-resource, like
 * `pods/log`, so a role can show runs without their output. The sealing check
 * makes the service call an API server named by the caller's kubeconfig, so it
 * needs what rotating needs (`update`), not a viewer's `get`.
 */
import type { FastifyRequest } from 'fastify';
import type { Action, ProductResource, ProductVerb } from '../service/authorizer.js';

/** What a route needs; `nameParam` is the path parameter naming the object (for resourceNames rules). */
export type RoutePermission =
  | { readonly resource: ProductResource; readonly verb: ProductVerb; readonly subresource?: string; readonly nameParam?: string }
  | { readonly path: string; readonly verb: 'get' };

/** `METHOD route` (the route as registered, with `:params`) → what it needs. */
export const ROUTE_PERMISSIONS: Readonly<Record<string, RoutePermission>> = {
  'POST /api/v1/scaffolds': { resource: 'scaffolds', verb: 'create' },
  'GET /api/v1/catalog': { resource: 'scaffolds', verb: 'create' },
  'GET /api/v1/scaffolds': { resource: 'scaffolds', verb: 'list' },
  'GET /api/v1/scaffolds/:id': { resource: 'scaffolds', verb: 'get', nameParam: 'id' },
  'GET /api/v1/scaffolds/:id/graph': { resource: 'scaffolds', verb: 'get', nameParam: 'id' },
  'GET /api/v1/scaffolds/:id/logs': { resource: 'scaffolds', verb: 'get', subresource: 'logs', nameParam: 'id' },
  'POST /api/v1/scaffolds/:id/retry': { resource: 'scaffolds', verb: 'update', nameParam: 'id' },
  'POST /api/v1/scaffolds/:id/cancel': { resource: 'scaffolds', verb: 'delete', nameParam: 'id' },
  'GET /api/v1/clusters': { resource: 'clusters', verb: 'list' },
  'GET /api/v1/clusters/:name': { resource: 'clusters', verb: 'get', nameParam: 'name' },
  'DELETE /api/v1/clusters/:name': { resource: 'clusters', verb: 'delete', nameParam: 'name' },
  'POST /api/v1/clusters/:name/sealing-check': { resource: 'clusters', verb: 'update', nameParam: 'name' },
  'POST /api/v1/clusters/:name/rotate': { resource: 'clusters', verb: 'update', nameParam: 'name' },
  'POST /api/v1/upgrades': { resource: 'clusters', verb: 'update' },
  'GET /api/v1/upgrades': { resource: 'clusters', verb: 'list' },
  'GET /api/v1/upgrades/:id': { resource: 'clusters', verb: 'get' },
  'POST /api/v1/upgrades/:id/cancel': { resource: 'clusters', verb: 'update' },
  'GET /metrics': { path: '/metrics', verb: 'get' },
};

const keyOf = (method: string, url: string): string => `${method} ${url}`;

/** The permission a route needs, or undefined when the table does not list it (HEAD falls back to GET). */
export function permissionOf(method: string, url: string): RoutePermission | undefined {
  return ROUTE_PERMISSIONS[keyOf(method, url)] ?? (method === 'HEAD' ? ROUTE_PERMISSIONS[keyOf('GET', url)] : undefined);
}

/** The action a request asks for under `permission` (the object's name taken from the path). */
export function actionOf(permission: RoutePermission, request: FastifyRequest): Action {
  if ('path' in permission) return { path: permission.path, verb: permission.verb };
  const params = (request.params ?? {}) as Record<string, unknown>;
  const name = permission.nameParam === undefined ? undefined : params[permission.nameParam];
  return {
    resource: permission.resource,
    verb: permission.verb,
    ...(permission.subresource === undefined ? {} : { subresource: permission.subresource }),
    ...(typeof name === 'string' && name !== '' ? { name } : {}),
  };
}

/**
 * For Fastify's onRoute hook: a route under /api/ must be in the table.
 * @throws Error naming the route, so the app refuses to start with an endpoint no rule covers
 */
export function assertRouteHasPermission(route: { readonly method: string | readonly string[]; readonly url: string }): void {
  if (route.url !== '/api' && !route.url.startsWith('/api/')) return;
  for (const method of [route.method].flat()) {
    if (permissionOf(method, route.url) === undefined) throw new Error(`${method} ${route.url} has no permission in src/http/route-permissions.ts`);
  }
}
