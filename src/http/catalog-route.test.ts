import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PgRunStore } from '../db/pg-run-store.js';
import { UnavailableError } from '../errors.js';
import type { Catalog, CatalogSource } from '../service/catalog-source.js';
import type { RunExecutor } from '../service/run-executor.js';
import type { ScaffoldPreviewer } from '../run/scaffold-previewer.js';
import { RunService, type DefaultRepository } from '../service/run-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';
import { createHttpApp } from './create-http-app.js';
import fc from 'fast-check';
import { CliGitRemote } from '../git/cli-git-remote.js';
import { GitCatalogSource } from '../sources/git-catalog-source.js';
import { GitClusterGraphSource } from '../sources/git-cluster-graph-source.js';
import { GitFleetSource } from '../sources/git-fleet-source.js';
import type { ClusterGraphSource } from '../service/cluster-graph-source.js';
import type { FleetSource } from '../service/fleet-source.js';
import { closedPort } from '../../test/support/net.js';
import { startRecordingServer } from '../../test/support/recording-server.js';
import { UNCONFIGURED_REPOSITORY_MESSAGE } from './readable-repository.js';

const TOKEN = 'catalog-test-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const DEFAULT_URL = 'file:///srv/default.git';
const CATALOG: Catalog = {
  attributes: [
    { name: 'role', values: ['tooling', 'env'], default: 'env' },
    { name: 'dns_provider', values: ['route53', 'cloudflare'] },
  ],
};

const unusedExecutor: RunExecutor = {
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

const LISTED = 'https://git.example.com/platform.git';

let runs = 0;

function appWith(options: {
  catalogSource?: CatalogSource;
  fleetSource?: FleetSource;
  graphSource?: ClusterGraphSource;
  defaultRepository?: DefaultRepository;
  allowed?: readonly string[];
}) {
  const service = new RunService({
    store,
    executor: unusedExecutor,
    previewer: unusedPreviewer,
    reference: 'development',
    ...(options.defaultRepository ? { defaultRepository: options.defaultRepository } : {}),
  });
  return createHttpApp({
    service,
    authenticator: new StaticTokenAuthenticator([TOKEN]),
    store,
    allowedRepositoryUrls: options.allowed ?? [LISTED],
    ...(options.catalogSource ? { catalogSource: options.catalogSource } : {}),
    ...(options.fleetSource ? { fleetSource: options.fleetSource } : {}),
    ...(options.graphSource ? { graphSource: options.graphSource } : {}),
  });
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

  it('reads the allowed repository and branch it is given, and refuses a malformed URL with 400', async () => {
    const source = new FakeCatalogSource();
    const app = await appWith({ catalogSource: source, defaultRepository: { ensure: async () => DEFAULT_URL } });
    try {
      const ok = await app.inject({ method: 'GET', url: `/api/v1/catalog?repository_url=${encodeURIComponent(LISTED)}&branch=release`, headers: AUTH });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(source.calls, [{ repositoryUrl: LISTED, branch: 'release' }]);
      for (const bad of ['ext::sh -c touch% /tmp/x', 'https://user:secret@git.example.com/p.git']) {
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

  it('answers any well-formed repository that is not configured with the one 403, before anything connects', async () => {
    const source = new FakeCatalogSource();
    const app = await appWith({ catalogSource: source, defaultRepository: { ensure: async () => DEFAULT_URL } });
    const host = fc.domain().filter((h) => h !== 'git.example.com');
    const path = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}(\/[a-z0-9-]{1,12}){0,2}\.git$/);
    const url = fc.oneof(
      fc.tuple(host, path).map(([h, p]) => `https://${h}/${p}`),
      fc.tuple(fc.integer({ min: 1, max: 65535 }), path).map(([port, p]) => `http://127.0.0.1:${port}/${p}`),
      fc.tuple(fc.integer({ min: 1, max: 65535 }), path).map(([port, p]) => `git://localhost:${port}/${p}`),
      fc.tuple(host, path).map(([h, p]) => `ssh://git@${h}/${p}`),
      fc.tuple(host, path).map(([h, p]) => `git@${h}:${p}`),
      path.map((p) => `https://git.example.com/other/${p}`),
    );
    try {
      await fc.assert(
        fc.asyncProperty(url, fc.constantFrom('/api/v1/catalog', '/api/v1/clusters', '/api/v1/clusters/eu-1'), async (repository, route) => {
          const response = await app.inject({ method: 'GET', url: `${route}?repository_url=${encodeURIComponent(repository)}`, headers: AUTH });
          assert.equal(response.statusCode, 403, `${route} ${repository}: ${response.body}`);
          assert.deepEqual(response.json(), { error: { code: 'forbidden', message: UNCONFIGURED_REPOSITORY_MESSAGE } });
        }),
        { numRuns: 60 },
      );
      assert.equal(source.calls.length, 0, 'no unconfigured repository reached the source');
      const named = await app.inject({ method: 'GET', url: `/api/v1/catalog?repository_url=${encodeURIComponent(DEFAULT_URL)}`, headers: AUTH });
      assert.equal(named.statusCode, 200, `the default repository named explicitly: ${named.body}`);
    } finally {
      await app.close();
    }
  });

  it('gives the same answer whether the named host answers or not, and never connects to it: catalog, fleet, cluster and graph, real git behind them', async () => {
    const listening = await startRecordingServer();
    const there = `${listening.baseUrl}/platform.git`;
    const nobody = `http://127.0.0.1:${await closedPort()}/platform.git`;
    const app = (allowed: readonly string[]) =>
      appWith({
        catalogSource: new GitCatalogSource({ git: new CliGitRemote() }),
        fleetSource: new GitFleetSource({ git: new CliGitRemote(), reference: 'development' }),
        graphSource: new GitClusterGraphSource({ git: new CliGitRemote() }),
        defaultRepository: { ensure: async () => DEFAULT_URL },
        allowed,
      });
    const runIn = async (repositoryUrl: string): Promise<string> => {
      const id = `catalog-graph-${++runs}`;
      await store.create({
        id,
        cluster: { name: id, domain: `${id}.example.net`, region: 'eu-west-1' },
        repositoryUrl,
        branch: 'main',
        reference: 'development',
        job: `scaffold-${id}`,
        createdBy: 'test',
        sealing: 'certificate',
      });
      await store.update(id, {
        status: 'succeeded',
        finishedAt: new Date(),
        gitopsPath: `clusters/${id}`,
        commits: [{ sha: 'a'.repeat(40), pass: 'infrastructure' }],
      });
      return id;
    };
    const reads = async (url: string): Promise<string[]> => [
      ...['/api/v1/catalog', '/api/v1/clusters', '/api/v1/clusters/eu-1'].map((route) => `${route}?repository_url=${encodeURIComponent(url)}`),
      `/api/v1/scaffolds/${await runIn(url)}/graph`,
    ];
    const refusing = await app([]);
    try {
      const [answered, refused] = [await reads(there), await reads(nobody)];
      for (const [i, url] of answered.entries()) {
        const toListener = await refusing.inject({ method: 'GET', url, headers: AUTH });
        const toNobody = await refusing.inject({ method: 'GET', url: refused[i]!, headers: AUTH });
        assert.equal(toListener.statusCode, 403, `${url}: ${toListener.body}`);
        assert.deepEqual(toListener.json(), { error: { code: 'forbidden', message: UNCONFIGURED_REPOSITORY_MESSAGE } });
        assert.equal(toListener.body, toNobody.body, url);
      }
      assert.equal(listening.connections, 0, 'the service never even opened a connection to the listener');
    } finally {
      await refusing.close();
    }
    // The control: once the operator lists it, the same read does reach the listener, so the count above could see one.
    const listing = await app([there]);
    try {
      await listing.inject({ method: 'GET', url: `/api/v1/catalog?repository_url=${encodeURIComponent(there)}`, headers: AUTH });
      assert.ok(listening.connections > 0, 'an allowed repository is cloned');
    } finally {
      await listing.close();
      await listening.stop();
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
