/**
 * Removal that deletes the data, and rotation that writes the password-change
 * Jobs, through the API: the real HTTP app and service, each run a real
 * `scaffold-runner` process (LocalExecutor, PGlite), native git into a real
 * bare repository, and the cluster's Flux played by the Kubernetes API double
 * the runner reads through the kubeconfig the request carries.
 *
 * The order a removal deleting the data needs is the cluster's: Flux reconciles
 * only the newest revision and prunes by the mark on the in-cluster object, so
 * the removal commit may land only once Flux reports the lift commit applied.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { passwordChangeJobName } from '../../src/gitops/password-change-job.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { createGeneratedFleet } from '../support/generated-fleet.js';
import { git } from '../support/git.js';
import { startKubeApiDouble, type KubeApiDouble } from '../support/kube-api-double.js';
import { startLocalFleetService, type LocalFleetService } from '../support/local-fleet-service.js';
import { commitsOf, eventually, filesAt } from '../support/runner.js';

const API_TOKEN = 'data-removal-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${API_TOKEN}` };
const SYNC = { kind: 'GitRepository', name: 'flux-system' };

interface RunBody {
  id: string;
  status: string;
  message: string;
  commits: { pass: string; sha: string }[];
  steps: { name: string; status: string }[];
}

describe('removal with its data, and rotation with fresh values, as runs through the API', () => {
  let scratch: string;
  let bare: string;
  let kube: KubeApiDouble;
  let kubeconfig: string;
  let fleet: LocalFleetService;
  const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    fleet.app.inject({ method, url, headers: AUTH, ...(payload ? { payload } : {}) });
  const run = async (id: string) => (await inject('GET', `/api/v1/scaffolds/${id}`)).json<RunBody>();
  const ended = (id: string) =>
    eventually(
      `run ${id} to end`,
      async () => {
        const body = await run(id);
        return body.status === 'pending' || body.status === 'running' ? undefined : body;
      },
      240_000,
      200,
    );
  /** Kustomization list requests the double has answered so far: each is the runner asking Flux's state. */
  const fluxReads = () => kube.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/kustomizations')).length;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gs-data-removal-'));
    bare = join(scratch, 'gitops.git');
    await createGeneratedFleet(join(scratch, 'work'), bare, { clusters: ['eu-1', 'eu-2'] });
    kube = await startKubeApiDouble();
    kubeconfig = await readFile(await kube.writeKubeconfig(scratch), 'utf8');
    fleet = await startLocalFleetService({ dataDir: join(scratch, 'data'), apiToken: API_TOKEN, defaultRepositoryUrl: pathToFileURL(bare).href });
  });
  after(async () => {
    await fleet?.close();
    await kube?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('refuses delete_data without the kubeconfig (400, saying why), before anything runs', async () => {
    const head = await git(bare, 'rev-parse', 'main');
    const refused = await inject('DELETE', '/api/v1/clusters/eu-1?confirm=eu-1', { delete_data: true });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.body, /kubeconfig.*required with delete_data.*Flux/);
    assert.equal((await inject('GET', '/api/v1/scaffolds?cluster=eu-1')).json<{ items: unknown[] }>().items.length, 0);
    assert.equal(await git(bare, 'rev-parse', 'main'), head);
  });

  it('lands the lift, waits until Flux applied it, and only then lands the removal', async () => {
    const base = await git(bare, 'rev-parse', 'main');
    // Flux on the cluster: synced to the branch as it was, before the run.
    const applied = (sha: string) => ({
      lastAppliedRevision: `main@sha1:${sha}`,
      conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', message: `Applied revision: main@sha1:${sha}` }],
    });
    kube.setKustomization('flux-system', 'flux-system', { spec: { sourceRef: SYNC, path: './clusters/eu-1' }, status: applied(base) });
    kube.setKustomization('flux-system', 'database', { spec: { sourceRef: SYNC, path: './clusters/eu-1/database' }, status: applied(base) });

    const response = await inject('DELETE', '/api/v1/clusters/eu-1?confirm=eu-1', {
      delete_data: true,
      kubeconfig: { inline: kubeconfig },
      lift_timeout_seconds: 120,
    });
    assert.equal(response.statusCode, 202, response.body);
    const id = response.json<{ run: { id: string }; delete_data: boolean }>().run.id;
    assert.equal(response.json<{ delete_data: boolean }>().delete_data, true);

    const lift = await eventually(
      'the lift commit to land',
      async () => (await commitsOf(bare, 'main', base)).find((c) => c.trailers['Scaffold-Pass'] === 'lift-protection'),
      120_000,
      100,
    );
    assert.match(lift.subject, /^Lift the prune protection of cluster eu-1/);
    assert.match(
      await git(bare, 'show', `${lift.sha}:clusters/eu-1/database/kustomization.yaml`),
      /op: remove\n\s+path: \/metadata\/annotations\/kustomize.toolkit.fluxcd.io~1prune/,
    );
    // The runner now asks Flux, which still reports the old revision: two reads later, nothing else has landed.
    const readsAtLift = fluxReads();
    await eventually('the runner to read Flux twice more', () => (fluxReads() >= readsAtLift + 2 ? true : undefined), 60_000, 50);
    assert.equal(await git(bare, 'rev-parse', 'main'), lift.sha, 'the removal waits while Flux has not applied the lift');
    assert.equal((await run(id)).status, 'running');

    // Flux applies the lift: the unmarked objects are now on the cluster, and the removal may prune them.
    kube.setKustomization('flux-system', 'database', { status: applied(lift.sha) });
    kube.setKustomization('flux-system', 'flux-system', { status: applied(lift.sha) });
    const done = await ended(id);
    assert.equal(done.status, 'succeeded', done.message);
    const landed = await commitsOf(bare, 'main', base);
    assert.deepEqual(landed.map((c) => c.trailers['Scaffold-Pass']).reverse(), ['lift-protection', 'remove'], 'two commits, the lift first');
    const removal = landed[0]!;
    assert.deepEqual(removal.parents, [lift.sha], 'the removal is on top of the lift');
    assert.deepEqual(done.commits, [
      { pass: 'lift-protection', sha: lift.sha },
      { pass: 'remove', sha: removal.sha },
    ]);
    assert.deepEqual(
      done.steps.map((s) => [s.name, s.status]),
      [
        ['clone', 'succeeded'],
        ['lift-protection', 'succeeded'],
        ['wait-for-lift', 'succeeded'],
        ['remove-files', 'succeeded'],
        ['push-removal', 'succeeded'],
      ],
    );
    assert.match(
      done.message,
      new RegExp(
        `lift-protection ${lift.sha.slice(0, 12)} lifted the prune protection.*remove ${removal.sha.slice(0, 12)} removed clusters/eu-1.*Flux deletes \\d+ object\\(s\\), the data included: .*StatefulSet database/postgresql`,
      ),
    );
    assert.deepEqual(await filesAt(bare, 'main', 'clusters/eu-1'), ['clusters/eu-1/kustomization.yaml']);
  });

  it('rotates with fresh_values: the pushed tree holds the password-change Jobs named by the new ciphertexts, and the result names what restarts', async () => {
    const cluster = { name: 'eu-2', domain: 'eu-2.example.net', region: 'eu-west-1' };
    const scaffolded = await fleet.store.create({
      id: 'scaffold-eu-2',
      cluster,
      repositoryUrl: pathToFileURL(bare).href,
      branch: 'main',
      reference: 'development',
      job: 'scaffold-scaffold-eu-2',
      createdBy: 'static:0',
      sealing: 'certificate',
    });
    await fleet.store.update(scaffolded.id, { status: 'succeeded', finishedAt: new Date() });
    const certificate = createTestCertificate().certificatePem;

    // A supplied credential has no fresh value to make up: the run fails before it pushes anything.
    const before = await git(bare, 'rev-parse', 'main');
    const supplied = await inject('POST', '/api/v1/clusters/eu-2/rotate', {
      sealing: { certificate },
      credentials: ['registry-pull-secret'],
      fresh_values: true,
    });
    assert.equal(supplied.statusCode, 202, supplied.body);
    const refused = await ended(supplied.json<{ id: string }>().id);
    assert.equal(refused.status, 'failed');
    assert.match(refused.message, /registry-pull-secret: supplied by the caller \(registry-auth\), not generated, so there are no fresh values/);
    assert.equal(await git(bare, 'rev-parse', 'main'), before);

    const response = await inject('POST', '/api/v1/clusters/eu-2/rotate', {
      sealing: { certificate },
      credentials: ['database/postgresql-credentials'],
      fresh_values: true,
    });
    assert.equal(response.statusCode, 202, response.body);
    const done = await ended(response.json<{ id: string }>().id);
    assert.equal(done.status, 'succeeded', done.message);

    const sealedPath = 'clusters/eu-2/database/sealed/sealed-postgresql-credentials.yaml';
    const sealed = parse(await git(bare, 'show', `main:${sealedPath}`)) as { spec: { encryptedData: Record<string, string> } };
    const job = passwordChangeJobName({ name: 'postgresql-credentials', encryptedData: sealed.spec.encryptedData });
    const jobFile = `clusters/eu-2/database/sealed/${job}.yaml`;
    assert.ok((await filesAt(bare, 'main', 'clusters/eu-2/database/sealed')).includes(jobFile), `${jobFile} pushed`);
    const manifests = (await git(bare, 'show', `main:${jobFile}`)).split(/^---$/m).map((d) => parse(d) as { kind: string; metadata: { name: string } });
    assert.deepEqual(
      manifests.map((m) => m.kind),
      ['ServiceAccount', 'Role', 'RoleBinding', 'Job'],
    );
    assert.equal(manifests[3]!.metadata.name, job);
    assert.match(await git(bare, 'show', 'main:clusters/eu-2/database/sealed/kustomization.yaml'), new RegExp(`- ${job}\\.yaml`));
    // Only the rotated credential gets a Job: RabbitMQ's keeps its values.
    assert.equal((await filesAt(bare, 'main', 'clusters/eu-2/database/sealed')).filter((p) => p.includes('-rotation-')).length, 1);
    assert.match(
      done.message,
      new RegExp(`fresh values: Job\\(s\\) database/${job} set the new passwords in the databases; restart .*StatefulSet database/postgresql`),
    );
  });
});
