/**
 * The OpenAPI document as a client generator reads it (GET /openapi.json of the
 * real app): every operation says what it answers on success and in which
 * content type, each route lists only the errors it can answer, and the
 * document carries the package's version.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { createHttpApp } from './create-http-app.js';
import type { RunService } from '../service/run-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';

interface Operation {
  readonly responses?: Record<string, { readonly description?: string; readonly content?: Record<string, { readonly schema?: unknown }> }>;
}
type Document = { readonly info: { readonly version: string }; readonly paths: Record<string, Record<string, Operation>> };

describe('the OpenAPI document', () => {
  let app: FastifyInstance;
  let document: Document;

  before(async () => {
    app = await createHttpApp({
      // Only the document is read: no request reaches the service or the store.
      service: {} as RunService,
      authenticator: new StaticTokenAuthenticator(['openapi-document-token-0123']),
      store: { ping: async () => undefined },
    });
    const response = await app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    document = response.json<Document>();
  });

  after(async () => {
    await app?.close();
  });

  const operations = (): [string, Operation][] =>
    Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]): [string, Operation] => [`${method.toUpperCase()} ${path}`, operation]),
    );

  it('declares, for every operation, a 2xx response with a content type and a schema', () => {
    const all = operations();
    assert.ok(all.length >= 19, `only ${all.length} operations`);
    const lacking = all.filter(([, operation]) => {
      const success = Object.entries(operation.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status));
      return (
        success.length === 0 || success.some(([, response]) => Object.values(response.content ?? {}).filter((media) => media.schema !== undefined).length === 0)
      );
    });
    assert.deepEqual(
      lacking.map(([name]) => name),
      [],
    );
  });

  it('gives the logs and the graph their real content types', () => {
    assert.deepEqual(Object.keys(document.paths['/api/v1/scaffolds/{id}/logs']?.get?.responses?.['200']?.content ?? {}).sort(), [
      'application/x-ndjson',
      'text/plain',
    ]);
    assert.deepEqual(Object.keys(document.paths['/api/v1/scaffolds/{id}/graph']?.get?.responses?.['200']?.content ?? {}).sort(), [
      'application/json',
      'image/svg+xml',
    ]);
    // An error is JSON even where the success is a picture.
    assert.deepEqual(Object.keys(document.paths['/api/v1/scaffolds/{id}/graph']?.get?.responses?.['404']?.content ?? {}), ['application/json']);
    assert.deepEqual(Object.keys(document.paths['/metrics']?.get?.responses?.['200']?.content ?? {}), ['text/plain']);
  });

  it('lists for each route only the errors it can answer', () => {
    const errors = (method: string, path: string): string[] =>
      Object.keys(document.paths[path]?.[method]?.responses ?? {})
        .filter((status) => /^[45]\d\d$/.test(status))
        .sort();
    assert.deepEqual(errors('get', '/api/v1/scaffolds'), ['400', '401', '403', '503'], 'a list has nothing to miss or conflict with');
    assert.deepEqual(errors('get', '/api/v1/scaffolds/{id}'), ['400', '401', '403', '404', '503']);
    assert.deepEqual(errors('post', '/api/v1/scaffolds/{id}/cancel'), ['400', '401', '403', '404', '409', '503']);
    assert.deepEqual(errors('post', '/api/v1/scaffolds'), ['400', '401', '403', '409', '413', '415', '503']);
    assert.deepEqual(errors('delete', '/api/v1/clusters/{name}'), ['400', '401', '403', '404', '409', '413', '415', '503']);
    assert.deepEqual(errors('get', '/healthz'), ['503'], 'health takes no token');
    for (const [name, operation] of operations()) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (/^[45]\d\d$/.test(status) && name !== 'GET /healthz') {
          assert.deepEqual(Object.keys(response.content ?? {}), ['application/json'], `${name} ${status}`);
          assert.notEqual(response.description, 'Default Response', `${name} ${status} says what it means`);
        }
      }
    }
  });

  it('carries the package version', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(document.info.version, version);
  });
});
