import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import { actionOf, assertRouteHasPermission, permissionOf, ROUTE_PERMISSIONS } from './route-permissions.js';

describe('the route → permission table', () => {
  it('maps each scaffold action to the documented verb', () => {
    const verbs = Object.fromEntries(Object.entries(ROUTE_PERMISSIONS).map(([route, p]) => [route, 'resource' in p ? `${p.resource}${p.subresource ? `/${p.subresource}` : ''}:${p.verb}` : `${p.path}:${p.verb}`]));
    assert.equal(verbs['POST /api/v1/scaffolds'], 'scaffolds:create');
    assert.equal(verbs['GET /api/v1/scaffolds'], 'scaffolds:list');
    assert.equal(verbs['GET /api/v1/scaffolds/:id'], 'scaffolds:get');
    assert.equal(verbs['GET /api/v1/scaffolds/:id/logs'], 'scaffolds/logs:get');
    assert.equal(verbs['POST /api/v1/scaffolds/:id/retry'], 'scaffolds:update');
    assert.equal(verbs['POST /api/v1/scaffolds/:id/cancel'], 'scaffolds:delete');
    assert.equal(verbs['DELETE /api/v1/clusters/:name'], 'clusters:delete');
    assert.equal(verbs['GET /metrics'], '/metrics:get');
  });

  it('HEAD needs what GET needs; an unknown route needs nothing from the table', () => {
    assert.deepEqual(permissionOf('HEAD', '/api/v1/scaffolds/:id'), permissionOf('GET', '/api/v1/scaffolds/:id'));
    assert.equal(permissionOf('GET', '/healthz'), undefined);
  });

  it('names the object from the path, so rules may use resourceNames', () => {
    const request = { params: { id: '42' } } as unknown as FastifyRequest;
    assert.deepEqual(actionOf(permissionOf('GET', '/api/v1/scaffolds/:id/logs')!, request), { resource: 'scaffolds', verb: 'get', subresource: 'logs', name: '42' });
    assert.deepEqual(actionOf(permissionOf('GET', '/metrics')!, request), { path: '/metrics', verb: 'get' });
  });

  it('fails closed: an /api route missing from the table stops the app from starting', () => {
    assert.throws(() => assertRouteHasPermission({ method: 'POST', url: '/api/v1/scaffolds/:id/pause' }), /POST \/api\/v1\/scaffolds\/:id\/pause has no permission/);
    assert.throws(() => assertRouteHasPermission({ method: ['GET', 'PUT'], url: '/api/v1/scaffolds/:id' }), /PUT/);
    assert.doesNotThrow(() => assertRouteHasPermission({ method: ['GET', 'HEAD'], url: '/api/v1/scaffolds/:id' }));
    assert.doesNotThrow(() => assertRouteHasPermission({ method: 'GET', url: '/ui/*' }));
  });
});
