import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PgRunStore } from '../db/pg-run-store.js';
import { NotFoundError } from '../errors.js';
import type { ClusterGraphFormat, ClusterGraphSource } from '../service/cluster-graph-source.js';
import type { RunExecutor } from '../service/run-executor.js';
import type { ScaffoldPreviewer } from '../run/scaffold-previewer.js';
import type { RunRecord } from '../run/run-record.js';
import { RunService } from '../service/run-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';
import { createHttpApp } from './create-http-app.js';
import { UNCONFIGURED_REPOSITORY_MESSAGE } from './readable-repository.js';
import { isUiPath } from './ui-routes.js';

const TOKEN = 'ui-test-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><g class="node" id="node-flux-system-apps"/></svg>\n';

const unusedExecutor: RunExecutor = {
  start: async () => Promise.reject(new Error('not used')),
  inspect: async () => ({ state: 'missing' }),
  logs: async function* () {},
  cancel: async () => undefined,
};
const unusedPreviewer: ScaffoldPreviewer = { preview: async () => Promise.reject(new Error('not used')) };

class FakeGraphSource implements ClusterGraphSource {
  readonly calls: { id: string; format: ClusterGraphFormat }[] = [];
  async graph(run: RunRecord, format: ClusterGraphFormat): Promise<string> {
    this.calls.push({ id: run.id, format });
    if (run.gitopsPath === undefined) throw new NotFoundError(`scaffold run ${run.id} has no gitops_path yet`);
    return format === 'svg' ? SVG : '{"nodes":[]}\n';
  }
}

let store: PgRunStore;
let dist: string;
let runCounter = 0;

/** The repository every stored run names. */
const RUN_REPOSITORY = 'https://git.example.com/platform/gitops.git';

async function appWith(options: {
  uiDir: string;
  graphSource?: ClusterGraphSource;
  allowed?: readonly string[];
  builtCheckMs?: number;
}): Promise<FastifyInstance> {
  const service = new RunService({ store, executor: unusedExecutor, previewer: unusedPreviewer, reference: 'development' });
  return createHttpApp({
    service,
    authenticator: new StaticTokenAuthenticator([TOKEN]),
    store,
    ui: { dir: options.uiDir, ...(options.builtCheckMs !== undefined ? { builtCheckMs: options.builtCheckMs } : {}) },
    allowedRepositoryUrls: options.allowed ?? [RUN_REPOSITORY],
    ...(options.graphSource ? { graphSource: options.graphSource } : {}),
  });
}

async function storedRun(lines: readonly string[], final?: { status: 'succeeded' | 'failed'; gitopsPath?: string }): Promise<string> {
  runCounter++;
  const id = `ui-run-${runCounter}`;
  await store.create({
    id,
    cluster: { name: `ui-${runCounter}`, domain: `ui-${runCounter}.example.net`, region: 'eu-west-1' },
    repositoryUrl: RUN_REPOSITORY,
    branch: 'main',
    reference: 'development',
    job: `scaffold-${id}`,
    createdBy: 'test',
    sealing: 'certificate',
  });
  if (lines.length > 0)
    await store.appendLogs(
      id,
      lines.map((line) => ({ time: new Date(), line })),
    );
  if (final) await store.update(id, { status: final.status, finishedAt: new Date(), ...(final.gitopsPath ? { gitopsPath: final.gitopsPath } : {}) });
  return id;
}

before(async () => {
  store = await PgRunStore.open();
  dist = await mkdtemp(join(tmpdir(), 'ui-dist-'));
  await mkdir(join(dist, 'assets'));
  await writeFile(join(dist, 'index.html'), '<!doctype html><title>gitops-scaffolder</title><script type="module" src="/ui/assets/app-1234.js"></script>');
  await writeFile(join(dist, 'assets', 'app-1234.js'), 'console.log("dashboard");');
});
after(async () => {
  await store.close();
  await rm(dist, { recursive: true, force: true });
});

describe('isUiPath', () => {
  it('is the dashboard and its redirect, nothing else', () => {
    for (const path of ['/', '/?x=1', '/ui', '/ui/', '/ui/runs/abc', '/ui/assets/app.js']) assert.equal(isUiPath(path), true, path);
    for (const path of ['/uix', '/api/v1/scaffolds', '/ui%2F..%2Fapi', '/docs/', '/metrics', '//ui/']) assert.equal(isUiPath(path), false, path);
  });
});

describe('dashboard routes', () => {
  it('serves the built dashboard without a token: assets, client routes, / redirect', async () => {
    const app = await appWith({ uiDir: dist });
    try {
      const root = await app.inject({ method: 'GET', url: '/' });
      assert.equal(root.statusCode, 302);
      assert.equal(root.headers.location, '/ui/');
      assert.equal((await app.inject({ method: 'GET', url: '/ui' })).headers.location, '/ui/');

      const index = await app.inject({ method: 'GET', url: '/ui/' });
      assert.equal(index.statusCode, 200);
      assert.match(String(index.headers['content-type']), /text\/html/);
      assert.match(index.body, /<title>gitops-scaffolder/);
      assert.equal(index.headers['cache-control'], 'no-cache');
      assert.match(String(index.headers['content-security-policy']), /default-src 'self'.*frame-ancestors 'none'/);
      assert.equal(index.headers['x-content-type-options'], 'nosniff');

      const asset = await app.inject({ method: 'GET', url: '/ui/assets/app-1234.js' });
      assert.equal(asset.statusCode, 200);
      assert.match(String(asset.headers['content-type']), /javascript/);
      assert.match(String(asset.headers['cache-control']), /immutable/);

      const clientRoute = await app.inject({ method: 'GET', url: '/ui/runs/0b1c-2d3e' });
      assert.equal(clientRoute.statusCode, 200);
      assert.equal(clientRoute.body, index.body);

      const missing = await app.inject({ method: 'GET', url: '/ui/assets/nothing.js' });
      assert.equal(missing.statusCode, 404);
      assert.doesNotMatch(missing.body, /<title>/);
      assert.equal((await app.inject({ method: 'GET', url: '/ui/../package.json' })).statusCode === 200, false);
    } finally {
      await app.close();
    }
  });

  it('keeps everything else behind the token', async () => {
    const app = await appWith({ uiDir: dist });
    try {
      assert.equal((await app.inject({ method: 'GET', url: '/api/v1/scaffolds' })).statusCode, 401);
      assert.equal((await app.inject({ method: 'POST', url: '/ui/', payload: {} })).statusCode, 401);
      assert.equal((await app.inject({ method: 'GET', url: '/api/v1/scaffolds/ui-run-x/graph' })).statusCode, 401);
    } finally {
      await app.close();
    }
  });

  it('answers 503 naming the build command when the dashboard is not built', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'ui-empty-'));
    const app = await appWith({ uiDir: empty });
    try {
      for (const url of ['/ui/', '/ui/runs/abc', '/ui/assets/app.js']) {
        const response = await app.inject({ method: 'GET', url });
        assert.equal(response.statusCode, 503, url);
        assert.match(String(response.headers['content-type']), /text\/plain/);
        assert.match(response.body, /not built.*npm run build:ui/s);
        assert.doesNotMatch(response.body, /restart|vite build --config/, 'names the real script, and no restart is needed');
        assert.ok(!response.body.includes(empty) && !response.body.includes(tmpdir()), `the install path stays on the server: ${response.body}`);
      }
      assert.equal((await app.inject({ method: 'GET', url: '/' })).statusCode, 302);
    } finally {
      await app.close();
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('serves a dashboard built while the service runs, without a restart', async () => {
    const later = await mkdtemp(join(tmpdir(), 'ui-later-'));
    const app = await appWith({ uiDir: join(later, 'dist'), builtCheckMs: 50 });
    try {
      assert.equal((await app.inject({ method: 'GET', url: '/ui/runs/abc' })).statusCode, 503);
      // What `npm run build:ui` does: vite creates dist/ with index.html and assets/.
      await mkdir(join(later, 'dist', 'assets'), { recursive: true });
      await writeFile(join(later, 'dist', 'assets', 'app-9.js'), 'console.log(1);');
      await writeFile(join(later, 'dist', 'index.html'), '<!doctype html><title>built later</title>');
      await new Promise((resolve) => setTimeout(resolve, 80));
      const page = await app.inject({ method: 'GET', url: '/ui/runs/abc' });
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /built later/);
      const asset = await app.inject({ method: 'GET', url: '/ui/assets/app-9.js' });
      assert.equal(asset.statusCode, 200);
      assert.equal((await app.inject({ method: 'GET', url: '/ui/' })).statusCode, 200);
    } finally {
      await app.close();
      await rm(later, { recursive: true, force: true });
    }
  });
});

describe('dashboard API', () => {
  const event = (fields: Record<string, unknown>) => JSON.stringify({ level: 30, time: new Date().toISOString(), ...fields });

  it('adds the seven steps to a run, derived from its log', async () => {
    const app = await appWith({ uiDir: dist });
    try {
      const id = await storedRun(
        [
          event({ event: 'step_started', step: 1, step_name: 'clone', msg: 'cloning' }),
          'plain output',
          event({ event: 'step_finished', step: 1, step_name: 'clone', duration_ms: 42, msg: 'clone done' }),
          event({ event: 'step_started', step: 2, step_name: 'render-infrastructure' }),
          event({ event: 'step_failed', step: 2, step_name: 'render-infrastructure', duration_ms: 7, msg: 'render-infrastructure failed: no reference' }),
        ],
        { status: 'failed' },
      );
      const response = await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}`, headers: AUTH });
      assert.equal(response.statusCode, 200);
      const run = response.json();
      assert.equal(run.steps.length, 7);
      assert.deepEqual(
        run.steps.map((s: { status: string }) => s.status),
        ['succeeded', 'failed', 'pending', 'pending', 'pending', 'pending', 'pending'],
      );
      assert.equal(run.steps[0].name, 'clone');
      assert.equal(run.steps[0].duration_ms, 42);
      assert.match(run.steps[0].started_at, /^\d{4}-\d\d-\d\dT/);
      assert.equal(run.steps[1].message, 'render-infrastructure failed: no reference');
      assert.equal(run.steps[2].started_at, undefined);
      // The list stays as it was: no steps there.
      const list = await app.inject({ method: 'GET', url: '/api/v1/scaffolds', headers: AUTH });
      assert.equal(list.json().items.find((r: { id: string }) => r.id === id).steps, undefined);
    } finally {
      await app.close();
    }
  });

  it('serves the graph as SVG or JSON from the graph source', async () => {
    const graphSource = new FakeGraphSource();
    const app = await appWith({ uiDir: dist, graphSource });
    try {
      const id = await storedRun([], { status: 'succeeded', gitopsPath: 'clusters/ui-graph' });
      const svg = await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}/graph`, headers: AUTH });
      assert.equal(svg.statusCode, 200);
      assert.match(String(svg.headers['content-type']), /^image\/svg\+xml/);
      assert.match(String(svg.headers['content-security-policy']), /default-src 'none'/);
      assert.equal(svg.body, SVG);
      const json = await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}/graph?format=json`, headers: AUTH });
      assert.equal(json.statusCode, 200);
      assert.match(String(json.headers['content-type']), /^application\/json/);
      assert.deepEqual(json.json(), { nodes: [] });
      assert.deepEqual(graphSource.calls, [
        { id, format: 'svg' },
        { id, format: 'json' },
      ]);

      const bad = await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}/graph?format=png`, headers: AUTH });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.fields[0].field, 'format');
      assert.equal((await app.inject({ method: 'GET', url: '/api/v1/scaffolds/ui-no-such-run/graph', headers: AUTH })).statusCode, 404);

      const early = await storedRun([]);
      const notYet = await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${early}/graph`, headers: AUTH });
      assert.equal(notYet.statusCode, 404);
      assert.match(notYet.json().error.message, /no gitops_path yet/);
    } finally {
      await app.close();
    }
  });

  it('draws no graph of a run whose repository the service is not configured to read: 403, nothing cloned', async () => {
    const graphSource = new FakeGraphSource();
    const app = await appWith({ uiDir: dist, graphSource, allowed: [] });
    try {
      const id = await storedRun([], { status: 'succeeded', gitopsPath: 'clusters/ui-elsewhere' });
      const response = await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}/graph`, headers: AUTH });
      assert.equal(response.statusCode, 403, response.body);
      assert.deepEqual(response.json(), { error: { code: 'forbidden', message: UNCONFIGURED_REPOSITORY_MESSAGE } });
      assert.deepEqual(graphSource.calls, [], 'the graph source was never asked');
    } finally {
      await app.close();
    }
  });

  it('answers 404 with a clear message when no graph source is configured', async () => {
    const app = await appWith({ uiDir: dist });
    try {
      const id = await storedRun([], { status: 'succeeded', gitopsPath: 'clusters/ui-none' });
      const response = await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}/graph`, headers: AUTH });
      assert.equal(response.statusCode, 404);
      assert.match(response.json().error.message, /does not draw cluster graphs/);
      const openapi = await app.inject({ method: 'GET', url: '/openapi.json', headers: AUTH });
      assert.ok(openapi.json().paths['/api/v1/scaffolds/{id}/graph'], 'the graph endpoint is documented');
    } finally {
      await app.close();
    }
  });
});
