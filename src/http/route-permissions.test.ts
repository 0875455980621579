import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import { actionOf, assertRouteHasPermission, permissionOf, ROUTE_PERMISSIONS } from './route-permissions.js';

describe('the route → permission table', () => {
  it('maps every route to the documented verb: the whole table, so a row changed or added without review fails', () => {
    const verbs = Object.fromEntries(
      Object.entries(ROUTE_PERMISSIONS).map(([route, p]) => [
        route,
        'resource' in p ? `${p.resource}${p.subresource ? `/${p.subresource}` : ''}:${p.verb}` : `${p.path}:${p.verb}`,
      ]),
    );
    // Written out, not derived: the same rows as docs/api.md's authorization table and the header of route-permissions.ts.
    assert.deepEqual(verbs, {
      'POST /api/v1/scaffolds': 'scaffolds:create',
      'GET /api/v1/catalog': 'scaffolds:create',
      'GET /api/v1/scaffolds': 'scaffolds:list',
      'GET /api/v1/scaffolds/:id': 'scaffolds:get',
      'GET /api/v1/scaffolds/:id/graph': 'scaffolds:get',
      'GET /api/v1/scaffolds/:id/logs': 'scaffolds/logs:get',
      'POST /api/v1/scaffolds/:id/retry': 'scaffolds:update',
      'POST /api/v1/scaffolds/:id/cancel': 'scaffolds:delete',
      'GET /api/v1/clusters': 'clusters:list',
      'GET /api/v1/clusters/:name': 'clusters:get',
      'DELETE /api/v1/clusters/:name': 'clusters:delete',
      'POST /api/v1/clusters/:name/sealing-check': 'clusters:update',
      'POST /api/v1/clusters/:name/rotate': 'clusters:update',
      'POST /api/v1/upgrades': 'clusters:update',
      'GET /api/v1/upgrades': 'clusters:list',
      'GET /api/v1/upgrades/:id': 'clusters:get',
      'POST /api/v1/upgrades/:id/cancel': 'clusters:update',
      'GET /metrics': '/metrics:get',
    });
    // Routes about one object name it, so a resourceNames rule can scope a caller to it.
    const named = Object.entries(ROUTE_PERMISSIONS)
      .filter(([, p]) => 'nameParam' in p && p.nameParam !== undefined)
      .map(([route]) => route);
    assert.deepEqual(named.sort(), [
      'DELETE /api/v1/clusters/:name',
      'GET /api/v1/clusters/:name',
      'GET /api/v1/scaffolds/:id',
      'GET /api/v1/scaffolds/:id/graph',
      'GET /api/v1/scaffolds/:id/logs',
      'POST /api/v1/clusters/:name/rotate',
      'POST /api/v1/clusters/:name/sealing-check',
      'POST /api/v1/scaffolds/:id/cancel',
      'POST /api/v1/scaffolds/:id/retry',
    ]);
  });

  it('HEAD needs what GET needs; an unknown route needs nothing from the table', () => {
    assert.deepEqual(permissionOf('HEAD', '/api/v1/scaffolds/:id'), permissionOf('GET', '/api/v1/scaffolds/:id'));
    assert.equal(permissionOf('GET', '/healthz'), undefined);
  });

  it('names the object from the path, so rules may use resourceNames', () => {
    const request = { params: { id: '42' } } as unknown as FastifyRequest;
    assert.deepEqual(actionOf(permissionOf('GET', '/api/v1/scaffolds/:id/logs')!, request), {
      resource: 'scaffolds',
      verb: 'get',
      subresource: 'logs',
      name: '42',
    });
    assert.deepEqual(actionOf(permissionOf('GET', '/metrics')!, request), { path: '/metrics', verb: 'get' });
  });

  it('fails closed: an /api route missing from the table stops the app from starting', () => {
    assert.throws(
      () => assertRouteHasPermission({ method: 'POST', url: '/api/v1/scaffolds/:id/pause' }),
      /POST \/api\/v1\/scaffolds\/:id\/pause has no permission/,
    );
    assert.throws(() => assertRouteHasPermission({ method: ['GET', 'PUT'], url: '/api/v1/scaffolds/:id' }), /PUT/);
    assert.doesNotThrow(() => assertRouteHasPermission({ method: ['GET', 'HEAD'], url: '/api/v1/scaffolds/:id' }));
    assert.doesNotThrow(() => assertRouteHasPermission({ method: 'GET', url: '/ui/*' }));
  });
});
