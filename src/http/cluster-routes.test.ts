/**
 * The fleet endpoints over real parts: a real Git repository (file://) read
 * and pushed to by the real GitFleetSource, runs in PGlite, the real HTTP app.
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
import { PgRunStore } from '../db/pg-run-store.js';
import { CliGitRemote } from '../git/cli-git-remote.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { platformDir } from '../package-paths.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import type { RunSecrets, RunRecord } from '../run/run-record.js';
import { RunService } from '../service/run-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';
import { createBareRepository } from '../../test/support/git-server.js';
import { writeFluxBootstrap } from '../../test/support/flux-bootstrap.js';
import { git } from '../../test/support/git.js';
import { unusedExecutor, unusedPreviewer } from '../../test/support/unused-executor.js';
import { createHttpApp } from './create-http-app.js';

const TOKEN = 'fleet-test-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid'];
const KUBECONFIG = 'apiVersion: v1\nkind: Config\nclusters: []\n';

/** Runs the service started: the executor records them. */
const started: { run: RunRecord; secrets: RunSecrets }[] = [];

interface Fleet {
  commit: string;
  platform_commit: string | null;
  clusters: {
    name: string;
    kind: string;
    status: string;
    up_to_date?: boolean;
    behind?: { rendered_from: string; current: string };
    domain?: string;
    last_run?: { id: string; status: string };
  }[];
}

describe('/api/v1/clusters', () => {
  let tmp: string;
  let work: string;
  let bare: string;
  let url: string;
  let store: PgRunStore;
  let app: FastifyInstance;

  const commitAndPush = async (message: string) => {
    await git(work, 'add', '--all');
    await git(work, ...IDENTITY, 'commit', '--quiet', '-m', message);
    await git(work, 'push', '--quiet', bare, 'main:main');
  };
  const get = async <T>(path: string): Promise<T> => {
    const response = await app.inject({ method: 'GET', url: path, headers: AUTH });
    assert.equal(response.statusCode, 200, response.body);
    return response.json<T>();
  };

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'fleet-routes-'));
    work = join(tmp, 'work');
    bare = join(tmp, 'gitops.git');
    url = pathToFileURL(bare).href;
    await createBareRepository(bare);
    await initPlatformRepository(work, platformDir());
    const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
    for (const name of ['eu-1', 'eu-2']) {
      await renderWorkTree(work, { cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' }, pass: 'all', certificate, generatorVersion: 'test' });
    }
    await writeFluxBootstrap(work, 'eu-2');
    await commitAndPush('Two clusters');
    store = await PgRunStore.open();
    // Runs are started, not run: what a removal run does is test/integration/fleet-runs.test.ts's.
    const executor = { ...unusedExecutor, start: async (run: RunRecord, secrets: RunSecrets) => (started.push({ run, secrets }), { job: run.job }) };
    const service = new RunService({ store, executor, previewer: unusedPreviewer, reference: 'development', defaultRepository: { ensure: async () => url } });
    const fleetSource = new GitFleetSource({ git: new CliGitRemote({}), reference: 'development', workRoot: tmp, ttlMs: 0 });
    app = await createHttpApp({
      service,
      authenticator: new StaticTokenAuthenticator([TOKEN]),
      store,
      fleetSource,
      allowedRepositoryUrls: ['https://github.com/acme/gitops.git'],
    });
  });

  after(async () => {
    await app?.close();
    await store?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it('lists every cluster with its kind, attributes and freshness, and says which are behind once the reference changes', async () => {
    const fresh = await get<Fleet>('/api/v1/clusters');
    assert.deepEqual(
      fresh.clusters.map((c) => [c.name, c.kind, c.status]),
      [
        ['development', 'reference', 'not_applicable'],
        ['eu-1', 'generated', 'up_to_date'],
        ['eu-2', 'generated', 'up_to_date'],
      ],
    );
    assert.equal(fresh.clusters[1]!.domain, 'eu-1.example.net');
    const renderedFrom = fresh.platform_commit!;

    const patch = join(work, 'clusters/development/apps/tcr-api-replicas.yaml');
    await writeFile(patch, (await readFile(patch, 'utf8')).replace('value: 3', 'value: 4'));
    await commitAndPush('Four API replicas');
    const behind = await get<Fleet>('/api/v1/clusters');
    const current = await git(work, 'rev-parse', 'HEAD');
    assert.equal(behind.platform_commit, current);
    for (const cluster of behind.clusters.filter((c) => c.kind === 'generated')) {
      assert.equal(cluster.status, 'behind');
      assert.equal(cluster.up_to_date, false);
      assert.deepEqual(cluster.behind, { rendered_from: renderedFrom, current });
    }
  });

  it('is described in the OpenAPI document', async () => {
    const paths = (await get<{ paths: Record<string, Record<string, unknown>> }>('/openapi.json')).paths;
    assert.ok(paths['/api/v1/clusters']?.get);
    assert.deepEqual(Object.keys(paths['/api/v1/clusters/{name}'] ?? {}).sort(), ['delete', 'get']);
  });

  it('answers the Flux Operator ExternalService input shape with ?format=resourceset', async () => {
    const body = await get<{ inputs: Record<string, unknown>[] }>('/api/v1/clusters?format=resourceset');
    assert.deepEqual(Object.keys(body), ['inputs']);
    assert.deepEqual(
      body.inputs.map((i) => i.id),
      ['eu-1', 'eu-2'],
    );
    assert.deepEqual(
      { ...body.inputs[0], platform_commit: undefined },
      {
        id: 'eu-1',
        name: 'eu-1',
        gitops_path: 'clusters/eu-1',
        domain: 'eu-1.example.net',
        region: 'eu-west-1',
        status: 'behind',
        generator_version: 'test',
        platform_commit: undefined,
      },
    );
  });

  it('shows one cluster with its last run, and 404 for a cluster that does not exist', async () => {
    await store.create({
      id: 'run-eu-1',
      cluster: { name: 'eu-1', domain: 'eu-1.example.net', region: 'eu-west-1' },
      repositoryUrl: url,
      branch: 'main',
      reference: 'development',
      job: 'scaffold-run-eu-1',
      createdBy: 'static:test',
      sealing: 'certificate',
    });
    const one = await get<Fleet['clusters'][number]>('/api/v1/clusters/eu-1');
    assert.equal(one.name, 'eu-1');
    assert.deepEqual({ id: one.last_run?.id, status: one.last_run?.status }, { id: 'run-eu-1', status: 'pending' });
    const listed = await get<Fleet>('/api/v1/clusters');
    assert.equal(listed.clusters.find((c) => c.name === 'eu-1')?.last_run?.id, 'run-eu-1');
    const missing = await app.inject({ method: 'GET', url: '/api/v1/clusters/nowhere', headers: AUTH });
    assert.equal(missing.statusCode, 404, missing.body);
  });

  it('DELETE refuses without a matching confirm, for the reference environment, and while the cluster has an active run', async () => {
    const del = (path: string) => app.inject({ method: 'DELETE', url: path, headers: AUTH });
    const head = await git(bare, 'rev-parse', 'main');
    const missing = await del('/api/v1/clusters/eu-2');
    assert.equal(missing.statusCode, 400, missing.body);
    assert.match(missing.json<{ error: { fields: { field: string }[] } }>().error.fields[0]!.field, /confirm/);
    const wrong = await del('/api/v1/clusters/eu-2?confirm=eu-1');
    assert.equal(wrong.statusCode, 400, wrong.body);
    const reference = await del('/api/v1/clusters/development?confirm=development');
    assert.equal(reference.statusCode, 400, reference.body);
    assert.match(reference.body, /reference environment/);
    const active = await del('/api/v1/clusters/eu-1?confirm=eu-1');
    assert.equal(active.statusCode, 409, active.body);
    assert.match(active.body, /active run \(run-eu-1/);
    // Deleting the data waits for the cluster's Flux to apply the lift before the removal lands: without its kubeconfig it could not.
    const deleteData = await app.inject({ method: 'DELETE', url: '/api/v1/clusters/eu-2?confirm=eu-2', headers: AUTH, payload: { delete_data: true } });
    assert.equal(deleteData.statusCode, 400, deleteData.body);
    const refused = deleteData.json<{ error: { fields: { field: string; message: string }[] } }>().error.fields[0];
    assert.equal(refused?.field, 'kubeconfig');
    assert.match(refused?.message ?? '', /required with delete_data: .*Flux apply it before it pushes the removal/);
    // A kubeconfig is only read for deleting the data: sent without it, it is a mistake, not silently carried.
    const stray = await app.inject({
      method: 'DELETE',
      url: '/api/v1/clusters/eu-2?confirm=eu-2',
      headers: AUTH,
      payload: { kubeconfig: { inline: KUBECONFIG } },
    });
    assert.equal(stray.statusCode, 400, stray.body);
    assert.match(stray.body, /only used with delete_data/);
    // The runner would load it: the kubeconfig policy of a scaffold's applies (no exec on the runner's host).
    const exec = 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    exec:\n      command: /bin/sh\n';
    const refusedExec = await app.inject({
      method: 'DELETE',
      url: '/api/v1/clusters/eu-2?confirm=eu-2',
      headers: AUTH,
      payload: { delete_data: true, kubeconfig: { inline: exec } },
    });
    assert.equal(refusedExec.statusCode, 400, refusedExec.body);
    assert.match(refusedExec.body, /exec/);
    assert.equal(started.length, 0);
    assert.equal(await git(bare, 'rev-parse', 'main'), head);
  });

  it('DELETE ?dry_run=true lists what a removal would delete and keep without a confirm, starting no run and writing nothing', async () => {
    const head = await git(bare, 'rev-parse', 'main');
    const response = await app.inject({ method: 'DELETE', url: '/api/v1/clusters/eu-2?dry_run=true', headers: AUTH });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json<{ dry_run: boolean; cluster: string; removed: string[]; kept: string[]; flux_bootstrap: boolean }>();
    assert.equal(body.dry_run, true);
    assert.equal(body.cluster, 'eu-2');
    assert.ok(body.removed.includes('clusters/eu-2/provenance.yaml'), body.removed.join('\n'));
    assert.ok(
      body.removed.some((file) => file.startsWith('clusters/eu-2/database/sealed/')),
      'the sealed credentials go too',
    );
    assert.deepEqual(body.kept, [
      'clusters/eu-2/flux-system/gotk-components.yaml',
      'clusters/eu-2/flux-system/gotk-sync.yaml',
      'clusters/eu-2/flux-system/kustomization.yaml',
    ]);
    assert.equal(body.flux_bootstrap, true);
    // The preview is refused where a removal is: the reference environment is never removed.
    const reference = await app.inject({ method: 'DELETE', url: '/api/v1/clusters/development?dry_run=true', headers: AUTH });
    assert.equal(reference.statusCode, 400, reference.body);
    assert.match(reference.body, /reference environment/);
    assert.equal(started.length, 0, 'no run started');
    assert.equal(await git(bare, 'rev-parse', 'main'), head);
    const spec = (await app.inject({ method: 'GET', url: '/openapi.json', headers: AUTH })).json<{
      paths: Record<string, { delete?: { parameters?: { name: string }[]; responses: Record<string, unknown> } }>;
    }>();
    const del = spec.paths['/api/v1/clusters/{name}']?.delete;
    assert.ok(del?.parameters?.some((p) => p.name === 'dry_run'));
    assert.ok(del?.responses['200'] !== undefined && del.responses['202'] !== undefined);
  });

  it('DELETE starts a removal run of the cluster as recorded, answering 202 with the run and what it removes and keeps', async () => {
    const head = await git(bare, 'rev-parse', 'main');
    const response = await app.inject({ method: 'DELETE', url: '/api/v1/clusters/eu-2?confirm=eu-2', headers: AUTH });
    assert.equal(response.statusCode, 202, response.body);
    const body = response.json<{
      run: { id: string; status: string };
      cluster: string;
      removed: string[];
      kept: string[];
      flux_bootstrap: boolean;
      delivery: { mode: string };
    }>();
    assert.equal(response.headers.location, `/api/v1/scaffolds/${body.run.id}`);
    assert.equal(body.cluster, 'eu-2');
    assert.ok(body.removed.includes('clusters/eu-2/provenance.yaml'));
    assert.equal(body.flux_bootstrap, true);
    assert.deepEqual(body.kept, [
      'clusters/eu-2/flux-system/gotk-components.yaml',
      'clusters/eu-2/flux-system/gotk-sync.yaml',
      'clusters/eu-2/flux-system/kustomization.yaml',
    ]);
    assert.deepEqual(body.delivery, { mode: 'push', auto_merge: false });
    const [start] = started.splice(0);
    assert.ok(start);
    assert.deepEqual(
      {
        action: start.run.action,
        cluster: start.run.cluster,
        sealing: start.run.sealing,
        createdBy: start.run.createdBy,
        repositoryUrl: start.run.repositoryUrl,
      },
      {
        action: 'remove',
        cluster: { name: 'eu-2', domain: 'eu-2.example.net', region: 'eu-west-1' },
        sealing: 'none',
        createdBy: 'static:0',
        repositoryUrl: url,
      },
    );
    assert.deepEqual(start.secrets, {}, 'a removal run carries no caller credential');
    const run = await get<{ action: string; sealing: string; steps: { name: string }[] }>(`/api/v1/scaffolds/${body.run.id}`);
    assert.equal(run.action, 'remove');
    assert.deepEqual(
      run.steps.map((s) => s.name),
      ['clone', 'lift-protection', 'wait-for-lift', 'remove-files', 'push-removal'],
    );
    assert.equal(await git(bare, 'rev-parse', 'main'), head, 'the service itself writes nothing');
    const again = await app.inject({ method: 'DELETE', url: '/api/v1/clusters/eu-2?confirm=eu-2', headers: AUTH });
    assert.equal(again.statusCode, 409, again.body);
  });

  it('a failed removal run is retried as a removal with no caller credential: one offered is refused', async () => {
    const failed = (await store.list({ cluster: 'eu-2', status: 'pending' })).runs[0];
    assert.ok(failed, 'the removal run of the previous case');
    await store.update(failed.id, { status: 'failed', message: 'the push was refused', finishedAt: new Date() });
    const retry = (payload: object) => app.inject({ method: 'POST', url: `/api/v1/scaffolds/${failed.id}/retry`, headers: AUTH, payload });
    const offered = await retry({ repository: { credentials: { token: 'ghp_callers-own-token' } } });
    assert.equal(offered.statusCode, 400, offered.body);
    assert.match(offered.body, /takes no credentials: it uses the service's own/);
    assert.ok(!offered.body.includes('ghp_callers-own-token'));
    const accepted = await retry({});
    assert.equal(accepted.statusCode, 202, accepted.body);
    const [start] = started.splice(0);
    assert.deepEqual([start?.run.action, start?.run.attempt, start?.run.sealing, start?.secrets], ['remove', 2, 'none', {}]);
  });

  it('DELETE with delete_data starts a removal run carrying the kubeconfig and the lift wait, for this attempt only', async () => {
    const pending = (await store.list({ cluster: 'eu-2', status: 'pending' })).runs[0];
    if (pending !== undefined) await store.update(pending.id, { status: 'failed', message: 'the push was refused', finishedAt: new Date() });
    const response = await app.inject({
      method: 'DELETE',
      url: '/api/v1/clusters/eu-2?confirm=eu-2',
      headers: AUTH,
      payload: { delete_data: true, kubeconfig: { inline: KUBECONFIG }, lift_timeout_seconds: 120 },
    });
    assert.equal(response.statusCode, 202, response.body);
    assert.equal(response.json<{ delete_data: boolean }>().delete_data, true);
    const [start] = started.splice(0);
    assert.deepEqual(
      [start?.run.action, start?.secrets],
      ['remove', { kubeconfig: { kind: 'inline', value: KUBECONFIG }, deleteData: { timeoutSeconds: 120 } }],
    );
  });

  it('DELETE with pull_request refuses a service without forge credentials before any run starts', async () => {
    const response = await app.inject({
      method: 'DELETE',
      url: '/api/v1/clusters/eu-1?confirm=eu-1&repository_url=https%3A%2F%2Fgithub.com%2Facme%2Fgitops.git',
      headers: AUTH,
      payload: { delivery: { mode: 'pull_request', forge: 'github', api_url: 'https://api.github.com' } },
    });
    assert.equal(response.statusCode, 503, response.body);
    assert.match(response.body, /no forge credentials/);
    assert.equal(started.length, 0);
  });
});
