import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PgRunStore } from '../db/pg-run-store.js';
import { UnavailableError } from '../errors.js';
import type { Catalog, CatalogSource } from '../service/catalog-source.js';
import type { ScaffoldExecutor } from '../service/scaffold-executor.js';
import type { ScaffoldPreviewer } from '../service/scaffold-previewer.js';
import { ScaffoldService, type DefaultRepository } from '../service/scaffold-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';
import { createHttpApp } from './create-http-app.js';

const TOKEN = 'catalog-test-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const DEFAULT_URL = 'file:///srv/default.git';
const CATALOG: Catalog = {
  attributes: [
    { name: 'role', values: ['tooling', 'env'], default: 'env' },
    { name: 'dns_provider', values: ['route53', 'cloudflare'] },
  ],
};

const unusedExecutor: ScaffoldExecutor = {
  start: async () => Promise.reject(new Error('not used')),
  inspect: async () => ({ state: 'missing' }),
  logs: async function* () {},
  cancel: async () => undefined,
};
const unusedPreviewer: ScaffoldPreviewer = { preview: async () => Promise.reject(new Error('not used')) };

class FakeCatalogSource implements CatalogSource {
  readonly calls: { repositoryUrl: string; branch: string }[] = [];
  failWith: Error | undefined;
  async catalog(input: { repositoryUrl: string; branch: string }): Promise<Catalog> {
    this.calls.push({ repositoryUrl: input.repositoryUrl, branch: input.branch });
    if (this.failWith) throw this.failWith;
    return CATALOG;
  }
}

let store: PgRunStore;
before(async () => {
  store = await PgRunStore.open();
});
after(async () => {
  await store.close();
});

function appWith(options: { catalogSource?: CatalogSource; defaultRepository?: DefaultRepository }) {
  const service = new ScaffoldService({
    store,
    executor: unusedExecutor,
    previewer: unusedPreviewer,
    reference: 'development',
    ...(options.defaultRepository ? { defaultRepository: options.defaultRepository } : {}),
  });
  return createHttpApp({ service, authenticator: new StaticTokenAuthenticator([TOKEN]), store, ...(options.catalogSource ? { catalogSource: options.catalogSource } : {}) });
}

describe('GET /api/v1/catalog', () => {
  it("answers the default repository's catalog on main when no parameter is given", async () => {
    const source = new FakeCatalogSource();
    const app = await appWith({ catalogSource: source, defaultRepository: { ensure: async () => DEFAULT_URL } });
    try {
      const response = await app.inject({ method: 'GET', url: '/api/v1/catalog', headers: AUTH });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), CATALOG);
      assert.deepEqual(source.calls, [{ repositoryUrl: DEFAULT_URL, branch: 'main' }]);
    } finally {
      await app.close();
    }
  });

  it('reads the repository and branch it is given, and refuses a URL a create request would refuse', async () => {
    const source = new FakeCatalogSource();
    const app = await appWith({ catalogSource: source, defaultRepository: { ensure: async () => DEFAULT_URL } });
    try {
      const url = 'https://git.example.com/platform.git';
      const ok = await app.inject({ method: 'GET', url: `/api/v1/catalog?repository_url=${encodeURIComponent(url)}&branch=release`, headers: AUTH });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(source.calls, [{ repositoryUrl: url, branch: 'release' }]);
      for (const bad of ['ext::sh -c touch% /tmp/x', 'https://user:secret@git.example.com/p.git', 'git.example.com:platform.git', 'http://git.example.com/p.git']) {
        const response = await app.inject({ method: 'GET', url: `/api/v1/catalog?repository_url=${encodeURIComponent(bad)}`, headers: AUTH });
        assert.equal(response.statusCode, 400, `${bad}: ${response.body}`);
        assert.doesNotMatch(response.body, /secret/);
      }
      const badBranch = await app.inject({ method: 'GET', url: `/api/v1/catalog?branch=${encodeURIComponent('-x')}`, headers: AUTH });
      assert.equal(badBranch.statusCode, 400, badBranch.body);
      const unknown = await app.inject({ method: 'GET', url: '/api/v1/catalog?repo=x', headers: AUTH });
      assert.equal(unknown.statusCode, 400, unknown.body);
      assert.equal(source.calls.length, 1, 'nothing malformed reaches the source');
    } finally {
      await app.close();
    }
  });

  it('needs a token', async () => {
    const source = new FakeCatalogSource();
    const app = await appWith({ catalogSource: source, defaultRepository: { ensure: async () => DEFAULT_URL } });
    try {
      const response = await app.inject({ method: 'GET', url: '/api/v1/catalog' });
      assert.equal(response.statusCode, 401);
      assert.equal(source.calls.length, 0);
    } finally {
      await app.close();
    }
  });

  it('says clearly when no catalog source is configured (404), or no repository is given and there is no default (400)', async () => {
    const unwired = await appWith({ defaultRepository: { ensure: async () => DEFAULT_URL } });
    try {
      const response = await unwired.inject({ method: 'GET', url: '/api/v1/catalog', headers: AUTH });
      assert.equal(response.statusCode, 404);
      assert.match(response.json<{ error: { message: string } }>().error.message, /no catalog source is configured/);
    } finally {
      await unwired.close();
    }
    const noDefault = await appWith({ catalogSource: new FakeCatalogSource() });
    try {
      const response = await noDefault.inject({ method: 'GET', url: '/api/v1/catalog', headers: AUTH });
      assert.equal(response.statusCode, 400);
      assert.match(response.body, /no default repository/);
    } finally {
      await noDefault.close();
    }
  });

  it('passes an unreadable repository on as 503', async () => {
    const source = new FakeCatalogSource();
    source.failWith = new UnavailableError('the repository cannot be read');
    const app = await appWith({ catalogSource: source, defaultRepository: { ensure: async () => DEFAULT_URL } });
    try {
      const response = await app.inject({ method: 'GET', url: '/api/v1/catalog', headers: AUTH });
      assert.equal(response.statusCode, 503);
    } finally {
      await app.close();
    }
  });
});
