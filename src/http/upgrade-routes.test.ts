/**
 * The upgrade routes' own rules over real parts: a real Git repository
 * (file://) read by the real GitFleetSource, runs in PGlite, the real HTTP app.
 * Rollouts whose runs really run (the runner, waves, failures, resume) are
 * test/integration/fleet-runs.test.ts's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { GitFleetSource } from '../sources/git-fleet-source.js';
import { renderWorkTree } from '../git/render-work-tree.js';
import { PgRunStore } from '../db/pg-run-store.js';
import { CliGitRemote } from '../git/cli-git-remote.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { platformDir } from '../package-paths.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import type { RunRecord } from '../run/run-record.js';
import { RunService } from '../service/run-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';
import { createBareRepository } from '../../test/support/git-server.js';
import { editReferenceReplicas } from '../../test/support/generated-fleet.js';
import { git } from '../../test/support/git.js';
import { eventually } from '../../test/support/runner.js';
import { unusedExecutor, unusedPreviewer } from '../../test/support/unused-executor.js';
import { createHttpApp } from './create-http-app.js';
import type { rolloutSchema } from './routes/upgrade-routes.js';
import type { z } from 'zod';

type Rollout = z.output<typeof rolloutSchema>;

const TOKEN = 'upgrade-test-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid'];
const CLUSTERS = ['eu-1', 'eu-2', 'eu-3'];

describe('/api/v1/upgrades', () => {
  let tmp: string;
  let work: string;
  let bare: string;
  let store: PgRunStore;
  let app: FastifyInstance;
  let appDeps: Parameters<typeof createHttpApp>[0];

  const post = (body: unknown) => app.inject({ method: 'POST', url: '/api/v1/upgrades', headers: AUTH, payload: body as object });
  const head = () => git(bare, 'rev-parse', 'main');
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'upgrade-routes-'));
    work = join(tmp, 'work');
    bare = join(tmp, 'gitops.git');
    await createBareRepository(bare);
    await initPlatformRepository(work, platformDir());
    const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
    for (const name of CLUSTERS) {
      await renderWorkTree(work, { cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' }, pass: 'all', certificate, generatorVersion: 'test' });
    }
    await git(work, 'add', '--all');
    await git(work, ...IDENTITY, 'commit', '--quiet', '-m', 'Three clusters');
    await git(work, 'push', '--quiet', bare, 'main:main');
    store = await PgRunStore.open();
    const url = pathToFileURL(bare).href;
    const service = new RunService({
      store,
      executor: unusedExecutor,
      previewer: unusedPreviewer,
      reference: 'development',
      defaultRepository: { ensure: async () => url },
    });
    const fleetSource = new GitFleetSource({ git: new CliGitRemote({}), reference: 'development', workRoot: tmp, ttlMs: 0 });
    appDeps = { service, authenticator: new StaticTokenAuthenticator([TOKEN]), store, fleetSource, rolloutStore: store.rollouts() };
    app = await createHttpApp(appDeps);
    await editReferenceReplicas(work, bare, 3, 4);
  });

  after(async () => {
    await app?.close();
    await store?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it('dry_run lists what each behind cluster would change and writes nothing', async () => {
    const before = await head();
    const response = await post({ clusters: 'all', dry_run: true });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json<{ clusters: { name: string; status: string; files: { added: string[]; modified: string[]; removed: string[] } }[] }>();
    assert.deepEqual(
      body.clusters.map((c) => [c.name, c.status]),
      CLUSTERS.map((name) => [name, 'changed']),
    );
    for (const cluster of body.clusters)
      assert.ok(
        cluster.files.modified.some((p) => p.startsWith(`clusters/${cluster.name}/apps/`)),
        JSON.stringify(cluster.files),
      );
    assert.ok(
      body.clusters.every((c) => !('diff' in c)),
      'no file contents unless asked',
    );
    assert.equal(await head(), before);
  });

  it("dry_run with diff gives each changed file's content before and after, for a diff viewer", async () => {
    const response = await post({ clusters: ['eu-2'], dry_run: true, diff: true });
    assert.equal(response.statusCode, 200, response.body);
    type File = { path: string; change: string; content?: string; previous_content?: string };
    const [cluster] = response.json<{ clusters: { name: string; files: { modified: string[] }; diff?: File[] }[] }>().clusters;
    assert.equal(cluster?.name, 'eu-2');
    assert.deepEqual(
      cluster.diff?.map((f) => f.path),
      [...cluster.files.modified].sort(),
    );
    // The reference's API went from 3 to 4 replicas (editReferenceReplicas above).
    const replicas = cluster.diff?.find((f) => f.previous_content?.includes('value: 3') && f.content?.includes('value: 4'));
    assert.ok(replicas, JSON.stringify(cluster.diff));
    assert.equal(replicas.change, 'modified');
  });

  it('refuses the reference environment, an unknown cluster, a wave size of 0 and a cluster with an active run, writing nothing', async () => {
    const before = await head();
    assert.equal((await post({ clusters: ['development'] })).statusCode, 400);
    assert.equal((await post({ clusters: ['nowhere'] })).statusCode, 404);
    assert.equal((await post({ clusters: 'all', wave_size: 0 })).statusCode, 400);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/upgrades/nope', headers: AUTH })).statusCode, 404);
    await store.create({
      id: 'run-eu-3',
      cluster: { name: 'eu-3', domain: 'eu-3.example.net', region: 'eu-west-1' },
      repositoryUrl: pathToFileURL(bare).href,
      branch: 'main',
      reference: 'development',
      job: 'scaffold-run-eu-3',
      createdBy: 'static:test',
      sealing: 'certificate',
    });
    const active = await post({ clusters: 'all' });
    assert.equal(active.statusCode, 409, active.body);
    assert.match(active.body, /eu-3 has an active run \(run-eu-3/);
    await store.update('run-eu-3', { status: 'failed', message: 'ended for this test' });
    assert.equal(await head(), before);
  });

  it('is described in the OpenAPI document', async () => {
    const response = await app.inject({ method: 'GET', url: '/openapi.json', headers: AUTH });
    const paths = response.json<{ paths: Record<string, Record<string, unknown>> }>().paths;
    assert.ok(paths['/api/v1/upgrades']?.post);
    assert.ok(paths['/api/v1/upgrades/{id}']?.get);
    assert.ok(paths['/api/v1/upgrades/{id}/cancel']?.post);
    assert.ok(paths['/api/v1/upgrades']?.get);
  });

  it('cancel stops a rollout: its run under way is cancelled saying by whom, the next wave never starts; a second cancel is 409; the list shows it', async () => {
    // Runs that start and never end by themselves: only the cancel ends eu-1's.
    const started: string[] = [];
    const executor = { ...unusedExecutor, start: async (run: RunRecord) => (started.push(run.cluster.name), { job: run.job }) };
    const service = new RunService({
      store,
      executor,
      previewer: unusedPreviewer,
      reference: 'development',
      defaultRepository: { ensure: async () => pathToFileURL(bare).href },
    });
    const running = await createHttpApp({ ...appDeps, service });
    try {
      const call = (method: 'GET' | 'POST', url: string) => running.inject({ method, url, headers: AUTH, ...(method === 'POST' ? { payload: {} } : {}) });
      const accepted = await running.inject({ method: 'POST', url: '/api/v1/upgrades', headers: AUTH, payload: { clusters: ['eu-1', 'eu-2'], wave_size: 1 } });
      assert.equal(accepted.statusCode, 202, accepted.body);
      const id = accepted.json<Rollout>().id;
      const firstRun = await eventually(
        'eu-1 has its run',
        async () => (await call('GET', `/api/v1/upgrades/${id}`)).json<Rollout>().clusters.find((c) => c.name === 'eu-1')?.run_id,
      );

      const cancelled = await call('POST', `/api/v1/upgrades/${id}/cancel`);
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      const body = cancelled.json<Rollout>();
      assert.equal(body.state, 'cancelled');
      assert.ok(body.finished_at);
      // Each started cluster carries its run's times (the rollout page shows them); a pending one has none.
      const [first, second] = body.clusters;
      assert.ok(
        first?.started_at !== undefined && first.finished_at !== undefined && Date.parse(first.started_at) <= Date.parse(first.finished_at),
        JSON.stringify(first),
      );
      assert.equal(second?.started_at, undefined);
      assert.deepEqual(
        body.clusters.map((c) => [c.name, c.status, c.run_id, c.message]),
        [
          ['eu-1', 'cancelled', firstRun, 'cancelled by static:0'],
          ['eu-2', 'pending', undefined, undefined],
        ],
      );
      assert.equal((await store.get(firstRun))?.status, 'cancelled');
      assert.deepEqual(started, ['eu-1'], 'the second wave never started');
      assert.equal((await call('POST', `/api/v1/upgrades/${id}/cancel`)).statusCode, 409);
      assert.equal((await call('POST', '/api/v1/upgrades/nope/cancel')).statusCode, 404);

      // The list finds it, newest first, summed up; a state filter leaves it out or keeps it.
      const list = async (query: string) => {
        const response = await call('GET', `/api/v1/upgrades${query}`);
        assert.equal(response.statusCode, 200, response.body);
        return response.json<{ rollouts: { id: string; state: string; waves: number; requested_by: string; clusters: Record<string, number> }[] }>().rollouts;
      };
      const [newest] = await list('');
      assert.deepEqual(newest, { ...newest, id, state: 'cancelled', waves: 2, requested_by: 'static:0', clusters: { total: 2, cancelled: 1, pending: 1 } });
      assert.ok(!(await list('?state=running')).some((r) => r.id === id));
      assert.deepEqual(
        (await list('?state=cancelled&limit=1')).map((r) => r.id),
        [id],
      );
      for (const bad of ['?limit=0', '?limit=101', '?state=paused']) assert.equal((await call('GET', `/api/v1/upgrades${bad}`)).statusCode, 400, bad);
    } finally {
      await running.close();
    }
  });
});
