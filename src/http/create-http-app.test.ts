import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { PgRunStore } from '../db/pg-run-store.js';
import { ForbiddenError, UnavailableError } from '../errors.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import type { Authenticator } from '../service/authenticator.js';
import type { Action, Authorizer } from '../service/authorizer.js';
import { RunMonitor } from '../service/run-monitor.js';
import type { ExecutionState, RunExecutor } from '../service/run-executor.js';
import type { PreviewInput, ScaffoldPreview, ScaffoldPreviewer } from '../run/scaffold-previewer.js';
import type { RunResult, RunSecrets, RunRecord } from '../run/run-record.js';
import { RunService } from '../service/run-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';
import { DOCS_CSP, createHttpApp } from './create-http-app.js';

const TOKEN = 'test-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const SECRET = 'hunter2-very-secret-value';
const KUBECONFIG = 'apiVersion: v1\nkind: Config\nclusters: []\n';

/** A fake executor that records calls; tests drive each run's output and outcome. */
class FakeExecutor implements RunExecutor {
  readonly starts: { run: RunRecord; secrets: RunSecrets }[] = [];
  readonly cancels: string[] = [];
  readonly #states = new Map<string, ExecutionState>();
  readonly #lines = new Map<string, string[]>();
  #waiters: (() => void)[] = [];
  startError: Error | undefined;

  async start(run: RunRecord, secrets: RunSecrets): Promise<{ job: string }> {
    if (this.startError) throw this.startError;
    this.starts.push({ run, secrets });
    this.#states.set(run.id, { state: 'running' });
    return { job: run.job };
  }
  async inspect(run: RunRecord): Promise<ExecutionState> {
    return this.#states.get(run.id) ?? { state: 'missing' };
  }
  emit(id: string, line: string): void {
    this.#lines.set(id, [...(this.#lines.get(id) ?? []), line]);
    this.#wake();
  }
  finish(id: string, result: RunResult): void {
    this.#states.set(id, { state: result.status, result });
    this.#wake();
  }
  async *logs(run: RunRecord, options: { follow: boolean; signal?: AbortSignal }): AsyncIterable<string> {
    let index = 0;
    for (;;) {
      const lines = this.#lines.get(run.id) ?? [];
      while (index < lines.length) yield lines[index++] as string;
      const state = this.#states.get(run.id)?.state;
      if (!options.follow || options.signal?.aborted || state === 'succeeded' || state === 'failed' || state === undefined) return;
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        options.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
    }
  }
  async cancel(run: RunRecord): Promise<void> {
    this.cancels.push(run.id);
    this.finish(run.id, { status: 'failed', message: 'killed' });
  }
  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

class FakePreviewer implements ScaffoldPreviewer {
  readonly calls: PreviewInput[] = [];
  async preview(input: PreviewInput): Promise<ScaffoldPreview> {
    this.calls.push(input);
    return {
      gitopsPath: `clusters/${input.cluster.name}`,
      files: [
        { path: `clusters/${input.cluster.name}/kustomization.yaml`, change: 'added', content: 'resources: [flux]\n' },
        { path: `clusters/${input.cluster.name}/flux/kustomization.yaml`, change: 'added' },
      ],
    };
  }
}

interface Harness {
  app: FastifyInstance;
  executor: FakeExecutor;
  previewer: FakePreviewer;
  monitor: RunMonitor;
  close(): Promise<void>;
}

let store: PgRunStore;
let clusterCounter = 0;
/** Each test scaffolds its own cluster: the store is shared, and one cluster may have one active run. */
const nextCluster = () => {
  clusterCounter++;
  return { name: `c-${clusterCounter}`, domain: `c-${clusterCounter}.example.net`, region: 'eu-west-1' };
};

async function harness(
  options: {
    authenticator?: Authenticator;
    authorizer?: Authorizer;
    metricsPublic?: boolean;
    healthStore?: { ping(): Promise<void> };
    bodyLimit?: number;
  } = {},
): Promise<Harness> {
  const executor = new FakeExecutor();
  const previewer = new FakePreviewer();
  const monitor = new RunMonitor({ store, executor, options: { logFlushMs: 10, reconcileIntervalMs: 60_000, recheckDelayMs: 20 } });
  const stop = new AbortController();
  await monitor.start(stop.signal);
  const service = new RunService({
    store,
    executor,
    previewer,
    defaultRepository: { ensure: async () => 'file:///srv/gitops.git' },
    reference: 'development',
    tracker: monitor,
    logPollMs: 10,
  });
  const app = await createHttpApp({
    service,
    authenticator: options.authenticator ?? new StaticTokenAuthenticator([TOKEN]),
    ...(options.authorizer ? { authorizer: options.authorizer } : {}),
    store: options.healthStore ?? store,
    metricsPublic: options.metricsPublic ?? false,
    bodyLimit: options.bodyLimit ?? 65_536,
    pendingRunWrites: () => monitor.pendingWrites(),
  });
  return {
    app,
    executor,
    previewer,
    monitor,
    async close() {
      await app.close();
      stop.abort();
      await monitor.idle();
    },
  };
}

async function rowCount(): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await store.list({ limit: 1000, ...(cursor ? { cursor } : {}) });
    count += page.runs.length;
    cursor = page.nextCursor;
  } while (cursor);
  return count;
}

function validBody(cluster = nextCluster()): Record<string, unknown> {
  return { cluster, kubeconfig: { inline: KUBECONFIG } };
}

function post(app: FastifyInstance, payload: unknown, query = '') {
  return app.inject({
    method: 'POST',
    url: `/api/v1/scaffolds${query}`,
    headers: { ...AUTH, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
}

before(async () => {
  store = await PgRunStore.open();
});
after(async () => {
  await store.close();
});

// ---------------------------------------------------------------------------

const base = () => ({ name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' });
const withCluster = (patch: Record<string, unknown>) => ({ cluster: { ...base(), ...patch }, kubeconfig: { inline: KUBECONFIG } });
const withRepository = (repository: unknown) => ({ cluster: base(), repository, kubeconfig: { inline: KUBECONFIG } });
const withUrl = (url: unknown) => withRepository({ url });
const withBranch = (branch: unknown) => withRepository({ url: 'https://git.example.net/platform/gitops.git', branch });
const withKubeconfig = (kubeconfig: unknown) => ({ cluster: base(), kubeconfig });
const secretRef = (patch: Record<string, unknown>) =>
  withKubeconfig({ secretRef: { namespace: 'clusters', name: 'eu-prod-1-kubeconfig', key: 'value', ...patch } });
const withoutKey = <T extends Record<string, unknown>>(value: T, key: string) => Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));

/** [description, body, field the error must name]. */
const MALFORMED_BODIES: readonly [string, unknown, string][] = [
  ['upper-case name', withCluster({ name: 'EU-prod-1' }), 'cluster.name'],
  ['64-character name', withCluster({ name: 'a'.repeat(64) }), 'cluster.name'],
  ['name with ../', withCluster({ name: '../x' }), 'cluster.name'],
  ['name with a slash', withCluster({ name: 'a/b' }), 'cluster.name'],
  ['empty name', withCluster({ name: '' }), 'cluster.name'],
  ['name with a leading dash', withCluster({ name: '-prod' }), 'cluster.name'],
  ['name with a trailing dash', withCluster({ name: 'prod-' }), 'cluster.name'],
  ['unicode name', withCluster({ name: 'prod-ü' }), 'cluster.name'],
  ['name with a space', withCluster({ name: 'eu prod' }), 'cluster.name'],
  ['name with a dot', withCluster({ name: 'eu.prod' }), 'cluster.name'],
  ['numeric name', withCluster({ name: 42 }), 'cluster.name'],
  ['null name', withCluster({ name: null }), 'cluster.name'],
  ['missing name', { cluster: withoutKey(base(), 'name'), kubeconfig: { inline: KUBECONFIG } }, 'cluster.name'],
  ['single-label domain', withCluster({ domain: 'localhost' }), 'cluster.domain'],
  ['upper-case domain', withCluster({ domain: 'Example.NET' }), 'cluster.domain'],
  ['domain with an empty label', withCluster({ domain: 'a..example.net' }), 'cluster.domain'],
  ['domain with a trailing dot', withCluster({ domain: 'example.net.' }), 'cluster.domain'],
  ['domain label with a leading dash', withCluster({ domain: '-a.example.net' }), 'cluster.domain'],
  ['domain with an underscore', withCluster({ domain: 'exa_mple.net' }), 'cluster.domain'],
  ['domain with a numeric TLD', withCluster({ domain: 'example.123' }), 'cluster.domain'],
  ['254-character domain', withCluster({ domain: `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example.net` }), 'cluster.domain'],
  ['domain with a space', withCluster({ domain: 'ex ample.net' }), 'cluster.domain'],
  ['domain as an array', withCluster({ domain: ['example.net'] }), 'cluster.domain'],
  ['missing domain', { cluster: withoutKey(base(), 'domain'), kubeconfig: { inline: KUBECONFIG } }, 'cluster.domain'],
  ['upper-case region', withCluster({ region: 'EU-WEST-1' }), 'cluster.region'],
  ['region without a dash', withCluster({ region: 'euwest1' }), 'cluster.region'],
  ['region with underscores', withCluster({ region: 'eu_west_1' }), 'cluster.region'],
  ['empty region', withCluster({ region: '' }), 'cluster.region'],
  ['region starting with one letter', withCluster({ region: 'e-west-1' }), 'cluster.region'],
  ['too long region', withCluster({ region: `eu-${'a'.repeat(40)}` }), 'cluster.region'],
  ['numeric region', withCluster({ region: 7 }), 'cluster.region'],
  ['missing cluster', { kubeconfig: { inline: KUBECONFIG } }, 'cluster'],
  ['cluster as a string', { cluster: 'eu-prod-1', kubeconfig: { inline: KUBECONFIG } }, 'cluster'],
  ['cluster as an array', { cluster: [base()], kubeconfig: { inline: KUBECONFIG } }, 'cluster'],
  ['unknown field in cluster', withCluster({ provider: 'aws' }), 'cluster'],
  ['unknown top-level field', { ...withCluster({}), clusters: [] }, 'body'],
  ['unknown field in repository', withRepository({ url: 'https://git.example.net/x.git', ref: 'main' }), 'repository'],
  [
    'unknown field in credentials',
    withRepository({ url: 'https://git.example.net/x.git', credentials: { token: SECRET, password: SECRET } }),
    'repository.credentials',
  ],
  ['unknown field in kubeconfig', withKubeconfig({ inline: KUBECONFIG, file: '/root/.kube/config' }), 'kubeconfig'],
  ['unknown field in secretRef', secretRef({ optional: true }), 'kubeconfig.secretRef'],
  ['unknown field in sealing', { cluster: base(), sealing: { certificate: 'x', key: SECRET } }, 'sealing'],
  [
    'unknown field in registry_pull_secret',
    { ...withCluster({}), registry_pull_secret: { dockerconfigjson: '{"auths":{}}', username: 'x' } },
    'registry_pull_secret',
  ],
  ['URL with user and password', withUrl(`https://scaffolder:${SECRET}@git.example.net/x.git`), 'repository.url'],
  ['URL with a token as user', withUrl(`https://${SECRET}@git.example.net/x.git`), 'repository.url'],
  ['ext:: transport with a command', withUrl('ext::sh -c touch% /tmp/pwned'), 'repository.url'],
  ['ext:: transport', withUrl('ext::git-remote-evil'), 'repository.url'],
  ['fd:: transport', withUrl('fd::3'), 'repository.url'],
  ['plain http to a remote host', withUrl('http://git.example.net/x.git'), 'repository.url'],
  ['git:// to a remote host', withUrl('git://git.example.net/x.git'), 'repository.url'],
  ['ftp URL', withUrl('ftp://git.example.net/x.git'), 'repository.url'],
  ['scp-like URL', withUrl('git@github.com:org/repo.git'), 'repository.url'],
  ['option-like URL', withUrl('--upload-pack=touch /tmp/pwned'), 'repository.url'],
  ['URL with a fragment', withUrl('https://git.example.net/x.git#main'), 'repository.url'],
  ['file URL on a remote host', withUrl('file://fileserver/srv/x.git'), 'repository.url'],
  ['empty URL', withUrl(''), 'repository.url'],
  ['javascript URL', withUrl('javascript:alert(1)'), 'repository.url'],
  ['URL without a path', withUrl('https://git.example.net/'), 'repository.url'],
  ['numeric URL', withUrl(5), 'repository.url'],
  ['branch with ..', withBranch('release..1'), 'repository.branch'],
  ['branch with a leading dash', withBranch('-main'), 'repository.branch'],
  ['branch with a trailing slash', withBranch('feature/'), 'repository.branch'],
  ['branch with a space', withBranch('my branch'), 'repository.branch'],
  ['branch ending in .lock', withBranch('main.lock'), 'repository.branch'],
  ['branch part starting with a dot', withBranch('feature/.hidden'), 'repository.branch'],
  ['branch with @{', withBranch('main@{1}'), 'repository.branch'],
  ['branch with ~', withBranch('main~1'), 'repository.branch'],
  ['branch with a colon', withBranch('a:b'), 'repository.branch'],
  ['empty branch', withBranch(''), 'repository.branch'],
  ['kubeconfig and certificate both missing', { cluster: base() }, 'kubeconfig'],
  [
    'kubeconfig and certificate both given',
    { cluster: base(), kubeconfig: { inline: KUBECONFIG }, sealing: { certificate: createTestCertificate({}).certificatePem } },
    'sealing.certificate',
  ],
  ['certificate that is not PEM', { cluster: base(), sealing: { certificate: 'not a certificate' } }, 'sealing.certificate'],
  [
    'certificate with a broken body',
    { cluster: base(), sealing: { certificate: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' } },
    'sealing.certificate',
  ],
  ['empty certificate', { cluster: base(), sealing: { certificate: '' } }, 'sealing.certificate'],
  ['empty kubeconfig object', withKubeconfig({}), 'kubeconfig'],
  [
    'kubeconfig with both inline and secretRef',
    withKubeconfig({ inline: KUBECONFIG, secretRef: { namespace: 'clusters', name: 'x', key: 'value' } }),
    'kubeconfig',
  ],
  ['secretRef with an upper-case namespace', secretRef({ namespace: 'Clusters' }), 'kubeconfig.secretRef.namespace'],
  ['secretRef with a path as name', secretRef({ name: '../x' }), 'kubeconfig.secretRef.name'],
  ['secretRef with a slash in the key', secretRef({ key: 'a/b' }), 'kubeconfig.secretRef.key'],
  ['secretRef without a key', withKubeconfig({ secretRef: { namespace: 'clusters', name: 'x' } }), 'kubeconfig.secretRef.key'],
  ['empty inline kubeconfig', withKubeconfig({ inline: '' }), 'kubeconfig.inline'],
  ['numeric inline kubeconfig', withKubeconfig({ inline: 42 }), 'kubeconfig.inline'],
  [
    'credentials without a token',
    withRepository({ url: 'https://git.example.net/x.git', credentials: { username: 'scaffolder' } }),
    'repository.credentials.token',
  ],
  [
    'token with a line break',
    withRepository({ url: 'https://git.example.net/x.git', credentials: { token: `${SECRET}\nX-Injected: 1` } }),
    'repository.credentials.token',
  ],
  ['empty token', withRepository({ url: 'https://git.example.net/x.git', credentials: { token: '' } }), 'repository.credentials.token'],
  [
    'dockerconfigjson that is not JSON',
    { ...withCluster({}), registry_pull_secret: { dockerconfigjson: `not json ${SECRET}` } },
    'registry_pull_secret.dockerconfigjson',
  ],
  [
    'dockerconfigjson without auths',
    { ...withCluster({}), registry_pull_secret: { dockerconfigjson: '{"credsStore":"x"}' } },
    'registry_pull_secret.dockerconfigjson',
  ],
  // Requests that used to get 202 and then a failed run.
  [
    'dockerconfigjson with an empty auths',
    { ...withCluster({}), registry_pull_secret: { dockerconfigjson: '{"auths":{}}' } },
    'registry_pull_secret.dockerconfigjson',
  ],
  [
    'dockerconfigjson whose registry has no credentials',
    { ...withCluster({}), registry_pull_secret: { dockerconfigjson: '{"auths":{"registry.example.net":{}}}' } },
    'registry_pull_secret.dockerconfigjson',
  ],
  [
    'dockerconfigjson whose auth is not user:password',
    { ...withCluster({}), registry_pull_secret: { dockerconfigjson: `{"auths":{"registry.example.net":{"auth":"${SECRET}"}}}` } },
    'registry_pull_secret.dockerconfigjson',
  ],
  // Failure notifications: the type notification-controller knows, the address (a credential) https only, never echoed.
  [
    'notification provider notification-controller does not know',
    { ...withCluster({}), notifications: { provider: 'teams', address: `https://hooks.slack.com/services/${SECRET}` } },
    'notifications.provider',
  ],
  [
    'notification address over plain http',
    { ...withCluster({}), notifications: { provider: 'slack', address: `http://hooks.slack.com/services/${SECRET}` } },
    'notifications.address',
  ],
  [
    'notification address that is not a URL',
    { ...withCluster({}), notifications: { provider: 'generic', address: `hooks.example.net/${SECRET}` } },
    'notifications.address',
  ],
  ['notifications without an address', { ...withCluster({}), notifications: { provider: 'slack' } }, 'notifications.address'],
  ['cluster named like the reference environment', withCluster({ name: 'development' }), 'cluster.name'],
  // URLs git reads differently from a URL parser.
  ['backslash URL that git sends to another host', withUrl('http://localhost\\@169.254.169.254/latest/meta-data'), 'repository.url'],
  ['file: without slashes (scp-style to host "file" for git)', withUrl('file:etc'), 'repository.url'],
  ['https: without slashes (scp-style to host "https" for git)', withUrl('https:git.example.net/x.git'), 'repository.url'],
  ['hex IPv4 host', withUrl('http://0x7f.1/x.git'), 'repository.url'],
  ['file URL to a repository that is not configured', withUrl('file:///etc'), 'repository.url'],
  ['absolute path to a repository that is not configured', withUrl('/srv/other.git'), 'repository.url'],
  // Kubeconfigs that would run a command or read a file on the runner's host.
  [
    'kubeconfig with exec',
    withKubeconfig({ inline: 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    exec:\n      command: sh\n      args: ["-c", "id"]\n' }),
    'kubeconfig.inline',
  ],
  [
    'kubeconfig with an auth-provider',
    withKubeconfig({ inline: 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    auth-provider:\n      name: gcp\n' }),
    'kubeconfig.inline',
  ],
  [
    'kubeconfig with a tokenFile',
    withKubeconfig({
      inline: 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n',
    }),
    'kubeconfig.inline',
  ],
  [
    'kubeconfig with client certificate files',
    withKubeconfig({
      inline: 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    client-certificate: /etc/tls.crt\n    client-key: /etc/tls.key\n',
    }),
    'kubeconfig.inline',
  ],
  [
    'kubeconfig with a CA file',
    withKubeconfig({
      inline: 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1\n    certificate-authority: /etc/ca.crt\n',
    }),
    'kubeconfig.inline',
  ],
  ['body that is an array', [withCluster({})], 'body'],
  ['body that is a string', 'eu-prod-1', 'body'],
  ['body that is null', null, 'body'],
];

/** [description, raw request, expected status]. */
const MALFORMED_REQUESTS: readonly [string, { payload?: string; headers?: Record<string, string>; url?: string }, number, string?][] = [
  ['invalid JSON', { payload: '{"cluster": {"name": ' }, 400, 'body'],
  ['JSON with a trailing comma', { payload: '{"cluster": {},}' }, 400, 'body'],
  ['empty body with a JSON content type', { payload: '' }, 400, 'body'],
  ['prototype poisoning', { payload: `{"__proto__": {"admin": true}, "cluster": ${JSON.stringify(base())}, "kubeconfig": {"inline": "x"}}` }, 400],
  ['text/plain body', { payload: JSON.stringify(withCluster({})), headers: { 'content-type': 'text/plain' } }, 415],
  ['form body', { payload: 'cluster=eu-prod-1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415],
  ['YAML body', { payload: 'cluster:\n  name: eu-prod-1\n', headers: { 'content-type': 'application/yaml' } }, 415],
  ['oversize body', { payload: JSON.stringify({ ...withCluster({}), kubeconfig: { inline: 'x'.repeat(70_000) } }) }, 413],
  ['dry_run that is not a boolean', { payload: JSON.stringify(withCluster({})), url: '/api/v1/scaffolds?dry_run=yes' }, 400, 'dry_run'],
  ['misspelt query parameter', { payload: JSON.stringify(withCluster({})), url: '/api/v1/scaffolds?dryrun=true' }, 400, 'query'],
];

describe('createHttpApp', () => {
  describe('POST /api/v1/scaffolds with malformed input', () => {
    let h: Harness;
    before(async () => {
      h = await harness();
    });
    after(async () => {
      await h.close();
    });

    it('has at least 50 cases', () => {
      assert.ok(MALFORMED_BODIES.length + MALFORMED_REQUESTS.length >= 50);
    });

    for (const [description, body, field] of MALFORMED_BODIES) {
      it(`answers 400 naming ${field} and stores nothing for: ${description}`, async () => {
        const rowsBefore = await rowCount();
        const response = await post(h.app, body);
        assert.equal(response.statusCode, 400, response.body);
        assert.match(response.headers['content-type'] as string, /^application\/json/);
        const error = response.json().error;
        assert.equal(error.code, 'invalid_input');
        assert.ok(typeof error.message === 'string' && error.message.length > 0);
        assert.ok(
          error.fields.some((f: { field: string; message: string }) => f.field === field && f.message.length > 0),
          `expected a message for ${field}, got ${JSON.stringify(error.fields)}`,
        );
        assert.ok(!response.body.includes(SECRET), 'the response must not echo a secret');
        assert.equal(await rowCount(), rowsBefore, 'no row may be created');
        assert.equal(h.executor.starts.length, 0, 'the executor must not be called');
        assert.equal(h.previewer.calls.length, 0);
      });
    }

    for (const [description, request, status, field] of MALFORMED_REQUESTS) {
      it(`answers ${status} with a JSON error and stores nothing for: ${description}`, async () => {
        const rowsBefore = await rowCount();
        const response = await h.app.inject({
          method: 'POST',
          url: request.url ?? '/api/v1/scaffolds',
          headers: { ...AUTH, 'content-type': 'application/json', ...request.headers },
          ...(request.payload === undefined ? {} : { payload: request.payload }),
        });
        assert.equal(response.statusCode, status, response.body);
        assert.match(response.headers['content-type'] as string, /^application\/json/);
        const error = response.json().error;
        assert.ok(typeof error.code === 'string' && typeof error.message === 'string' && error.message.length > 0);
        if (field !== undefined)
          assert.ok(
            error.fields.some((f: { field: string }) => f.field === field),
            JSON.stringify(error),
          );
        assert.ok(!/at .*\.(ts|js):\d+/.test(response.body), 'no stack trace');
        assert.equal(await rowCount(), rowsBefore);
        assert.equal(h.executor.starts.length, 0);
      });
    }

    it('refuses a kubeconfig Secret reference when the executor cannot mount one', async () => {
      const executor = new FakeExecutor();
      const service = new RunService({
        store,
        executor,
        previewer: new FakePreviewer(),
        defaultRepository: { ensure: async () => 'file:///x.git' },
        reference: 'development',
        kubeconfigSecretRefs: false,
      });
      const app = await createHttpApp({ service, authenticator: new StaticTokenAuthenticator([TOKEN]), store });
      const rowsBefore = await rowCount();
      const response = await post(app, { cluster: nextCluster(), kubeconfig: { secretRef: { namespace: 'clusters', name: 'x', key: 'value' } } });
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().error.fields[0].field, 'kubeconfig.secretRef');
      assert.equal(await rowCount(), rowsBefore);
      assert.equal(executor.starts.length, 0);
      await app.close();
    });

    it('asks for repository.url when the service has no default repository', async () => {
      const service = new RunService({ store, executor: new FakeExecutor(), previewer: new FakePreviewer(), reference: 'development' });
      const app = await createHttpApp({ service, authenticator: new StaticTokenAuthenticator([TOKEN]), store });
      const response = await post(app, validBody());
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().error.fields[0].field, 'repository.url');
      await app.close();
    });
  });

  describe('starting and reading runs', () => {
    let h: Harness;
    before(async () => {
      h = await harness();
    });
    after(async () => {
      await h.close();
    });

    it('answers 202 with id, job, status and a Location that GET resolves', async () => {
      const cluster = nextCluster();
      const body = {
        cluster,
        repository: { url: 'https://git.example.net/platform/gitops.git', branch: 'main', credentials: { username: 'scaffolder', token: SECRET } },
        kubeconfig: { inline: KUBECONFIG },
        registry_pull_secret: {
          dockerconfigjson: JSON.stringify({ auths: { 'registry.example.net': { auth: Buffer.from(`robot:${SECRET}`).toString('base64') } } }),
        },
      };
      const response = await post(h.app, body);
      assert.equal(response.statusCode, 202, response.body);
      const accepted = response.json();
      assert.equal(accepted.status, 'pending');
      assert.equal(accepted.job, `scaffold-${accepted.id}`);
      assert.equal(response.headers.location, `/api/v1/scaffolds/${accepted.id}`);

      // Secrets went to the executor, and only there.
      const started = h.executor.starts.find((s) => s.run.id === accepted.id);
      assert.ok(started);
      assert.deepEqual(started.secrets.repositoryCredentials, { username: 'scaffolder', token: SECRET });
      assert.deepEqual(started.secrets.kubeconfig, { kind: 'inline', value: KUBECONFIG });
      assert.ok(!JSON.stringify(await store.get(accepted.id)).includes(SECRET), 'the stored run holds no secret');

      const get = await h.app.inject({ method: 'GET', url: response.headers.location as string, headers: AUTH });
      assert.equal(get.statusCode, 200);
      const run = get.json();
      assert.equal(run.id, accepted.id);
      assert.deepEqual(run.cluster, cluster);
      assert.deepEqual(run.repository, { url: 'https://git.example.net/platform/gitops.git', branch: 'main' });
      assert.equal(run.reference, 'development');
      assert.equal(run.attempt, 1);
      assert.equal(run.step, 0);
      assert.equal(run.sealing, 'kubeconfig');
      assert.equal(run.created_by, 'static:0');
      assert.equal(run.gitops_path, null);
      assert.deepEqual(run.commits, []);
      assert.ok(!Number.isNaN(Date.parse(run.created_at)));
      assert.ok(!get.body.includes(SECRET));
    });

    it('uses the default repository and branch main when the request names none, and accepts a certificate', async () => {
      const { certificatePem } = createTestCertificate({});
      const response = await post(h.app, { cluster: nextCluster(), sealing: { certificate: certificatePem } });
      assert.equal(response.statusCode, 202, response.body);
      const run = (await h.app.inject({ method: 'GET', url: response.headers.location as string, headers: AUTH })).json();
      assert.deepEqual(run.repository, { url: 'file:///srv/gitops.git', branch: 'main' });
      assert.equal(run.sealing, 'certificate');
      assert.equal(h.executor.starts.at(-1)?.secrets.certificate, certificatePem);
    });

    it('carries wait_for_ready and its timeout to the runner, with a certificate alongside the kubeconfig, and needs the kubeconfig', async () => {
      const { certificatePem } = createTestCertificate({});
      const response = await post(h.app, { ...validBody(), sealing: { certificate: certificatePem }, wait_for_ready: true, ready_timeout_seconds: 600 });
      assert.equal(response.statusCode, 202, response.body);
      assert.deepEqual(h.executor.starts.at(-1)?.secrets.waitForReady, { timeoutSeconds: 600 });
      assert.equal((await post(h.app, { ...validBody(), wait_for_ready: true })).statusCode, 202);
      assert.deepEqual(h.executor.starts.at(-1)?.secrets.waitForReady, { timeoutSeconds: 900 }, 'the runner default');
      const refused = await post(h.app, { cluster: nextCluster(), sealing: { certificate: certificatePem }, wait_for_ready: true });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.ok(
        refused.json().error.fields.some((f: { field: string }) => f.field === 'wait_for_ready'),
        refused.body,
      );
      const both = await post(h.app, { ...validBody(), sealing: { certificate: certificatePem } });
      assert.equal(both.statusCode, 400, 'without wait_for_ready, kubeconfig and certificate stay exclusive');
    });

    it('answers 409 for a second active run on the same cluster, without starting it', async () => {
      const cluster = nextCluster();
      assert.equal((await post(h.app, validBody(cluster))).statusCode, 202);
      const starts = h.executor.starts.length;
      const second = await post(h.app, validBody(cluster));
      assert.equal(second.statusCode, 409, second.body);
      assert.equal(second.json().error.code, 'conflict');
      assert.equal(h.executor.starts.length, starts);
    });

    it('answers concurrent POSTs as it answers them one by one: one 202 a cluster, 409 naming the active run for the rest', async () => {
      // The store groups concurrent creates into shared INSERTs: a duplicate inside one must still be a 409.
      const clusters = Array.from({ length: 12 }, () => nextCluster());
      const bodies = [...clusters, ...clusters.slice(0, 4), ...clusters.slice(0, 2)].map((cluster) => validBody(cluster));
      const starts = h.executor.starts.length;
      const responses = await Promise.all(bodies.map((body) => post(h.app, body)));
      const accepted = new Map<string, string>();
      for (const [index, response] of responses.entries()) {
        if (response.statusCode !== 202) continue;
        const name = (bodies[index]!.cluster as { name: string }).name;
        assert.ok(!accepted.has(name), `${name} accepted twice`);
        accepted.set(name, response.json().id);
      }
      assert.equal(accepted.size, clusters.length, 'every cluster got one run');
      const conflicts = responses.filter((response) => response.statusCode === 409);
      assert.equal(conflicts.length, bodies.length - clusters.length, responses.map((r) => r.statusCode).join(' '));
      for (const conflict of conflicts) {
        const message: string = conflict.json().error.message;
        const name = /cluster (\S+) already has an active run/.exec(message)?.[1];
        assert.ok(name !== undefined && message.includes(accepted.get(name)!), message);
      }
      assert.equal(h.executor.starts.length - starts, clusters.length, 'only the accepted runs started');
    });

    it('answers 200 with the files for a dry run, storing and starting nothing', async () => {
      const rowsBefore = await rowCount();
      const starts = h.executor.starts.length;
      const cluster = nextCluster();
      const response = await post(h.app, validBody(cluster), '?dry_run=true');
      assert.equal(response.statusCode, 200, response.body);
      const preview = response.json();
      assert.equal(preview.dry_run, true);
      assert.equal(preview.gitops_path, `clusters/${cluster.name}`);
      assert.equal(preview.files.length, 2);
      assert.equal(preview.files[0].change, 'added');
      assert.equal(h.previewer.calls.at(-1)?.cluster.name, cluster.name);
      assert.equal(await rowCount(), rowsBefore);
      assert.equal(h.executor.starts.length, starts);
    });

    it('answers 404 for an unknown run and 400 for a malformed id', async () => {
      const missing = await h.app.inject({ method: 'GET', url: '/api/v1/scaffolds/0000aaaa-unknown', headers: AUTH });
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().error.code, 'not_found');
      const bad = await h.app.inject({ method: 'GET', url: '/api/v1/scaffolds/Bad_Id', headers: AUTH });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.fields[0].field, 'id');
      const route = await h.app.inject({ method: 'GET', url: '/api/v2/nothing', headers: AUTH });
      assert.equal(route.statusCode, 404);
      assert.equal(route.json().error.code, 'not_found');
    });

    it('lists runs filtered by cluster and status, with a cursor', async () => {
      const cluster = nextCluster();
      const first = (await post(h.app, validBody(cluster))).json();
      await h.app.inject({ method: 'POST', url: `/api/v1/scaffolds/${first.id}/cancel`, headers: AUTH });
      const second = (await post(h.app, validBody(cluster))).json();
      const page1 = await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds?cluster=${cluster.name}&limit=1`, headers: AUTH });
      assert.equal(page1.statusCode, 200, page1.body);
      assert.deepEqual(
        page1.json().items.map((r: { id: string }) => r.id),
        [second.id],
      );
      const page2 = await h.app.inject({
        method: 'GET',
        url: `/api/v1/scaffolds?cluster=${cluster.name}&limit=1&cursor=${encodeURIComponent(page1.json().next_cursor)}`,
        headers: AUTH,
      });
      assert.deepEqual(
        page2.json().items.map((r: { id: string }) => r.id),
        [first.id],
      );
      const cancelled = await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds?cluster=${cluster.name}&status=cancelled`, headers: AUTH });
      assert.deepEqual(
        cancelled.json().items.map((r: { id: string }) => r.id),
        [first.id],
      );
      for (const query of ['limit=101', 'limit=0', 'status=done', 'cluster=Bad', 'sort=asc']) {
        const response = await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds?${query}`, headers: AUTH });
        assert.equal(response.statusCode, 400, query);
      }
    });

    it('records a run that could not be started as failed, answers 503 and releases the cluster', async () => {
      const cluster = nextCluster();
      h.executor.startError = new UnavailableError('the Kubernetes API is unreachable');
      const response = await post(h.app, validBody(cluster));
      h.executor.startError = undefined;
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.headers['retry-after'], '5');
      const page = await store.list({ cluster: cluster.name });
      assert.equal(page.runs[0]?.status, 'failed');
      assert.match(page.runs[0]?.message ?? '', /could not start the run: the Kubernetes API is unreachable/);
      assert.equal((await post(h.app, validBody(cluster))).statusCode, 202);
    });
  });

  describe('logs', () => {
    it('streams lines with follow=true until the run finishes, then ends the response', async () => {
      const h = await harness();
      try {
        const accepted = (await post(h.app, validBody())).json();
        h.executor.emit(accepted.id, JSON.stringify({ event: 'step_started', step: 1, step_name: 'clone' }));
        const following = h.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${accepted.id}/logs?follow=true`, headers: AUTH });
        await delay(50);
        h.executor.emit(accepted.id, 'plain line from git');
        h.executor.emit(accepted.id, JSON.stringify({ event: 'commit', pass: 'infrastructure', sha: 'a'.repeat(40) }));
        await delay(50);
        h.executor.emit(accepted.id, JSON.stringify({ event: 'run_finished', msg: 'done' }));
        h.executor.finish(accepted.id, {
          status: 'succeeded',
          message: 'pushed',
          gitops_path: 'clusters/x',
          commits: [{ pass: 'infrastructure', sha: 'a'.repeat(40) }],
          step: 7,
        });
        const response = await following;
        assert.equal(response.statusCode, 200);
        assert.match(response.headers['content-type'] as string, /^text\/plain/);
        const lines = response.body.trimEnd().split('\n');
        assert.equal(lines.length, 4);
        assert.equal(JSON.parse(lines[0] as string).step_name, 'clone');
        assert.equal(lines[1], 'plain line from git');
        assert.equal(JSON.parse(lines[3] as string).event, 'run_finished');

        const run = (await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${accepted.id}`, headers: AUTH })).json();
        assert.equal(run.status, 'succeeded');
        assert.equal(run.gitops_path, 'clusters/x');
        assert.equal(run.step, 7);
        assert.notEqual(run.finished_at, null);

        const json = await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${accepted.id}/logs?format=json&after=2`, headers: AUTH });
        assert.match(json.headers['content-type'] as string, /^application\/x-ndjson/);
        const records = json.body
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l));
        assert.deepEqual(
          records.map((r: { seq: number }) => r.seq),
          [3, 4],
        );
      } finally {
        await h.close();
      }
    });

    it('answers 404 for the logs of an unknown run', async () => {
      const h = await harness();
      const response = await h.app.inject({ method: 'GET', url: '/api/v1/scaffolds/nope/logs', headers: AUTH });
      assert.equal(response.statusCode, 404);
      await h.close();
    });
  });

  describe('cancel and retry', () => {
    let h: Harness;
    before(async () => {
      h = await harness();
    });
    after(async () => {
      await h.close();
    });

    it('cancels an active run once, then answers 409', async () => {
      const accepted = (await post(h.app, validBody())).json();
      const response = await h.app.inject({ method: 'POST', url: `/api/v1/scaffolds/${accepted.id}/cancel`, headers: AUTH });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().status, 'cancelled');
      assert.match(response.json().message, /cancelled by static:0/);
      assert.deepEqual(h.executor.cancels, [accepted.id]);
      // The fake's cancel ends the log stream with a failed outcome: once the monitor has settled
      // the run (its only one in this harness, so idle means exactly that), it has had its say.
      await h.monitor.idle();
      assert.equal((await store.get(accepted.id))?.status, 'cancelled', 'the monitor must not overwrite cancelled with failed');
      const again = await h.app.inject({ method: 'POST', url: `/api/v1/scaffolds/${accepted.id}/cancel`, headers: AUTH });
      assert.equal(again.statusCode, 409);
    });

    it('rotates a scaffolded cluster as a new run of its latest spec, repository and branch, with the credentials named', async () => {
      const cluster = nextCluster();
      const rotateUrl = `/api/v1/clusters/${cluster.name}/rotate`;
      const unknown = await h.app.inject({ method: 'POST', url: rotateUrl, headers: AUTH, payload: { kubeconfig: { inline: KUBECONFIG } } });
      assert.equal(unknown.statusCode, 404, unknown.body);
      const accepted = (
        await post(h.app, { ...validBody(cluster), repository: { url: 'https://git.example.net/platform/gitops.git', branch: 'fleet' } })
      ).json();
      const busy = await h.app.inject({ method: 'POST', url: rotateUrl, headers: AUTH, payload: { kubeconfig: { inline: KUBECONFIG } } });
      assert.equal(busy.statusCode, 409, 'not while the cluster has an active run');
      await h.app.inject({ method: 'POST', url: `/api/v1/scaffolds/${accepted.id}/cancel`, headers: AUTH });

      const bad = await h.app.inject({
        method: 'POST',
        url: rotateUrl,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG }, credentials: ['Not A Name'] },
      });
      assert.equal(bad.statusCode, 400, bad.body);
      const badFresh = await h.app.inject({
        method: 'POST',
        url: rotateUrl,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG }, fresh_values: 'yes' },
      });
      assert.equal(badFresh.statusCode, 400, badFresh.body);
      assert.match(badFresh.body, /fresh_values/);
      // fresh_values goes to the runner for this attempt: it writes rotate --fresh-values' password-change Jobs.
      const rotated = await h.app.inject({
        method: 'POST',
        url: rotateUrl,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG }, credentials: ['tcr/tcr-database', 'rabbitmq-credentials'], fresh_values: true },
      });
      assert.equal(rotated.statusCode, 202, rotated.body);
      const run = (await h.app.inject({ method: 'GET', url: rotated.headers.location as string, headers: AUTH })).json();
      assert.deepEqual(run.cluster, cluster);
      assert.deepEqual(run.repository, { url: 'https://git.example.net/platform/gitops.git', branch: 'fleet' });
      // A scaffold run by its steps, recorded as a rotation so the run list and page can say so; the scaffold it rotated is none.
      assert.deepEqual([run.action, run.rotation], ['scaffold', 'fresh']);
      assert.equal((await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${accepted.id}`, headers: AUTH })).json().rotation, null);
      assert.deepEqual(h.executor.starts.at(-1)?.secrets.rotateCredentials, ['tcr/tcr-database', 'rabbitmq-credentials']);
      assert.equal(h.executor.starts.at(-1)?.secrets.freshValues, true);
    });

    it('does not rotate a cluster its latest run removed: that would render it back', async () => {
      const cluster = nextCluster();
      const removal = await store.create({
        id: `remove-${cluster.name}`,
        action: 'remove',
        cluster,
        repositoryUrl: 'https://git.example.net/platform/gitops.git',
        branch: 'main',
        reference: 'development',
        job: `scaffold-remove-${cluster.name}`,
        createdBy: 'static:0',
        sealing: 'none',
      });
      await store.update(removal.id, { status: 'succeeded', message: 'removed', finishedAt: new Date() });
      const refused = await h.app.inject({
        method: 'POST',
        url: `/api/v1/clusters/${cluster.name}/rotate`,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG } },
      });
      assert.equal(refused.statusCode, 409, refused.body);
      assert.match(refused.body, new RegExp(`was removed by run ${removal.id}`));
    });

    it("rotates a cluster on main although a removal of the same name runs on another branch, and lists each branch's runs apart", async () => {
      const cluster = nextCluster();
      const repository = 'https://git.example.net/platform/gitops.git';
      const scaffolded = await store.create({
        id: `scaffold-${cluster.name}`,
        cluster,
        repositoryUrl: repository,
        branch: 'main',
        reference: 'development',
        job: `scaffold-scaffold-${cluster.name}`,
        createdBy: 'static:0',
        sealing: 'kubeconfig',
      });
      await store.update(scaffolded.id, { status: 'succeeded', finishedAt: new Date() });
      const removal = await store.create({
        id: `remove-${cluster.name}`,
        action: 'remove',
        cluster,
        repositoryUrl: repository,
        branch: 'staging',
        reference: 'development',
        job: `scaffold-remove-${cluster.name}`,
        createdBy: 'static:0',
        sealing: 'none',
      });
      const rotateUrl = `/api/v1/clusters/${cluster.name}/rotate`;
      const rotated = await h.app.inject({
        method: 'POST',
        url: rotateUrl,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG }, repository: { url: repository, branch: 'main' } },
      });
      assert.equal(rotated.statusCode, 202, rotated.body);
      const run = (await h.app.inject({ method: 'GET', url: rotated.headers.location as string, headers: AUTH })).json();
      assert.deepEqual(run.repository, { url: repository, branch: 'main' });
      // The same branch still answers 409 while that rotation is active, and the removed branch refuses a rotation.
      const again = await h.app.inject({
        method: 'POST',
        url: rotateUrl,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG }, repository: { url: repository, branch: 'main' } },
      });
      assert.equal(again.statusCode, 409, again.body);
      const removed = await h.app.inject({
        method: 'POST',
        url: rotateUrl,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG }, repository: { url: repository, branch: 'staging' } },
      });
      assert.equal(removed.statusCode, 409, removed.body);
      assert.match(removed.body, new RegExp(`was removed by run ${removal.id}`));

      const listed = async (query: string) =>
        (await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds?cluster=${cluster.name}${query}`, headers: AUTH }))
          .json()
          .items.map((r: { id: string }) => r.id);
      assert.deepEqual(await listed('&branch=staging'), [removal.id]);
      assert.deepEqual(await listed(`&branch=main&repository_url=${encodeURIComponent(repository)}`), [run.id, scaffolded.id]);
      assert.deepEqual(await listed('&repository_url=https%3A%2F%2Fgit.example.net%2Fother.git'), []);
    });

    it('retries a cancelled run as a new run with attempt 2, requiring the secrets again', async () => {
      const cluster = nextCluster();
      const accepted = (await post(h.app, validBody(cluster))).json();
      const retryUrl = `/api/v1/scaffolds/${accepted.id}/retry`;
      const active = await h.app.inject({ method: 'POST', url: retryUrl, headers: AUTH, payload: { kubeconfig: { inline: KUBECONFIG } } });
      assert.equal(active.statusCode, 409, 'an active run cannot be retried');
      await h.app.inject({ method: 'POST', url: `/api/v1/scaffolds/${accepted.id}/cancel`, headers: AUTH });

      const noSecrets = await h.app.inject({ method: 'POST', url: retryUrl, headers: AUTH, payload: {} });
      assert.equal(noSecrets.statusCode, 400);
      assert.equal(noSecrets.json().error.fields[0].field, 'kubeconfig');
      const unknownField = await h.app.inject({ method: 'POST', url: retryUrl, headers: AUTH, payload: { kubeconfig: { inline: KUBECONFIG }, cluster } });
      assert.equal(unknownField.statusCode, 400);

      const retried = await h.app.inject({
        method: 'POST',
        url: retryUrl,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG }, repository: { credentials: { token: SECRET } } },
      });
      assert.equal(retried.statusCode, 202, retried.body);
      const body = retried.json();
      assert.notEqual(body.id, accepted.id);
      assert.equal(body.attempt, 2);
      assert.equal(retried.headers.location, `/api/v1/scaffolds/${body.id}`);
      const run = (await h.app.inject({ method: 'GET', url: retried.headers.location as string, headers: AUTH })).json();
      assert.deepEqual(run.cluster, cluster);
      assert.match(run.message, new RegExp(`retry of scaffold run ${accepted.id}`));
      assert.equal(h.executor.starts.at(-1)?.secrets.repositoryCredentials?.token, SECRET);
      assert.equal((await store.get(accepted.id))?.status, 'cancelled', 'the retried run stays as it was');

      const missing = await h.app.inject({
        method: 'POST',
        url: '/api/v1/scaffolds/nope/retry',
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG } },
      });
      assert.equal(missing.statusCode, 404);
    });

    it('refuses to retry a succeeded run', async () => {
      const accepted = (await post(h.app, validBody())).json();
      h.executor.finish(accepted.id, { status: 'succeeded', message: 'ok', gitops_path: 'clusters/x', commits: [] });
      await waitFor(async () => (await store.get(accepted.id))?.status === 'succeeded');
      const response = await h.app.inject({
        method: 'POST',
        url: `/api/v1/scaffolds/${accepted.id}/retry`,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG } },
      });
      assert.equal(response.statusCode, 409);
    });
  });

  describe('delivery', () => {
    let h: Harness;
    before(async () => {
      h = await harness();
    });
    after(async () => {
      await h.close();
    });
    const repository = { url: 'https://github.com/acme/platform.git', credentials: { token: SECRET } };

    it('stores pull_request delivery with the run, shows it, starts the runner with it and keeps it on retry', async () => {
      const delivery = { mode: 'pull_request', forge: 'github', auto_merge: true };
      const response = await post(h.app, { ...validBody(), repository, delivery });
      assert.equal(response.statusCode, 202, response.body);
      const run = (await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${response.json().id}`, headers: AUTH })).json();
      assert.deepEqual(run.delivery, { mode: 'pull_request', auto_merge: true, forge: 'github' });
      assert.deepEqual(h.executor.starts.at(-1)?.run.delivery, { mode: 'pull_request', autoMerge: true, forge: 'github' });

      await h.app.inject({ method: 'POST', url: `/api/v1/scaffolds/${run.id}/cancel`, headers: AUTH });
      const retried = await h.app.inject({
        method: 'POST',
        url: `/api/v1/scaffolds/${run.id}/retry`,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG } },
      });
      assert.equal(retried.statusCode, 202, retried.body);
      assert.deepEqual(h.executor.starts.at(-1)?.run.delivery, { mode: 'pull_request', autoMerge: true, forge: 'github' });
    });

    it("shows the run's pull requests with their state in the run, the list and the OpenAPI document", async () => {
      const cluster = { name: 'pr-view', domain: 'pr-view.example.net', region: 'eu-west-1' };
      const response = await post(h.app, { ...validBody(cluster), repository, delivery: { mode: 'pull_request', forge: 'github' } });
      assert.equal(response.statusCode, 202, response.body);
      const id = response.json().id as string;
      const get = async (): Promise<Record<string, unknown> & { review_requests: unknown[] }> =>
        (await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}`, headers: AUTH })).json();
      assert.deepEqual((await get()).review_requests, [], 'none before the runner opened one');
      const pr = {
        event: 'review_request',
        forge: 'github',
        pass: 'infrastructure',
        branch: 'scaffold/pr-view/infrastructure',
        number: 12,
        url: 'https://github.com/acme/platform/pull/12',
      };
      h.executor.emit(id, JSON.stringify({ ...pr, action: 'opened', state: 'open', time: '2026-03-04T05:06:07.000Z' }));
      await waitFor(async () => (await get()).review_requests.length === 1);
      h.executor.emit(id, JSON.stringify({ ...pr, action: 'merged', state: 'merged', time: '2026-03-04T06:00:00.000Z' }));
      await waitFor(async () => JSON.stringify((await get()).review_requests).includes('"merged"'));
      const expected = [
        { pass: 'infrastructure', forge: 'github', number: 12, url: pr.url, state: 'merged', branch: pr.branch, updated_at: '2026-03-04T06:00:00.000Z' },
      ];
      assert.deepEqual((await get()).review_requests, expected);
      const list = (await h.app.inject({ method: 'GET', url: '/api/v1/scaffolds?cluster=pr-view', headers: AUTH })).json();
      assert.deepEqual(list.items[0].review_requests, expected);
      const spec = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      assert.match(JSON.stringify(spec.paths), /review_requests/);
      h.executor.finish(id, { status: 'succeeded', message: 'done' });
      await waitFor(async () => (await get()).status === 'succeeded');
    });

    it('takes a GitHub App instead of a token, passes it to the runner only, and shows, logs and stores none of it', async () => {
      const privateKey = '-----BEGIN RSA PRIVATE KEY-----\nMIIE-SECRET-app-key-in-request\n-----END RSA PRIVATE KEY-----\n';
      const github_app = { app_id: '123456', installation_id: '7890123', private_key: privateKey };
      const response = await post(h.app, {
        ...validBody(),
        repository: { url: repository.url, credentials: { github_app } },
        delivery: { mode: 'pull_request', forge: 'github' },
      });
      assert.equal(response.statusCode, 202, response.body);
      const started = h.executor.starts.at(-1);
      assert.deepEqual(started?.secrets.githubApp, { appId: '123456', installationId: '7890123', privateKey });
      assert.equal(started?.secrets.repositoryCredentials, undefined, 'no token was given');
      const id = response.json().id as string;
      const view = await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}`, headers: AUTH });
      assert.ok(!view.body.includes('SECRET-app-key'), 'the run view holds no key');
      assert.ok(!JSON.stringify(await store.get(id)).includes('SECRET-app-key'), 'the stored run holds no key');

      // A retry sends it again, like every secret.
      await h.app.inject({ method: 'POST', url: `/api/v1/scaffolds/${id}/cancel`, headers: AUTH });
      const retried = await h.app.inject({
        method: 'POST',
        url: `/api/v1/scaffolds/${id}/retry`,
        headers: AUTH,
        payload: { kubeconfig: { inline: KUBECONFIG }, repository: { credentials: { github_app } } },
      });
      assert.equal(retried.statusCode, 202, retried.body);
      assert.equal(h.executor.starts.at(-1)?.secrets.githubApp?.privateKey, privateKey);
    });

    for (const [what, credentials, delivery] of [
      ['credentials with neither a token nor a GitHub App', {}, { mode: 'pull_request', forge: 'github' }],
      ['a GitHub App without its private key', { github_app: { app_id: '1', installation_id: '2' } }, { mode: 'pull_request', forge: 'github' }],
      [
        'a GitHub App for a GitLab repository',
        { github_app: { app_id: '1', installation_id: '2', private_key: 'k' } },
        { mode: 'pull_request', forge: 'gitlab' },
      ],
    ] as const) {
      it(`refuses ${what} with 400 naming repository.credentials, starting nothing`, async () => {
        const starts = h.executor.starts.length;
        const response = await post(h.app, { ...validBody(), repository: { url: repository.url, credentials }, delivery });
        assert.equal(response.statusCode, 400, response.body);
        assert.ok(
          response.json().error.fields.some((f: { field: string }) => f.field.startsWith('repository.credentials')),
          response.body,
        );
        assert.equal(h.executor.starts.length, starts);
      });
    }

    it('shows push for a run that did not ask for a delivery', async () => {
      const response = await post(h.app, validBody());
      const run = (await h.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${response.json().id}`, headers: AUTH })).json();
      assert.deepEqual(run.delivery, { mode: 'push', auto_merge: false });
      assert.deepEqual(run.review_requests, []);
    });

    for (const [what, delivery, url, field] of [
      ['pull_request without a forge', { mode: 'pull_request' }, repository.url, 'delivery.forge'],
      ['an unknown forge', { mode: 'pull_request', forge: 'bitbucket' }, repository.url, 'delivery.forge'],
      ['an unknown mode', { mode: 'email' }, repository.url, 'delivery.mode'],
      ['a plain-http api_url', { mode: 'pull_request', forge: 'gitea', api_url: 'http://gitea.example.net/api/v1' }, repository.url, 'delivery.api_url'],
      ['a repository URL naming no owner', { mode: 'pull_request', forge: 'gitlab' }, 'https://gitlab.example.net/platform.git', 'repository.url'],
    ] as const) {
      it(`refuses ${what} with 400 naming ${field}, starting nothing`, async () => {
        const starts = h.executor.starts.length;
        const response = await post(h.app, { ...validBody(), repository: { ...repository, url }, delivery });
        assert.equal(response.statusCode, 400, response.body);
        assert.ok(
          response.json().error.fields.some((f: { field: string }) => f.field === field),
          response.body,
        );
        assert.equal(h.executor.starts.length, starts);
      });
    }
  });

  describe('API description', () => {
    it('serves /openapi.json and the rendered /docs without a token (they hold no data), in our error format when missing', async () => {
      const h = await harness({});
      try {
        const spec = await h.app.inject({ method: 'GET', url: '/openapi.json' });
        assert.equal(spec.statusCode, 200);
        assert.ok(Object.keys(spec.json().paths).includes('/api/v1/scaffolds'));
        const docs = await h.app.inject({ method: 'GET', url: '/docs/' });
        assert.equal(docs.statusCode, 200);
        assert.match(String(docs.headers['content-type'] ?? ''), /text\/html/);
        // No route holds it, so nothing exempts it: a caller with a token learns it is missing.
        assert.equal((await h.app.inject({ method: 'GET', url: '/docs/no-such-asset.js' })).statusCode, 401);
        const missing = await h.app.inject({ method: 'GET', url: '/docs/no-such-asset.js', headers: AUTH });
        assert.equal(missing.statusCode, 404);
        assert.equal(missing.json().error.code, 'not_found');
        // Everything else still needs a token.
        assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/scaffolds' })).statusCode, 401);
      } finally {
        await h.close();
      }
    });
  });

  describe('the exemptions from a token', () => {
    it('let through only what routes to /docs, /openapi.json and the dashboard: an API URL that mentions them still needs a token', async () => {
      const h = await harness({});
      try {
        const hostile = [
          '/api/v1/scaffolds?repository_url=https://git.example.net/docs/x.git',
          '/api/v1/scaffolds?next=/docs/',
          '/api/v1/scaffolds?x=/ui/',
          '/api/v1/scaffolds/00000000-0000-4000-8000-000000000000/logs?from=/docs/',
          '/docs/../api/v1/scaffolds',
          '/docs/%2e%2e/api/v1/scaffolds',
          '/docs/..%2fapi%2fv1%2fscaffolds',
          '/docs//../api/v1/scaffolds',
          '/ui/../api/v1/scaffolds',
          '/ui/%2e%2e/api/v1/scaffolds',
          '/openapi.json/../api/v1/scaffolds',
          '//docs/../api/v1/scaffolds',
        ];
        for (const url of hostile) {
          const response = await h.app.inject({ method: 'GET', url });
          assert.ok(response.statusCode >= 400, `${url}: ${response.statusCode} ${response.body.slice(0, 200)}`);
          assert.doesNotMatch(response.body, /"items"/, url);
        }
        // The API routes among them answer 401, as without any mention.
        for (const url of hostile.slice(0, 4)) assert.equal((await h.app.inject({ method: 'GET', url })).statusCode, 401, url);
      } finally {
        await h.close();
      }
    });
  });

  describe('/docs headers', () => {
    it('serves the Swagger UI page, every asset it loads and its document with a CSP and X-Frame-Options: DENY', async () => {
      const h = await harness({});
      try {
        const page = await h.app.inject({ method: 'GET', url: '/docs/' });
        assert.equal(page.statusCode, 200);
        const loaded = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => new URL(m[1]!, 'http://service/docs/').pathname);
        assert.ok(loaded.some((p) => p.endsWith('swagger-ui-bundle.js')) && loaded.some((p) => p.endsWith('swagger-initializer.js')), loaded.join(' '));
        assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script the CSP would block');
        const initializer = await h.app.inject({ method: 'GET', url: loaded.find((p) => p.endsWith('swagger-initializer.js'))! });
        assert.match(initializer.body, /url: resolveUrl\('\.\/json'\)/, 'the UI loads its document from /docs/json, its own origin');
        const documentUrl = '/docs/json';
        for (const url of ['/docs/', ...loaded, documentUrl]) {
          const response = await h.app.inject({ method: 'GET', url });
          assert.equal(response.statusCode, 200, url);
          assert.equal(response.headers['x-frame-options'], 'DENY', url);
          assert.equal(response.headers['content-security-policy'], DOCS_CSP, url);
        }
        assert.match(DOCS_CSP, /frame-ancestors 'none'/);
        assert.match(DOCS_CSP, /script-src 'self'(;|$)/);
      } finally {
        await h.close();
      }
    });
  });

  describe('authentication', () => {
    const cases: [string, Authenticator, Record<string, string>, number, string][] = [
      ['no token', new StaticTokenAuthenticator([TOKEN]), {}, 401, 'unauthenticated'],
      ['a wrong token', new StaticTokenAuthenticator([TOKEN]), { authorization: `Bearer ${SECRET}` }, 401, 'unauthenticated'],
      [
        'a Basic header',
        new StaticTokenAuthenticator([TOKEN]),
        { authorization: `Basic ${Buffer.from(`u:${SECRET}`).toString('base64')}` },
        401,
        'unauthenticated',
      ],
      ['an empty Bearer', new StaticTokenAuthenticator([TOKEN]), { authorization: 'Bearer ' }, 401, 'unauthenticated'],
      [
        'an identity not on the allow-list',
        { authenticate: async () => Promise.reject(new ForbiddenError('system:serviceaccount:x:y may not call this API')) },
        { authorization: `Bearer ${SECRET}` },
        403,
        'forbidden',
      ],
      [
        'TokenReview down',
        { authenticate: async () => Promise.reject(new UnavailableError('TokenReview is unreachable')) },
        { authorization: `Bearer ${SECRET}` },
        503,
        'unavailable',
      ],
      ['an authenticator bug', { authenticate: async () => Promise.reject(new TypeError('boom')) }, { authorization: `Bearer ${SECRET}` }, 503, 'unavailable'],
    ];
    for (const [description, authenticator, headers, status, code] of cases) {
      it(`answers ${status} ${code} for ${description}, before reading the body`, async () => {
        const h = await harness({ authenticator });
        try {
          const rowsBefore = await rowCount();
          for (const request of [
            {
              method: 'POST' as const,
              url: '/api/v1/scaffolds',
              payload: JSON.stringify(validBody()),
              headers: { ...headers, 'content-type': 'application/json' },
            },
            { method: 'POST' as const, url: '/api/v1/scaffolds', payload: 'not json', headers: { ...headers, 'content-type': 'application/json' } },
            { method: 'GET' as const, url: '/api/v1/scaffolds', headers },
            { method: 'GET' as const, url: '/metrics', headers },
            { method: 'GET' as const, url: '/api/v1/scaffolds/abc/logs', headers },
          ]) {
            const response = await h.app.inject(request);
            assert.equal(response.statusCode, status, `${request.method} ${request.url}: ${response.body}`);
            assert.equal(response.json().error.code, code);
            assert.ok(!response.body.includes(SECRET), 'the token is never echoed');
            if (status === 401) assert.equal(response.headers['www-authenticate'], 'Bearer');
          }
          assert.equal(await rowCount(), rowsBefore);
          assert.equal(h.executor.starts.length, 0);
        } finally {
          await h.close();
        }
      });
    }
  });

  describe('authorization', () => {
    /** Refuses every action (or fails with `error`), recording what it was asked. */
    const refusing = (error: Error = new ForbiddenError('alice may not do this')): Authorizer & { asked: Action[] } => {
      const asked: Action[] = [];
      return { asked, authorize: async (_caller, action) => (asked.push(action), Promise.reject(error)) };
    };

    it('asks the authorizer for each request, and a refusal stops it before anything is read or started', async () => {
      const authorizer = refusing();
      const h = await harness({ authorizer });
      try {
        const rowsBefore = await rowCount();
        const created = await post(h.app, validBody());
        assert.equal(created.statusCode, 403, created.body);
        assert.equal(created.json().error.code, 'forbidden');
        const listed = await h.app.inject({ method: 'GET', url: '/api/v1/scaffolds', headers: AUTH });
        assert.equal(listed.statusCode, 403);
        assert.doesNotMatch(listed.body, /"items"/);
        assert.deepEqual(
          authorizer.asked.map((action) => ('resource' in action ? `${action.verb} ${action.resource}` : `${action.verb} ${action.path}`)),
          ['create scaffolds', 'list scaffolds'],
        );
        assert.equal(await rowCount(), rowsBefore);
        assert.equal(h.executor.starts.length, 0);
      } finally {
        await h.close();
      }
    });

    it('answers 503, never the route, when the authorizer fails with an error of its own', async () => {
      const h = await harness({ authorizer: refusing(new TypeError('boom')) });
      try {
        const rowsBefore = await rowCount();
        for (const response of [await post(h.app, validBody()), await h.app.inject({ method: 'GET', url: '/api/v1/scaffolds', headers: AUTH })]) {
          assert.equal(response.statusCode, 503, response.body);
          assert.equal(response.json().error.code, 'unavailable');
          assert.doesNotMatch(response.body, /boom/);
        }
        assert.equal(await rowCount(), rowsBefore);
        assert.equal(h.executor.starts.length, 0);
      } finally {
        await h.close();
      }
    });
  });

  describe('operations endpoints', () => {
    it('serves /healthz without a token, and 503 when the store does not answer', async () => {
      const ok = await harness();
      const response = await ok.app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), { status: 'ok' });
      await ok.close();

      const failing = await harness({ healthStore: { ping: async () => Promise.reject(new UnavailableError('database down')) } });
      const down = await failing.app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(down.statusCode, 503);
      assert.deepEqual(down.json(), { status: 'unavailable' });
      await failing.close();
    });

    it('serves Prometheus metrics to authenticated callers, counting requests and runs', async () => {
      const h = await harness();
      try {
        await post(h.app, validBody());
        await h.app.inject({ method: 'GET', url: '/healthz' });
        assert.equal((await h.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
        const response = await h.app.inject({ method: 'GET', url: '/metrics', headers: AUTH });
        assert.equal(response.statusCode, 200);
        assert.match(response.headers['content-type'] as string, /^text\/plain/);
        assert.match(response.body, /gitops_scaffolder_http_requests_total\{method="POST",route="\/api\/v1\/scaffolds",status="202"\} 1/);
        assert.match(response.body, /gitops_scaffolder_runs_created_total\{kind="create"\} 1/);
        assert.match(response.body, /gitops_scaffolder_http_request_duration_seconds_bucket/);
        assert.match(response.body, /\ngitops_scaffolder_run_progress_pending 0\n/, 'nothing is waiting for the store');
      } finally {
        await h.close();
      }
    });

    it('serves /metrics without a token when metrics are public', async () => {
      const h = await harness({ metricsPublic: true });
      const response = await h.app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(response.statusCode, 200);
      await h.close();
    });

    it('lists every path in /openapi.json and serves /docs', async () => {
      const h = await harness();
      try {
        const response = await h.app.inject({ method: 'GET', url: '/openapi.json', headers: AUTH });
        assert.equal(response.statusCode, 200);
        const document = response.json();
        assert.match(document.openapi, /^3\./);
        for (const path of [
          '/api/v1/scaffolds',
          '/api/v1/scaffolds/{id}',
          '/api/v1/scaffolds/{id}/logs',
          '/api/v1/scaffolds/{id}/cancel',
          '/api/v1/scaffolds/{id}/retry',
          '/healthz',
          '/metrics',
        ]) {
          assert.ok(document.paths[path], `missing ${path}`);
        }
        const post = document.paths['/api/v1/scaffolds'].post;
        assert.ok(post.requestBody.content['application/json'].schema.properties.cluster);
        assert.match(document.paths['/api/v1/scaffolds/{id}/retry'].post.description, /secrets/);
        const docs = await h.app.inject({ method: 'GET', url: '/docs/', headers: AUTH });
        assert.ok(docs.statusCode < 400, String(docs.statusCode));
      } finally {
        await h.close();
      }
    });
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await delay(10);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
