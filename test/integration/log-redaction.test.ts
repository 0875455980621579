/**
 * Issue 9: credentials never reach a log line. Asserted on real output, not on
 * a capturing double: the service as `serve` starts it (startService, embedded
 * mode on PGlite, static API tokens, the local executor spawning the real
 * scaffold-runner) with its real pino logger writing to a stream captured here,
 * and the real scaffold-runner's stdout and stderr. Each secret is looked for
 * as sent, in base64, and (for the Basic credentials) as the header value.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { startService, type RunningService } from '../../src/main.js';
import { platformDir } from '../../src/package-paths.js';
import { createPino } from '../../src/pino-logger.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { loadServiceConfig } from '../../src/service/service-config.js';
import { type GitHttpServer, startGitHttpServer } from '../support/git-server.js';
import { type KubeApiDouble, startKubeApiDouble } from '../support/kube-api-double.js';
import { describeOutcome, eventually, runRunner } from '../support/runner.js';
import { git } from '../support/git.js';

const secret = (prefix: string) => `${prefix}-${randomBytes(12).toString('hex')}`;
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const CONTROLLER = { namespace: 'kube-system', name: 'sealed-secrets-controller' } as const;

const API_TOKEN = secret('api-token');
const WRONG_BEARER = secret('wrong-bearer');
const BASIC_USER = 'operator';
const BASIC_PASSWORD = secret('basic-password');
const GIT_USER = 'scaffolder';
const GIT_TOKEN = secret('git-token');
const WRONG_GIT_TOKEN = secret('wrong-git-token');
const BAD_INPUT_TOKEN = secret('bad-input-token');
const URL_PASSWORD = secret('url-password');
const REGISTRY_USER = 'tcr-pull';
const REGISTRY_PASSWORD = secret('registry-password');
const BAD_REGISTRY_PASSWORD = secret('bad-registry-password');
const BROKEN_KUBECONFIG_TOKEN = secret('kube-token');

function dockerconfigjson(password: string): string {
  return JSON.stringify({ auths: { 'registry.example.net': { username: REGISTRY_USER, password, auth: b64(`${REGISTRY_USER}:${password}`) } } });
}

/** Every form of each secret a log line could carry. */
function needlesOf(secrets: readonly string[], users: Readonly<Record<string, string>> = {}): string[] {
  const needles = new Set<string>();
  for (const value of secrets) {
    needles.add(value);
    needles.add(b64(value));
    needles.add(encodeURIComponent(value));
    const user = users[value];
    if (user !== undefined) needles.add(b64(`${user}:${value}`));
  }
  return [...needles];
}

/** Fails naming the first line (of `lines`) that holds a needle. */
function assertNoNeedle(lines: readonly string[], needles: readonly string[], where: string): void {
  for (const line of lines) {
    for (const needle of needles) {
      assert.ok(!line.includes(needle), `${where} leaks a credential (${needle.slice(0, 12)}…) in:\n${line}`);
    }
  }
}

let scratch: string;
let served: string;
let seedRepo: string;
let remoteCount = 0;
let http: GitHttpServer;
let kube: KubeApiDouble;
const certificate = createTestCertificate();

async function newRemote(): Promise<{ name: string; dir: string }> {
  const name = `redaction-${++remoteCount}.git`;
  const dir = join(served, name);
  await git(scratch, 'clone', '--quiet', '--bare', seedRepo, dir);
  for (const [key, value] of [
    ['uploadpack.allowFilter', 'true'],
    ['uploadpack.allowAnySHA1InWant', 'true'],
    ['http.receivepack', 'true'],
  ] as const) {
    await git(dir, 'config', key, value);
  }
  return { name, dir };
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-log-redaction-'));
  served = join(scratch, 'served');
  await mkdir(served);
  seedRepo = join(scratch, 'seed.git');
  await ensureSeededBareRepository(seedRepo, platformDir());
  http = await startGitHttpServer({ baseDir: served, username: GIT_USER, password: GIT_TOKEN });
  kube = await startKubeApiDouble();
  kube.setService(CONTROLLER.namespace, CONTROLLER.name, { ports: [{ name: 'http', port: 8080 }] });
  kube.setDeploymentAvailable(CONTROLLER.namespace, CONTROLLER.name, true);
  kube.setProxyHandler(CONTROLLER.namespace, CONTROLLER.name, 'http', (request) =>
    request.path === '/v1/cert.pem'
      ? { status: 200, headers: { 'Content-Type': 'application/x-pem-file' }, body: certificate.certificatePem }
      : { status: 404, body: '404 page not found\n' },
  );
});

after(async () => {
  await http?.stop();
  await kube?.stop();
  await rm(scratch, { recursive: true, force: true });
});

describe('the service logs no credential it is sent', { timeout: 240_000 }, () => {
  let service: RunningService;
  const lines: string[] = [];
  const responses: string[] = [];

  before(async () => {
    const dataDir = join(scratch, 'service');
    const config = loadServiceConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      API_TOKENS: API_TOKEN,
      DATA_DIR: dataDir,
      EXECUTOR: 'local',
      AUTH_MODE: 'static',
      LOG_LEVEL: 'trace',
    });
    // The real pino logger (redaction and all), writing where the test can read it.
    const capture: DestinationStream = { write: (chunk: string) => void lines.push(...chunk.split('\n').filter(Boolean)) };
    service = await startService(config, { logger: createPino({ level: 'trace', destination: capture, base: { service: 'gitops-scaffolder' } }) });
  });

  after(async () => {
    await service?.close();
  });

  async function call(
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: unknown; raw?: string } = {},
  ): Promise<{ status: number; text: string }> {
    const payload = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
    const response = await fetch(`${service.address}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${API_TOKEN}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
      ...(payload === undefined ? {} : { body: payload }),
    });
    const text = await response.text();
    responses.push(text);
    return { status: response.status, text };
  }

  async function finished(id: string): Promise<{ status: string; message?: string }> {
    return eventually(
      `run ${id} to finish`,
      async () => {
        const run = JSON.parse((await call(`/api/v1/scaffolds/${id}`)).text) as { status: string; message?: string };
        return run.status === 'succeeded' || run.status === 'failed' ? run : undefined;
      },
      180_000,
      250,
    );
  }

  it('runs, dry-runs, refuses and rejects requests carrying credentials, and no log line holds one', async () => {
    const remote = await newRemote();
    const kubeconfig = await readFile(await kube.writeKubeconfig(await mkdtemp(join(scratch, 'kube-'))), 'utf8');
    assert.ok(kubeconfig.includes(kube.token));
    const cluster = (name: string) => ({ name, domain: `${name}.example.net`, region: 'eu-west-1' });
    const repository = (token: string) => ({ url: http.url(remote.name), credentials: { username: GIT_USER, token } });

    // 1. A real run: git token, kubeconfig (a bearer token inside), registry auth.
    const created = await call('/api/v1/scaffolds', {
      method: 'POST',
      body: {
        cluster: cluster('eu-prod-1'),
        repository: repository(GIT_TOKEN),
        kubeconfig: { inline: kubeconfig },
        registry_pull_secret: { dockerconfigjson: dockerconfigjson(REGISTRY_PASSWORD) },
      },
    });
    assert.equal(created.status, 202, created.text);
    const run = JSON.parse(created.text) as { id: string };
    const done = await finished(run.id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    const logs = await call(`/api/v1/scaffolds/${run.id}/logs`);
    assert.equal(logs.status, 200);
    assert.match(logs.text, /step_finished/);

    // 2. A run whose git token the server refuses: it fails at step 1.
    const refused = await call('/api/v1/scaffolds', {
      method: 'POST',
      body: { cluster: cluster('eu-prod-2'), repository: repository(WRONG_GIT_TOKEN), sealing: { certificate: certificate.certificatePem } },
    });
    assert.equal(refused.status, 202, refused.text);
    const refusedRun = JSON.parse(refused.text) as { id: string };
    const failed = await finished(refusedRun.id);
    assert.equal(failed.status, 'failed', JSON.stringify(failed));
    await call(`/api/v1/scaffolds/${refusedRun.id}/logs`);

    // 3. A dry run with the same credentials (the previewer clones with the token).
    const preview = await call('/api/v1/scaffolds?dry_run=true', {
      method: 'POST',
      body: {
        cluster: cluster('eu-prod-3'),
        repository: repository(GIT_TOKEN),
        kubeconfig: { inline: kubeconfig },
        registry_pull_secret: { dockerconfigjson: dockerconfigjson(REGISTRY_PASSWORD) },
      },
    });
    assert.equal(preview.status, 200, preview.text);

    // 4. Bad input carrying credentials: each is refused with 400.
    for (const body of [
      {
        cluster: cluster('eu-prod-4'),
        repository: { url: http.url(remote.name), credentials: { token: `${BAD_INPUT_TOKEN}\nX-Injected: 1` } },
        sealing: { certificate: certificate.certificatePem },
      },
      {
        cluster: cluster('eu-prod-4'),
        repository: { url: `https://${GIT_USER}:${URL_PASSWORD}@git.example.net/x.git` },
        sealing: { certificate: certificate.certificatePem },
      },
      {
        cluster: cluster('eu-prod-4'),
        sealing: { certificate: certificate.certificatePem },
        registry_pull_secret: { dockerconfigjson: `{"auths": {"r": {"password": "${BAD_REGISTRY_PASSWORD}"` },
      },
      { cluster: cluster('eu-prod-4'), kubeconfig: { inline: kubeconfig }, sealing: { certificate: certificate.certificatePem } },
      { cluster: cluster('EU_bad'), repository: repository(GIT_TOKEN), kubeconfig: { inline: kubeconfig } },
    ]) {
      const answer = await call('/api/v1/scaffolds', { method: 'POST', body });
      assert.equal(answer.status, 400, answer.text);
    }

    // A body that is not JSON (V8's SyntaxError quotes the text around the error).
    const broken = await call('/api/v1/scaffolds', { method: 'POST', raw: `{"repository": {"credentials": {"token": "${BAD_INPUT_TOKEN}"}},}` });
    assert.equal(broken.status, 400, broken.text);
    const brokenEarly = await call('/api/v1/scaffolds', { method: 'POST', raw: `{"repository": {"credentials": {"token": ${BAD_INPUT_TOKEN}}}}` });
    assert.equal(brokenEarly.status, 400, brokenEarly.text);

    // 5. Credentials the API does not take: Basic, an unknown bearer token, a token in the query string.
    const basic = await call('/api/v1/scaffolds', { headers: { authorization: `Basic ${b64(`${BASIC_USER}:${BASIC_PASSWORD}`)}` } });
    assert.equal(basic.status, 401);
    const wrong = await call('/api/v1/scaffolds', {
      method: 'POST',
      headers: { authorization: `Bearer ${WRONG_BEARER}` },
      body: { cluster: cluster('eu-prod-5'), repository: repository(GIT_TOKEN) },
    });
    assert.equal(wrong.status, 401);
    const query = await call(`/api/v1/scaffolds?access_token=${API_TOKEN}`);
    assert.equal(query.status, 400, query.text);

    // Fastify's own logger (app.log, request.log) is a child with its own redact
    // list, which replaces the parent's: it must still censor the service's paths.
    service.app.log.warn(
      { token: API_TOKEN, env: { SCAFFOLD_GIT_TOKEN: GIT_TOKEN }, secrets: { repositoryCredentials: { token: GIT_TOKEN } } },
      'a line through the Fastify logger',
    );
    assert.ok(lines.some((l) => l.includes('a line through the Fastify logger') && l.includes('"component":"http"')));

    // The service did log: requests, runs, the executor.
    assert.ok(lines.length > 20, `only ${lines.length} log lines`);
    assert.ok(lines.some((l) => l.includes('"request completed"')));
    assert.ok(lines.some((l) => l.includes('runner process exited')));

    const needles = needlesOf(
      [
        API_TOKEN,
        WRONG_BEARER,
        BASIC_PASSWORD,
        GIT_TOKEN,
        WRONG_GIT_TOKEN,
        BAD_INPUT_TOKEN,
        URL_PASSWORD,
        REGISTRY_PASSWORD,
        BAD_REGISTRY_PASSWORD,
        kube.token,
      ],
      {
        [BASIC_PASSWORD]: BASIC_USER,
        [GIT_TOKEN]: GIT_USER,
        [WRONG_GIT_TOKEN]: GIT_USER,
        [REGISTRY_PASSWORD]: REGISTRY_USER,
        [BAD_REGISTRY_PASSWORD]: REGISTRY_USER,
      },
    );
    assertNoNeedle(lines, needles, "the service's log");
    // What the API answers (run records, stored run logs, errors) holds none either.
    assertNoNeedle(responses, needles, 'an API response');
    // Nor the files the service keeps: run logs, results, the PGlite database's pages.
    const stored: string[] = [];
    for (const entry of await readdir(join(scratch, 'service'), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      const bytes = await readFile(path);
      for (const value of [GIT_TOKEN, WRONG_GIT_TOKEN, REGISTRY_PASSWORD, kube.token])
        if (bytes.includes(value)) stored.push(`${path}: ${value.slice(0, 12)}…`);
    }
    assert.deepEqual(stored, [], 'credentials stored in the data directory');
  });
});

describe('scaffold-runner writes no credential to stdout or stderr', { concurrency: true }, () => {
  it('on a successful run with a git token, a kubeconfig and registry auth from the environment', async () => {
    const remote = await newRemote();
    const kubeconfig = await readFile(await kube.writeKubeconfig(await mkdtemp(join(scratch, 'kube-'))), 'utf8');
    const resultFile = join(await mkdtemp(join(scratch, 'result-')), 'result.json');
    const outcome = await runRunner({
      args: [
        '--repo-url',
        http.url(remote.name),
        '--cluster',
        'eu-prod-1',
        '--domain',
        'eu-prod-1.example.net',
        '--region',
        'eu-west-1',
        '--result-file',
        resultFile,
      ],
      env: {
        TMPDIR: scratch,
        SCAFFOLD_GIT_TOKEN: GIT_TOKEN,
        SCAFFOLD_GIT_USERNAME: GIT_USER,
        SCAFFOLD_KUBECONFIG_DATA: kubeconfig,
        SCAFFOLD_REGISTRY_AUTH: dockerconfigjson(REGISTRY_PASSWORD),
        SCAFFOLD_LOG_LEVEL: 'debug',
      },
      resultFile,
    });
    assert.equal(outcome.code, 0, describeOutcome(outcome));
    assert.equal(outcome.result?.status, 'succeeded');
    const needles = needlesOf([GIT_TOKEN, REGISTRY_PASSWORD, kube.token], { [GIT_TOKEN]: GIT_USER, [REGISTRY_PASSWORD]: REGISTRY_USER });
    assertNoNeedle(outcome.stdout.split('\n'), needles, "the runner's stdout");
    assertNoNeedle(outcome.stderr.split('\n'), needles, "the runner's stderr");
    assertNoNeedle([await readFile(resultFile, 'utf8')], needles, 'the result file');
  });

  for (const [title, env, why] of [
    [
      'when the remote refuses the git token',
      { SCAFFOLD_GIT_TOKEN: WRONG_GIT_TOKEN, SCAFFOLD_GIT_USERNAME: GIT_USER },
      /step 1 \(clone\) failed: .*(Authentication failed|401|could not read Username)/,
    ],
    ['when the git token is malformed', { SCAFFOLD_GIT_TOKEN: `${BAD_INPUT_TOKEN}\r\nX-Injected: 1`, SCAFFOLD_GIT_USERNAME: GIT_USER }, /line break/],
    [
      'when the registry auth is not JSON',
      { SCAFFOLD_GIT_TOKEN: GIT_TOKEN, SCAFFOLD_GIT_USERNAME: GIT_USER, SCAFFOLD_REGISTRY_AUTH: `{"auths": {"r": {"password": "${BAD_REGISTRY_PASSWORD}"` },
      /registry/i,
    ],
    [
      'when the kubeconfig is not YAML',
      { SCAFFOLD_GIT_TOKEN: GIT_TOKEN, SCAFFOLD_KUBECONFIG_DATA: `users: [{name: u, user: {token: ${BROKEN_KUBECONFIG_TOKEN}` },
      /kubeconfig/i,
    ],
  ] as const) {
    it(`on a failed run ${title}`, async () => {
      const remote = await newRemote();
      const certFile = join(await mkdtemp(join(scratch, 'cert-')), 'cert.pem');
      await writeFile(certFile, certificate.certificatePem);
      const resultFile = join(await mkdtemp(join(scratch, 'result-')), 'result.json');
      const withCert = 'SCAFFOLD_KUBECONFIG_DATA' in env ? [] : ['--cert', certFile];
      const outcome = await runRunner({
        args: [
          '--repo-url',
          http.url(remote.name),
          '--cluster',
          'eu-prod-1',
          '--domain',
          'eu-prod-1.example.net',
          '--region',
          'eu-west-1',
          ...withCert,
          '--result-file',
          resultFile,
        ],
        env: { TMPDIR: scratch, SCAFFOLD_LOG_LEVEL: 'debug', ...env },
        resultFile,
      });
      assert.notEqual(outcome.code, 0, describeOutcome(outcome));
      assert.equal(outcome.result?.status, 'failed', describeOutcome(outcome));
      assert.match(outcome.result?.message ?? '', why, describeOutcome(outcome));
      const needles = needlesOf([GIT_TOKEN, WRONG_GIT_TOKEN, BAD_INPUT_TOKEN, BAD_REGISTRY_PASSWORD, BROKEN_KUBECONFIG_TOKEN], {
        [GIT_TOKEN]: GIT_USER,
        [WRONG_GIT_TOKEN]: GIT_USER,
        [BAD_INPUT_TOKEN]: GIT_USER,
      });
      assertNoNeedle(outcome.stdout.split('\n'), needles, "the runner's stdout");
      assertNoNeedle(outcome.stderr.split('\n'), needles, "the runner's stderr");
      assertNoNeedle([await readFile(resultFile, 'utf8')], needles, 'the result file');
    });
  }

  it("on a failed run when the cluster refuses the kubeconfig's token", async () => {
    const remote = await newRemote();
    const wrongKubeToken = secret('wrong-kube-token');
    const kubeconfig = await readFile(await kube.writeKubeconfig(await mkdtemp(join(scratch, 'kube-')), { token: wrongKubeToken }), 'utf8');
    const resultFile = join(await mkdtemp(join(scratch, 'result-')), 'result.json');
    const outcome = await runRunner({
      args: [
        '--repo-url',
        http.url(remote.name),
        '--cluster',
        'eu-prod-1',
        '--domain',
        'eu-prod-1.example.net',
        '--region',
        'eu-west-1',
        '--controller-timeout',
        '3s',
        '--result-file',
        resultFile,
      ],
      env: {
        TMPDIR: scratch,
        SCAFFOLD_LOG_LEVEL: 'debug',
        SCAFFOLD_GIT_TOKEN: GIT_TOKEN,
        SCAFFOLD_GIT_USERNAME: GIT_USER,
        SCAFFOLD_KUBECONFIG_DATA: kubeconfig,
      },
      resultFile,
    });
    assert.notEqual(outcome.code, 0, describeOutcome(outcome));
    assert.equal(outcome.result?.step, 4, describeOutcome(outcome));
    const needles = needlesOf([GIT_TOKEN, wrongKubeToken, kube.token], { [GIT_TOKEN]: GIT_USER });
    assertNoNeedle(outcome.stdout.split('\n'), needles, "the runner's stdout");
    assertNoNeedle(outcome.stderr.split('\n'), needles, "the runner's stderr");
    assertNoNeedle([await readFile(resultFile, 'utf8')], needles, 'the result file');
  });
});
