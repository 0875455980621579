/**
 * Upgrade rollouts over real parts: a real Git repository (file://) read and
 * pushed to by the real GitFleetSource (real verification, kubectl kustomize),
 * rollouts and runs in PGlite, the real HTTP app.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { GitFleetSource } from '../sources/git-fleet-source.js';
import { renderWorkTree } from '../git/render-work-tree.js';
import { createWorkTreeVerifier, type WorkTreeVerify } from '../workspace/verify-work-tree.js';
import { PgRunStore } from '../db/pg-run-store.js';
import { CliGitRemote } from '../git/cli-git-remote.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { platformDir } from '../package-paths.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { ScaffoldService } from '../service/scaffold-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';
import { createBareRepository } from '../../test/support/git-server.js';
import { git } from '../../test/support/git.js';
import { unusedExecutor, unusedPreviewer } from '../../test/support/unused-executor.js';
import { createHttpApp } from './create-http-app.js';

const TOKEN = 'upgrade-test-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid'];
const CLUSTERS = ['eu-1', 'eu-2', 'eu-3'];
const PATCH = 'clusters/development/apps/tcr-api-replicas.yaml';

interface RolloutBody {
  id: string;
  state: string;
  waves: string[][];
  clusters: { name: string; wave: number; status: string; outcome?: string; commit?: string; modified?: number; message?: string; findings?: string[] }[];
  failure?: { wave: number; failed: string[]; not_started: string[] };
}

describe('/api/v1/upgrades', () => {
  let tmp: string;
  let work: string;
  let bare: string;
  let store: PgRunStore;
  let app: FastifyInstance;
  let appDeps: Parameters<typeof createHttpApp>[0];
  /** Clusters whose upgraded tree the verifier rejects; every other one is verified for real. */
  const rejected = new Set<string>();

  const setReplicas = async (from: number, to: number) => {
    // The service pushed upgrades since: start from the branch as it is.
    await git(work, 'pull', '--quiet', '--ff-only', bare, 'main');
    const patch = join(work, PATCH);
    await writeFile(patch, (await readFile(patch, 'utf8')).replace(`replicas: ${from}`, `replicas: ${to}`));
    await git(work, 'add', '--all');
    await git(work, ...IDENTITY, 'commit', '--quiet', '-m', `${to} API replicas`);
    await git(work, 'push', '--quiet', bare, 'main:main');
  };
  const post = (body: unknown) => app.inject({ method: 'POST', url: '/api/v1/upgrades', headers: AUTH, payload: body as object });
  const head = () => git(bare, 'rev-parse', 'main');
  /** Every sealed credential of the fleet, as blob ids. */
  const sealed = async () => (await git(bare, 'ls-tree', '-r', 'main', 'clusters')).split('\n').filter((line) => line.includes('/sealed/sealed-'));
  /** Follows a rollout until it has finished. */
  const finished = async (id: string): Promise<RolloutBody> => {
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const response = await app.inject({ method: 'GET', url: `/api/v1/upgrades/${id}`, headers: AUTH });
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json<RolloutBody>();
      if (body.state !== 'running') return body;
    }
    throw new Error(`rollout ${id} did not finish`);
  };
  const start = async (body: unknown): Promise<RolloutBody> => {
    const response = await post(body);
    assert.equal(response.statusCode, 202, response.body);
    const started = response.json<RolloutBody>();
    assert.equal(response.headers.location, `/api/v1/upgrades/${started.id}`);
    return finished(started.id);
  };

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
    const service = new ScaffoldService({ store, executor: unusedExecutor, previewer: unusedPreviewer, reference: 'development', defaultRepository: { ensure: async () => url } });
    const real = createWorkTreeVerifier();
    const verify: WorkTreeVerify = async (dir, options) =>
      options?.cluster !== undefined && rejected.has(options.cluster)
        ? { findings: [`clusters/${options.cluster}: rejected by this test`], notes: [], kustomizationsChecked: 0, summary: '1 finding' }
        : real(dir, options);
    const fleetSource = new GitFleetSource({ git: new CliGitRemote({}), reference: 'development', workRoot: tmp, ttlMs: 0, verify });
    appDeps = { service, authenticator: new StaticTokenAuthenticator([TOKEN]), store, fleetSource, rolloutStore: store.rollouts() };
    app = await createHttpApp(appDeps);
    await setReplicas(3, 4);
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
    assert.deepEqual(body.clusters.map((c) => [c.name, c.status]), CLUSTERS.map((name) => [name, 'changed']));
    for (const cluster of body.clusters) assert.ok(cluster.files.modified.some((p) => p.startsWith(`clusters/${cluster.name}/apps/`)), JSON.stringify(cluster.files));
    assert.equal(await head(), before);
  });

  it('refuses the reference environment, an unknown cluster, a wave size of 0 and a cluster with an active run, writing nothing', async () => {
    const before = await head();
    assert.equal((await post({ clusters: ['development'] })).statusCode, 400);
    assert.equal((await post({ clusters: ['nowhere'] })).statusCode, 404);
    assert.equal((await post({ clusters: 'all', wave_size: 0 })).statusCode, 400);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/upgrades/nope', headers: AUTH })).statusCode, 404);
    await store.create({ id: 'run-eu-3', cluster: { name: 'eu-3', domain: 'eu-3.example.net', region: 'eu-west-1' }, repositoryUrl: pathToFileURL(bare).href, branch: 'main', reference: 'development', job: 'scaffold-run-eu-3', createdBy: 'static:test', sealing: 'certificate' });
    const active = await post({ clusters: 'all' });
    assert.equal(active.statusCode, 409, active.body);
    assert.match(active.body, /eu-3 has an active run \(run-eu-3/);
    await store.update('run-eu-3', { status: 'failed', message: 'ended for this test' });
    assert.equal(await head(), before);
  });

  it('upgrades three behind clusters in two waves of 2 and 1: one commit each, linear history, sealed credentials kept', async () => {
    const before = await head();
    const sealedBefore = await sealed();
    assert.ok(sealedBefore.length > 0);
    const rollout = await start({ clusters: 'all', wave_size: 2 });
    assert.equal(rollout.state, 'succeeded', JSON.stringify(rollout));
    assert.deepEqual(rollout.waves, [['eu-1', 'eu-2'], ['eu-3']]);
    assert.equal(rollout.failure, undefined);
    const log = (await git(bare, 'log', '--format=%H %P', `${before}..main`)).split('\n').reverse();
    assert.equal(log.length, 3);
    // Linear: each commit has one parent, the one before it.
    log.reduce((parent, line) => {
      const [sha, ...parents] = line.split(' ');
      assert.deepEqual(parents, [parent]);
      return sha!;
    }, before);
    for (const cluster of rollout.clusters) {
      assert.equal(cluster.outcome, 'upgraded');
      assert.equal(await git(bare, 'log', '-1', '--format=%H', 'main', '--', `clusters/${cluster.name}`), cluster.commit);
      const files = (await git(bare, 'show', '--name-only', '--format=', cluster.commit!)).split('\n');
      assert.ok(files.every((f) => f.startsWith(`clusters/${cluster.name}/`)), files.join(', '));
      assert.match(await git(bare, 'log', '-1', '--format=%B', cluster.commit!), new RegExp(`^Upgrade cluster ${cluster.name}[\\s\\S]*Scaffold-Cluster: ${cluster.name}[\\s\\S]*Requested-By: static:`));
    }
    assert.deepEqual(await sealed(), sealedBefore);
  });

  it('an up-to-date cluster succeeds with no commit', async () => {
    const before = await head();
    const rollout = await start({ clusters: ['eu-2'] });
    assert.equal(rollout.state, 'succeeded');
    assert.deepEqual(rollout.clusters.map((c) => [c.name, c.status, c.outcome, c.commit]), [['eu-2', 'succeeded', 'up_to_date', undefined]]);
    assert.equal(await head(), before);
  });

  it('a cluster failing verification in wave 1 stops the rollout: wave 2 never starts, and it says which cluster failed and why', async () => {
    await setReplicas(4, 5);
    const before = await head();
    rejected.add('eu-1');
    try {
      const rollout = await start({ clusters: 'all', wave_size: 2 });
      assert.equal(rollout.state, 'failed');
      assert.deepEqual(rollout.failure, { wave: 0, failed: ['eu-1'], not_started: ['eu-3'] });
      const byName = new Map(rollout.clusters.map((c) => [c.name, c]));
      assert.equal(byName.get('eu-1')?.status, 'failed');
      assert.match(byName.get('eu-1')?.message ?? '', /fails verification/);
      assert.deepEqual(byName.get('eu-1')?.findings, ['clusters/eu-1: rejected by this test']);
      // The failing wave is let finish: eu-2 was upgraded alongside; eu-3 never started.
      assert.equal(byName.get('eu-2')?.outcome, 'upgraded');
      assert.equal(byName.get('eu-3')?.status, 'pending');
      assert.deepEqual((await git(bare, 'log', '--format=%H', `${before}..main`)).split('\n'), [byName.get('eu-2')?.commit]);
    } finally {
      rejected.clear();
    }
  });

  it('a rollout left running by a stopped service is resumed when the app starts: its unfinished wave runs again, then the next', async () => {
    await setReplicas(5, 6);
    const before = await head();
    await app.close();
    // As a service stopped in the middle of wave 1 leaves it: eu-1 running, eu-2 and eu-3 (wave 2) pending.
    await store.rollouts().createRollout({
      id: 'interrupted',
      repositoryUrl: pathToFileURL(bare).href,
      branch: 'main',
      requestedBy: 'static:test',
      waveSize: 1,
      waves: [['eu-1'], ['eu-2', 'eu-3']],
      clusters: { 'eu-1': { status: 'running' }, 'eu-2': { status: 'pending' }, 'eu-3': { status: 'pending' } },
      state: 'running',
      createdAt: new Date(),
    });
    app = await createHttpApp(appDeps);
    const rollout = await finished('interrupted');
    assert.equal(rollout.state, 'succeeded', JSON.stringify(rollout));
    assert.deepEqual(rollout.clusters.map((c) => [c.name, c.outcome]), CLUSTERS.map((name) => [name, 'upgraded']));
    assert.equal((await git(bare, 'log', '--format=%H', `${before}..main`)).split('\n').length, 3);
  });

  it('is described in the OpenAPI document', async () => {
    const response = await app.inject({ method: 'GET', url: '/openapi.json', headers: AUTH });
    const paths = response.json<{ paths: Record<string, Record<string, unknown>> }>().paths;
    assert.ok(paths['/api/v1/upgrades']?.post);
    assert.ok(paths['/api/v1/upgrades/{id}']?.get);
  });
});
