/**
 * Issue 21: a rotation run keeps the values. Through the API of the service as
 * `serve` starts it (embedded, the local executor spawning the real
 * scaffold-runner), against the Kubernetes API double with a Sealed Secrets
 * controller double behind its service proxy (written from the controller's
 * source: sealed-secrets-controller-double.ts). After the controller renewed
 * its key, `POST /api/v1/clusters/{name}/rotate` must push SealedSecrets that
 * open, under the NEW key, to exactly the values they held: checked here with
 * node:crypto (controller-unseal.ts), not with the product's unseal. A fresh
 * value would lock PostgreSQL and RabbitMQ out, which set passwords at first start.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { parse } from 'yaml';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { SEALED_WITH_ANNOTATION } from '../../src/gitops/sealed-with.js';
import { startService, type RunningService } from '../../src/main.js';
import { platformDir } from '../../src/package-paths.js';
import { createPino } from '../../src/pino-logger.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { loadServiceConfig } from '../../src/service/service-config.js';
import { controllerUnseal } from '../support/controller-unseal.js';
import { type GitHttpServer, startGitHttpServer } from '../support/git-server.js';
import { git } from '../support/git.js';
import { type KubeApiDouble, startKubeApiDouble } from '../support/kube-api-double.js';
import { eventually, treeAt } from '../support/runner.js';
import { serveSealedSecretsController, type SealedSecretsControllerDouble } from '../support/sealed-secrets-controller-double.js';

const CONTROLLER = { namespace: 'kube-system', name: 'sealed-secrets-controller' } as const;
const API_TOKEN = `api-${randomBytes(12).toString('hex')}`;
const GIT_USER = 'scaffolder';
const GIT_TOKEN = `git-${randomBytes(12).toString('hex')}`;

interface SealedObject {
  kind: string;
  metadata: { name: string; namespace: string; annotations?: Record<string, string> };
  spec: { encryptedData: Record<string, string>; template?: unknown };
}

const sealedIn = (tree: Map<string, string>): Map<string, SealedObject> =>
  new Map(
    [...tree]
      .filter(([path]) => /\/sealed\/[^/]+\.yaml$/.test(path))
      .map(([path, text]) => [path, parse(text) as SealedObject])
      .filter(([, o]) => (o as SealedObject).kind === 'SealedSecret') as [string, SealedObject][],
  );

/** The object without what a same-values rotation may change: the ciphertext and the certificate it records. */
function withoutCiphertext(object: SealedObject): unknown {
  const copy = structuredClone(object);
  delete (copy.spec as Partial<SealedObject['spec']>).encryptedData;
  delete copy.metadata.annotations?.[SEALED_WITH_ANNOTATION];
  return copy;
}

let scratch: string;
let served: string;
let http: GitHttpServer;
let kube: KubeApiDouble;
let controller: SealedSecretsControllerDouble;
let kubeconfig: string;
let service: RunningService;
const lines: string[] = [];
const responses: string[] = [];
const oldKey = createTestCertificate();
const newKey = createTestCertificate();

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-rotate-same-'));
  served = join(scratch, 'served');
  await mkdir(served);
  http = await startGitHttpServer({ baseDir: served, username: GIT_USER, password: GIT_TOKEN });
  kube = await startKubeApiDouble();
  controller = serveSealedSecretsController(kube, CONTROLLER, oldKey);
  kubeconfig = await readFile(await kube.writeKubeconfig(await mkdtemp(join(scratch, 'kube-'))), 'utf8');
  const config = loadServiceConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    API_TOKENS: API_TOKEN,
    DATA_DIR: join(scratch, 'service'),
    EXECUTOR: 'local',
    AUTH_MODE: 'static',
    LOG_LEVEL: 'debug',
  });
  const capture: DestinationStream = { write: (chunk: string) => void lines.push(...chunk.split('\n').filter(Boolean)) };
  service = await startService(config, { logger: createPino({ level: 'debug', destination: capture, base: { service: 'gitops-scaffolder' } }) });
});

after(async () => {
  await service?.close();
  await http?.stop();
  await kube?.stop();
  await rm(scratch, { recursive: true, force: true });
});

async function newRemote(name: string): Promise<{ name: string; dir: string }> {
  const dir = join(served, name);
  await ensureSeededBareRepository(dir, platformDir());
  await git(dir, 'config', 'http.receivepack', 'true');
  await git(dir, 'config', 'uploadpack.allowFilter', 'true');
  await git(dir, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
  return { name, dir };
}

async function call(path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${service.address}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${API_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  responses.push(text);
  return { status: response.status, text };
}

/** Starts a run (202) and waits for its final status. */
async function runToEnd(path: string, body: unknown): Promise<{ id: string; status: string; message: string; error_code: string | null }> {
  const started = await call(path, body);
  assert.equal(started.status, 202, started.text);
  const { id } = JSON.parse(started.text) as { id: string };
  const run = await eventually(
    `run ${id} to finish`,
    async () => {
      const view = JSON.parse((await call(`/api/v1/scaffolds/${id}`)).text) as { status: string; message: string; error_code: string | null };
      return view.status === 'succeeded' || view.status === 'failed' ? view : undefined;
    },
    240_000,
    250,
  );
  await call(`/api/v1/scaffolds/${id}/logs`);
  return { id, ...run };
}

describe("a rotation run keeps the values: the cluster's controller re-encrypts them (/v1/rotate)", { timeout: 600_000 }, () => {
  it('pushes only SealedSecrets that open under the new key to the very values they held, and no value reaches a log', async () => {
    const remote = await newRemote('same-values.git');
    const cluster = { name: 'eu-keep-1', domain: 'eu-keep-1.example.net', region: 'eu-west-1' };
    const repository = { url: http.url(remote.name), credentials: { username: GIT_USER, token: GIT_TOKEN } };
    const scaffolded = await runToEnd('/api/v1/scaffolds', { cluster, repository, kubeconfig: { inline: kubeconfig } });
    assert.equal(scaffolded.status, 'succeeded', JSON.stringify(scaffolded));
    const gitopsPath = `clusters/${cluster.name}`;
    const before = await treeAt(remote.dir, 'main', gitopsPath);
    const sealedBefore = sealedIn(before);
    // postgresql, rabbitmq, tcr-database (no registry credential: no pull secret).
    assert.equal(sealedBefore.size, 3, [...sealedBefore.keys()].join(', '));
    const plaintexts = new Map([...sealedBefore].map(([path, object]) => [path, controllerUnseal(object, oldKey.privateKey)]));
    const head = await git(remote.dir, 'rev-parse', 'main');

    // The controller renews its key: cert.pem serves the new one, the old one stays held.
    controller.renewKey(newKey);
    const rotated = await runToEnd(`/api/v1/clusters/${cluster.name}/rotate`, { repository, kubeconfig: { inline: kubeconfig } });
    assert.equal(rotated.status, 'succeeded', JSON.stringify(rotated));
    assert.equal(controller.answered.ok, 3, 'each SealedSecret went through the controller');

    assert.equal(await git(remote.dir, 'rev-list', '--count', `${head}..main`), '1', 'one new commit');
    const after = await treeAt(remote.dir, 'main', gitopsPath);
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((path) => before.get(path) !== after.get(path)).sort();
    assert.deepEqual(changed, [...sealedBefore.keys()].sort(), 'the commit changes the SealedSecrets and nothing else');

    const newFingerprint = `sha256:${parseSealingCertificate(newKey.certificatePem).fingerprint.toLowerCase()}`;
    for (const [path, object] of sealedIn(after)) {
      const opened = controllerUnseal(object, newKey.privateKey);
      const was = plaintexts.get(path)!;
      assert.deepEqual(Object.keys(opened).sort(), Object.keys(was).sort(), path);
      for (const [key, value] of Object.entries(was)) assert.ok(opened[key]!.equals(value), `${path} ${key}: the same value under the new key`);
      assert.throws(() => controllerUnseal(object, oldKey.privateKey), Error, `${path} is sealed anew, not copied`);
      assert.equal(object.metadata.annotations?.[SEALED_WITH_ANNOTATION], newFingerprint, `${path} records the certificate it is sealed for now`);
      // The template is Git's, not the controller's rebuild (which copies metadata, annotations included, into it).
      assert.deepEqual(withoutCiphertext(object), withoutCiphertext(sealedBefore.get(path)!), `${path}: only the ciphertext and its certificate changed`);
    }

    // The runner handled ciphertext only: no value, as text or base64, in the service's log, the run's logs or any answer.
    const needles = [...plaintexts.values()]
      .flatMap((values) => Object.values(values))
      .filter((v) => v.length >= 8)
      .flatMap((v) => [v.toString('utf8'), v.toString('base64')]);
    assert.ok(needles.length >= 3);
    assert.ok(
      responses.some((r) => r.includes('re-encrypted by kube-system/sealed-secrets-controller with its newest key (same values)')),
      "the run's log says what it did",
    );
    for (const text of [...lines, ...responses])
      for (const needle of needles) assert.ok(!text.includes(needle), `a value (${needle.slice(0, 4)}…) leaked into: ${text.slice(0, 200)}`);
  });

  it('fails a rotation whose controller cannot be reached, naming the API server and what to check, and pushes nothing', async () => {
    const remote = await newRemote('unreachable.git');
    const cluster = { name: 'eu-keep-2', domain: 'eu-keep-2.example.net', region: 'eu-west-1' };
    const repository = { url: http.url(remote.name), credentials: { username: GIT_USER, token: GIT_TOKEN } };
    const scaffolded = await runToEnd('/api/v1/scaffolds', { cluster, repository, kubeconfig: { inline: kubeconfig } });
    assert.equal(scaffolded.status, 'succeeded', JSON.stringify(scaffolded));
    const head = await git(remote.dir, 'rev-parse', 'main');
    controller.renewKey(createTestCertificate());

    // The controller's pod went away after step 5 read its certificate: the API server's proxy answers 503.
    kube.injectFailure({ method: 'POST', path: /\/services\/http:sealed-secrets-controller:http\/proxy\/v1\/rotate$/, code: 503, times: 100 });
    const failed = await runToEnd(`/api/v1/clusters/${cluster.name}/rotate`, { repository, kubeconfig: { inline: kubeconfig } });
    assert.equal(failed.status, 'failed', JSON.stringify(failed));
    assert.equal(failed.error_code, 'unavailable');
    assert.ok(failed.message.includes(kube.url), `names the API server: ${failed.message}`);
    assert.match(failed.message, /kubectl -n kube-system get deployment,endpoints sealed-secrets-controller/);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), head, 'nothing pushed');
  });

  it('refuses a rotation without a kubeconfig, or with a certificate: only the controller keeps the values, and only its certificate may be recorded', async () => {
    const answer = await call('/api/v1/clusters/eu-keep-1/rotate', { sealing: { certificate: newKey.certificatePem } });
    assert.equal(answer.status, 400, answer.text);
    assert.match(answer.text, /kubeconfig/);
    const both = await call('/api/v1/clusters/eu-keep-1/rotate', { kubeconfig: { inline: kubeconfig }, sealing: { certificate: newKey.certificatePem } });
    assert.equal(both.status, 400, both.text);
    assert.match(both.text, /certificate is read from the controller that re-encrypts/);
  });
});
