import { mkdtemp, rm } from 'node:fs/promises';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BatchV1Api } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startKubeApiDouble, type JsonObject, type KubeApiDouble } from '../../test/support/kube-api-double.js';
import { capturingLogger } from '../../test/support/runner.js';
import { PgRunStore } from '../db/pg-run-store.js';
import { NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import { outputSourceLine, parseOutputSource } from '../service/output-source.js';
import { RunMonitor } from '../service/run-monitor.js';
import { contractRunOf } from '../service/run-executor.contract.js';
import { jobNameOf, type RunSecrets, type RunRecord } from '../run/run-record.js';
import { loadKubeConfig } from './kube-config.js';
import { KubeJobExecutor } from './kube-job-executor.js';

const NS = 'kubeopera-provisioning';
const IMAGE = 'registry.example.net/gitops-scaffolder/runner:1.2.3';
const GIT_TOKEN = 'glpat-SECRET-git-token-value';
const KUBECONFIG_TEXT = 'apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: SECRET-cluster-token\n';

let runCounter = 0;
function runOf(overrides: Partial<RunRecord> = {}): RunRecord {
  runCounter += 1;
  return contractRunOf({
    id: `r${runCounter}-01hzy3k8c`,
    job: '',
    createdBy: 'system:serviceaccount:kubeopera-core:host-cluster-controller',
    sealing: 'kubeconfig',
    ...overrides,
  });
}

const SECRETS: RunSecrets = {
  repositoryCredentials: { username: 'scaffolder', token: GIT_TOKEN },
  kubeconfig: { kind: 'inline', value: KUBECONFIG_TEXT },
  registryDockerconfigjson: '{"auths":{"registry.example.net":{"auth":"SECRET-registry"}}}',
};

type Env = { name: string; value?: string }[];

function container(job: JsonObject): JsonObject {
  const spec = (job['spec'] as JsonObject)['template'] as JsonObject;
  return ((spec['spec'] as JsonObject)['containers'] as JsonObject[])[0] as JsonObject;
}

function podSpec(job: JsonObject): JsonObject {
  return ((job['spec'] as JsonObject)['template'] as JsonObject)['spec'] as JsonObject;
}

function decoded(secret: JsonObject | undefined): Record<string, string> {
  const data = (secret?.['data'] ?? {}) as Record<string, string>;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** The source line the executor yields before a pod's lines. */
function sourceLineOf(pod: string, retry = false): string {
  return outputSourceLine({ source: `pod/${pod}`, msg: `runner output from pod ${pod}${retry ? ', a retry of the runner' : ''}` });
}

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

describe('KubeJobExecutor', () => {
  let double: KubeApiDouble;
  let dir: string;
  let executor: KubeJobExecutor;
  let kubeconfigPath: string;

  before(async () => {
    double = await startKubeApiDouble();
    dir = await mkdtemp(join(tmpdir(), 'kube-job-'));
    kubeconfigPath = await double.writeKubeconfig(dir);
    const kubeConfig = loadKubeConfig({ kind: 'file', path: kubeconfigPath });
    executor = new KubeJobExecutor({ kubeConfig, namespace: NS, image: IMAGE, serviceAccountName: 'scaffold-runner', pollIntervalMs: 50 });
  });

  after(async () => {
    await double.stop();
    await rm(dir, { recursive: true, force: true });
  });

  describe('start', () => {
    it('refuses to be built without a runner image or a namespace, naming the setting', () => {
      const kubeConfig = loadKubeConfig({ kind: 'file', path: kubeconfigPath });
      assert.throws(
        () => new KubeJobExecutor({ kubeConfig, namespace: NS, image: '' }),
        (error: unknown) => error instanceof ValidationError && /SCAFFOLD_RUNNER_IMAGE/.test(error.message),
      );
      assert.throws(
        () => new KubeJobExecutor({ kubeConfig, namespace: '', image: IMAGE }),
        (error: unknown) => error instanceof ValidationError && /JOB_NAMESPACE/.test(error.message),
      );
    });

    it('creates the Secret, then the Job, then makes the Job own the Secret', async () => {
      const run = runOf();
      const name = `scaffold-${run.id}`;
      const from = double.requests.length;
      const { job } = await executor.start(run, SECRETS);
      assert.equal(job, name);

      const calls = double.requests.slice(from).map((r) => `${r.method} ${r.path}`);
      assert.deepEqual(calls, [
        `POST /api/v1/namespaces/${NS}/secrets`,
        `POST /apis/batch/v1/namespaces/${NS}/jobs`,
        `PATCH /api/v1/namespaces/${NS}/secrets/${name}`,
      ]);
      assert.match(double.requests.at(-1)?.contentType ?? '', /^application\/merge-patch\+json/);

      const created = double.getObject('jobs', NS, name) as JsonObject;
      const secret = double.getObject('secrets', NS, name);
      const owners = ((secret?.['metadata'] as JsonObject)['ownerReferences'] ?? []) as JsonObject[];
      assert.deepEqual(owners, [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: (created['metadata'] as JsonObject)['uid'] }]);
      assert.deepEqual(decoded(secret), {
        'git-token': GIT_TOKEN,
        'git-username': 'scaffolder',
        kubeconfig: KUBECONFIG_TEXT,
        'registry-auth.json': SECRETS.registryDockerconfigjson,
      });
    });

    it('builds a hardened Job spec that carries file paths, never secret values', async () => {
      const run = runOf();
      const name = `scaffold-${run.id}`;
      await executor.start(run, SECRETS);
      const job = double.getObject('jobs', NS, name) as JsonObject;
      const meta = job['metadata'] as JsonObject;
      assert.equal(meta['namespace'], NS);
      // Who asked for the run, for whoever finds the Job in the cluster.
      assert.deepEqual(meta['annotations'], { 'gitops-scaffolder.io/created-by': 'system:serviceaccount:kubeopera-core:host-cluster-controller' });
      assert.deepEqual(
        { ...(meta['labels'] as Record<string, string>) },
        { 'app.kubernetes.io/name': 'scaffold-runner', 'gitops-scaffolder.io/run-id': run.id, 'gitops-scaffolder.io/cluster': 'eu-prod-1' },
      );

      // What the API server would take: every field known to batch/v1 (client-node's models of the API).
      assert.deepEqual(await new CoreKindValidator().validate(job), { status: 'checked', issues: [] });
      const spec = job['spec'] as JsonObject;
      assert.equal(spec['backoffLimit'], 2);
      // 30 minutes of work and the 15 the runner waits for the new cluster's controller (no certificate was given).
      assert.equal(spec['activeDeadlineSeconds'], 2700);
      assert.equal(spec['ttlSecondsAfterFinished'], 86400);
      // A drained node's pod is retried for free; a refused input is not retried at all.
      assert.deepEqual(spec['podFailurePolicy'], {
        rules: [
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
          { action: 'FailJob', onExitCodes: { containerName: 'runner', operator: 'In', values: [2] } },
        ],
      });

      const pod = podSpec(job);
      assert.equal(pod['restartPolicy'], 'Never');
      assert.equal(pod['serviceAccountName'], 'scaffold-runner');
      assert.equal(pod['automountServiceAccountToken'], false);
      assert.deepEqual(pod['securityContext'], {
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        fsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      assert.deepEqual(pod['volumes'], [
        { name: 'secrets', secret: { secretName: name, defaultMode: 0o400 } },
        // The scratch space is bounded: a runaway clone is evicted, not the node's disk filled.
        { name: 'tmp', emptyDir: { sizeLimit: '2Gi' } },
        { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '256Mi' } },
      ]);

      const runner = container(job);
      assert.equal(runner['name'], 'runner');
      assert.equal(runner['image'], IMAGE);
      assert.equal(runner['args'], undefined);
      assert.equal(runner['command'], undefined);
      assert.equal(runner['terminationMessagePath'], '/dev/termination-log');
      assert.equal(runner['terminationMessagePolicy'], 'FallbackToLogsOnError');
      assert.deepEqual(runner['securityContext'], {
        runAsNonRoot: true,
        runAsUser: 65532,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      assert.deepEqual(runner['volumeMounts'], [
        { name: 'secrets', mountPath: '/var/run/scaffold/secrets', readOnly: true },
        { name: 'tmp', mountPath: '/tmp' },
        { name: 'scratch', mountPath: '/var/run/scaffold/scratch' },
      ]);
      assert.deepEqual(runner['resources'], { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } });

      const env = Object.fromEntries((runner['env'] as Env).map((e) => [e.name, e.value]));
      assert.deepEqual(env, {
        SCAFFOLD_ID: run.id,
        SCAFFOLD_REPO_URL: 'https://git.example.net/platform/gitops.git',
        SCAFFOLD_BRANCH: 'main',
        SCAFFOLD_CLUSTER: 'eu-prod-1',
        SCAFFOLD_DOMAIN: 'eu-prod-1.example.net',
        SCAFFOLD_REGION: 'eu-west-1',
        SCAFFOLD_REFERENCE: 'development',
        HOME: '/tmp',
        SCAFFOLD_SCRATCH_DIR: '/var/run/scaffold/scratch',
        SCAFFOLD_GIT_USERNAME_FILE: '/var/run/scaffold/secrets/git-username',
        SCAFFOLD_GIT_TOKEN_FILE: '/var/run/scaffold/secrets/git-token',
        SCAFFOLD_KUBECONFIG: '/var/run/scaffold/secrets/kubeconfig',
        SCAFFOLD_REGISTRY_AUTH_FILE: '/var/run/scaffold/secrets/registry-auth.json',
      });

      // Neither the stored Job nor the request that created it holds a secret, plain or base64.
      const jobPost = double.requests.find((r) => r.method === 'POST' && r.path.endsWith('/jobs') && JSON.stringify(r.body).includes(run.id));
      for (const text of [JSON.stringify(job), JSON.stringify(jobPost?.body)]) {
        for (const secret of [GIT_TOKEN, 'SECRET-cluster-token', 'SECRET-registry', Buffer.from(GIT_TOKEN).toString('base64')]) {
          assert.ok(!text.includes(secret), `Job spec must not contain ${secret}`);
        }
      }
    });

    it('gives the Job time for every wait the request asked for, and a run waiting on a review no deadline', async () => {
      const deadlineOf = async (run: RunRecord, secrets: RunSecrets): Promise<unknown> => {
        await executor.start(run, secrets);
        return (double.getObject('jobs', NS, `scaffold-${run.id}`)!['spec'] as JsonObject)['activeDeadlineSeconds'];
      };
      const cert = { ...SECRETS, kubeconfig: undefined, certificate: 'CERT' } satisfies RunSecrets;
      assert.equal(await deadlineOf(runOf({ sealing: 'certificate' }), cert), 1800, 'a certificate given: no controller wait');
      // The defaults of a request with wait_for_ready: controller (15 min) and Ready (15 min) past the 30 minutes of work.
      assert.equal(await deadlineOf(runOf(), { ...SECRETS, waitForReady: { timeoutSeconds: 900 } }), 1800 + 900 + 900);
      assert.equal(await deadlineOf(runOf(), { ...SECRETS, waitForReady: { timeoutSeconds: 7200 } }), 1800 + 900 + 7200);
      assert.equal(
        await deadlineOf(runOf({ action: 'remove' }), { ...SECRETS, deleteData: { timeoutSeconds: 3600 } }),
        1800 + 3600,
        'a removal lifting the protection waits for Flux to apply it',
      );
      assert.equal(await deadlineOf(runOf({ delivery: { mode: 'pull_request', forge: 'github' } }), SECRETS), undefined, 'a review can take days');
    });

    it("bounds the runner's /tmp, scratch volume and memory by the configured sizes (SCAFFOLD_RUNNER_TMP_SIZE_LIMIT, SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT, SCAFFOLD_RUNNER_MEMORY_LIMIT), so a runaway clone is evicted at that size", async () => {
      const sized = new KubeJobExecutor({
        kubeConfig: loadKubeConfig({ kind: 'file', path: kubeconfigPath }),
        namespace: NS,
        image: IMAGE,
        tmpSizeLimit: '512Mi',
        scratchSizeLimit: '768Mi',
        memoryLimit: '1536Mi',
      });
      const run = runOf();
      await sized.start(run, SECRETS);
      const job = double.getObject('jobs', NS, `scaffold-${run.id}`) as JsonObject;
      const volumes = podSpec(job)['volumes'] as JsonObject[];
      // Every scratch volume of the pod is bounded, not only the one mounted on /tmp.
      const scratch = volumes.filter((v) => v['emptyDir'] !== undefined);
      assert.deepEqual(scratch, [
        { name: 'tmp', emptyDir: { sizeLimit: '512Mi' } },
        // verify's copy of the tree for kustomize, in memory: bounded too, by its own limit.
        { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '768Mi' } },
      ]);
      const mounts = container(job)['volumeMounts'] as JsonObject[];
      assert.equal(mounts.find((m) => m['mountPath'] === '/tmp')?.['name'], 'tmp');
      const scratchDir = mounts.find((m) => m['name'] === 'scratch')?.['mountPath'];
      const env = container(job)['env'] as JsonObject[];
      assert.equal(env.find((e) => e['name'] === 'SCAFFOLD_SCRATCH_DIR')?.['value'], scratchDir, 'the runner is told where its scratch volume is');
      // The in-memory volume's files count against this limit: it is the one configured beside it.
      assert.deepEqual(container(job)['resources'], { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1', memory: '1536Mi' } });
    });

    it('copies the kubeconfig rebuilt from a Secret in another namespace and points SCAFFOLD_CERT at a given certificate', async () => {
      // preferences and extensions are accepted and dropped: the Job gets what the policy rebuilt, not what the Secret held.
      double.setSecret('clusters', 'eu-prod-1-kubeconfig', {
        value: `${KUBECONFIG_TEXT}preferences: {colors: true}\nextensions:\n- name: x\n  extension: {a: b}\n`,
      });
      const run = runOf({ sealing: 'kubeconfig' });
      const name = `scaffold-${run.id}`;
      await executor.start(run, {
        kubeconfig: { kind: 'secretRef', namespace: 'clusters', name: 'eu-prod-1-kubeconfig', key: 'value' },
        certificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
      });
      const copied = decoded(double.getObject('secrets', NS, name));
      assert.deepEqual(JSON.parse(copied['kubeconfig'] ?? ''), {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [],
        users: [{ name: 'admin', user: { token: 'SECRET-cluster-token' } }],
        contexts: [],
      });
      assert.match(copied['cert.pem'] ?? '', /BEGIN CERTIFICATE/);
      assert.ok(double.requests.some((r) => r.method === 'GET' && r.path === '/api/v1/namespaces/clusters/secrets/eu-prod-1-kubeconfig'));
      const env = Object.fromEntries((container(double.getObject('jobs', NS, name) as JsonObject)['env'] as Env).map((e) => [e.name, e.value]));
      assert.equal(env['SCAFFOLD_KUBECONFIG'], '/var/run/scaffold/secrets/kubeconfig');
      assert.equal(env['SCAFFOLD_CERT'], '/var/run/scaffold/secrets/cert.pem');
      assert.equal(env['SCAFFOLD_GIT_TOKEN_FILE'], undefined, 'no file env for a credential that was not given');
    });

    it('tells the runner how to deliver: the SCAFFOLD_DELIVERY variables for pull_request, none for push', async () => {
      const run = runOf({ delivery: { mode: 'pull_request', forge: 'gitlab', autoMerge: true, apiUrl: 'https://gitlab.example.net' } });
      await executor.start(run, SECRETS);
      const env = Object.fromEntries((container(double.getObject('jobs', NS, `scaffold-${run.id}`) as JsonObject)['env'] as Env).map((e) => [e.name, e.value]));
      assert.equal(env['SCAFFOLD_DELIVERY'], 'pull_request');
      assert.equal(env['SCAFFOLD_FORGE'], 'gitlab');
      assert.equal(env['SCAFFOLD_FORGE_API_URL'], 'https://gitlab.example.net');
      assert.equal(env['SCAFFOLD_AUTO_MERGE'], 'true');
    });

    it("passes the attempt's options to the runner: waiting for Flux, rotating named credentials, with their timeouts", async () => {
      const run = runOf();
      await executor.start(run, {
        ...SECRETS,
        waitForReady: { timeoutSeconds: 300 },
        rotateCredentials: ['database/db'],
        rotateValues: 'fresh',
        freshValues: true,
      });
      const env = Object.fromEntries((container(double.getObject('jobs', NS, `scaffold-${run.id}`) as JsonObject)['env'] as Env).map((e) => [e.name, e.value]));
      assert.equal(env['SCAFFOLD_WAIT_READY'], 'true');
      assert.equal(env['SCAFFOLD_READY_TIMEOUT'], '300s');
      assert.equal(env['SCAFFOLD_ROTATE_ONLY'], 'database/db');
      assert.equal(env['SCAFFOLD_ROTATE_VALUES'], 'fresh');
      assert.equal(env['SCAFFOLD_FRESH_VALUES'], 'true');
    });

    it("puts a GitHub App into the Job's own Secret as files the runner is pointed at, never into the Job spec or the log", async () => {
      const logger = capturingLogger();
      const logged = new KubeJobExecutor({ kubeConfig: loadKubeConfig({ kind: 'file', path: kubeconfigPath }), namespace: NS, image: IMAGE, logger });
      const privateKey = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA-SECRET-app-key\n-----END RSA PRIVATE KEY-----\n';
      const run = runOf({
        repositoryUrl: 'https://github.com/acme/platform-gitops.git',
        delivery: { mode: 'pull_request', forge: 'github', autoMerge: false },
      });
      const name = `scaffold-${run.id}`;
      await logged.start(run, { ...SECRETS, githubApp: { appId: '123456', installationId: '7890123', privateKey } });

      const secret = double.getObject('secrets', NS, name) as JsonObject;
      const files = decoded(secret);
      assert.equal(files['github-app-id'], '123456');
      assert.equal(files['github-app-installation-id'], '7890123');
      assert.equal(files['github-app-private-key.pem'], privateKey);
      assert.ok(
        ((secret['metadata'] as JsonObject)['ownerReferences'] as JsonObject[] | undefined)?.some((o) => o['kind'] === 'Job' && o['name'] === name),
        'the Job owns the Secret',
      );

      const job = double.getObject('jobs', NS, name) as JsonObject;
      const env = Object.fromEntries((container(job)['env'] as Env).map((e) => [e.name, e.value]));
      assert.equal(env['SCAFFOLD_GITHUB_APP_ID_FILE'], '/var/run/scaffold/secrets/github-app-id');
      assert.equal(env['SCAFFOLD_GITHUB_APP_INSTALLATION_ID_FILE'], '/var/run/scaffold/secrets/github-app-installation-id');
      assert.equal(env['SCAFFOLD_GITHUB_APP_PRIVATE_KEY_FILE'], '/var/run/scaffold/secrets/github-app-private-key.pem');
      assert.equal(env['SCAFFOLD_GITHUB_APP_PRIVATE_KEY'], undefined, 'the key is never a value in the spec');
      const jobPost = double.requests.find((r) => r.method === 'POST' && r.path.endsWith('/jobs') && JSON.stringify(r.body).includes(run.id));
      const base64Key = Buffer.from(privateKey).toString('base64');
      for (const text of [JSON.stringify(job), JSON.stringify(jobPost?.body), logger.text()]) {
        for (const leaked of ['SECRET-app-key', base64Key.slice(0, 40)])
          assert.ok(!text.includes(leaked), `the Job spec and the executor's log must not contain ${leaked}`);
      }
      assert.ok(logger.lines.length > 0, 'the executor did log');
    });

    it("puts the service's queue key and a notification address into the run's Secret as files the runner is pointed at, never into the Job spec", async () => {
      const queueKey = 'SECRET-queue-key-0123456789abcdef';
      const address = 'https://hooks.example.net/services/SECRET-webhook-path';
      const keyed = new KubeJobExecutor({ kubeConfig: loadKubeConfig({ kind: 'file', path: kubeconfigPath }), namespace: NS, image: IMAGE, queueKey });
      const run = runOf();
      const name = `scaffold-${run.id}`;
      await keyed.start(run, { ...SECRETS, notifications: { provider: 'slack', address } });

      const files = decoded(double.getObject('secrets', NS, name));
      assert.equal(files['queue-key'], queueKey, 'without its key the runner cannot land on the queue');
      assert.equal(files['notification-address'], address, 'without the address a failure notifies no one');

      const job = double.getObject('jobs', NS, name) as JsonObject;
      const env = Object.fromEntries((container(job)['env'] as Env).map((e) => [e.name, e.value]));
      assert.equal(env['SCAFFOLD_QUEUE_KEY_FILE'], '/var/run/scaffold/secrets/queue-key');
      assert.equal(env['SCAFFOLD_NOTIFICATION_ADDRESS_FILE'], '/var/run/scaffold/secrets/notification-address');
      assert.equal(env['SCAFFOLD_NOTIFICATION_PROVIDER'], 'slack', 'the type is no secret and travels in the spec');
      for (const leaked of ['SECRET-queue-key', 'SECRET-webhook-path', Buffer.from(queueKey).toString('base64').slice(0, 20)])
        assert.ok(!JSON.stringify(job).includes(leaked), `the Job spec must not contain ${leaked}`);
    });

    it('is idempotent: a second start returns the existing Job', async () => {
      const run = runOf();
      const first = await executor.start(run, SECRETS);
      const second = await executor.start(run, SECRETS);
      assert.deepEqual(second, first);
      const jobs = double.listObjects('jobs', NS).filter((j) => (j['metadata'] as JsonObject)['name'] === first.job);
      assert.equal(jobs.length, 1);
    });

    it('fails with NotFoundError for a missing kubeconfig Secret and creates nothing', async () => {
      const run = runOf();
      await assert.rejects(executor.start(run, { kubeconfig: { kind: 'secretRef', namespace: 'clusters', name: 'missing', key: 'value' } }), NotFoundError);
      assert.equal(double.getObject('jobs', NS, `scaffold-${run.id}`), undefined);
      assert.equal(double.getObject('secrets', NS, `scaffold-${run.id}`), undefined);
    });

    it("answers a missing Secret, a missing key and a key holding no kubeconfig alike, naming none of the Secret's keys or content", async () => {
      const keyName = fc.stringMatching(/^[a-z][a-z0-9]{3,15}$/).filter((k) => !['value', 'kind', 'config', 'apiversion'].includes(k));
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(keyName, { minLength: 1, maxLength: 4 }), keyName, async (keys, inner) => {
          // Another Secret's data: a YAML or JSON document whose keys a probe would like to learn, and which is no kubeconfig.
          const data = Object.fromEntries(keys.map((k) => [k, `${inner}: ${k}-value\nnested:\n  ${inner}x: 1\n`]));
          double.setSecret('clusters', 'other-secret', data);
          const answers: string[] = [];
          for (const ref of [
            { name: 'no-such-secret', key: keys[0]! },
            { name: 'other-secret', key: 'value' },
            { name: 'other-secret', key: keys[0]! },
          ]) {
            const run = runOf();
            await assert.rejects(executor.start(run, { kubeconfig: { kind: 'secretRef', namespace: 'clusters', ...ref } }), (error: Error) => {
              assert.ok(error instanceof NotFoundError, String(error));
              answers.push(error.message.replace(`"${ref.key}"`, '"KEY"').replace(ref.name, 'NAME'));
              for (const leaked of [...keys.filter((k) => k !== ref.key), inner, 'nested'])
                assert.ok(!error.message.includes(leaked), `${error.message} names ${leaked}`);
              return true;
            });
            assert.equal(double.getObject('jobs', NS, `scaffold-${run.id}`), undefined);
          }
          assert.equal(new Set(answers).size, 1, answers.join(' | '));
        }),
        { numRuns: 15 },
      );
    });

    it('refuses a kubeconfig Secret whose kubeconfig would run a command, before any Job exists', async () => {
      double.setSecret('clusters', 'exec-kubeconfig', { value: 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    exec:\n      command: sh\n' });
      const run = runOf({ sealing: 'kubeconfig' });
      await assert.rejects(
        executor.start(run, { kubeconfig: { kind: 'secretRef', namespace: 'clusters', name: 'exec-kubeconfig', key: 'value' } }),
        (error: unknown) => error instanceof ValidationError && /users\[0\]\.user\.exec runs a command/.test(error.message),
      );
      assert.equal(double.getObject('jobs', NS, `scaffold-${run.id}`), undefined);
      assert.equal(double.getObject('secrets', NS, `scaffold-${run.id}`), undefined);
    });

    it('refuses a kubeconfig Secret that hides an exec behind a YAML alias, before any Job exists', async () => {
      // The anchor is parked where the old policy never looked; js-yaml would resolve `*u` into users[0].
      double.setSecret('clusters', 'aliased-kubeconfig', {
        value:
          'apiVersion: v1\nkind: Config\npreferences:\n  x: &u {name: u, user: {exec: {command: sh, apiVersion: client.authentication.k8s.io/v1}}}\nusers: [*u]\n',
      });
      const run = runOf({ sealing: 'kubeconfig' });
      await assert.rejects(
        executor.start(run, { kubeconfig: { kind: 'secretRef', namespace: 'clusters', name: 'aliased-kubeconfig', key: 'value' } }),
        (error: unknown) =>
          error instanceof ValidationError &&
          error.issues.every((i) => i.field === 'kubeconfig.secretRef') &&
          /YAML alias \(\*name\) at users\[0\]/.test(error.message),
      );
      assert.equal(double.getObject('jobs', NS, `scaffold-${run.id}`), undefined);
      assert.equal(double.getObject('secrets', NS, `scaffold-${run.id}`), undefined);
    });

    it('refuses a repository URL with credentials in it', async () => {
      for (const repositoryUrl of ['https://user:hunter2@git.example.net/platform/gitops.git', 'deploy:hunter2@git.example.net:platform/gitops.git']) {
        const run = runOf({ repositoryUrl });
        await assert.rejects(executor.start(run, SECRETS), (error: unknown) => error instanceof ValidationError && !error.message.includes('hunter2'));
        assert.equal(double.getObject('secrets', NS, `scaffold-${run.id}`), undefined, repositoryUrl);
      }
    });
    it('refuses a token in the user part of an https repository URL, and keeps an ssh login name', async () => {
      const token = 'ghp_SECRETtokenInUserInfo0123456789';
      const run = runOf({ repositoryUrl: `https://${token}@github.com/acme/platform-gitops.git` });
      await assert.rejects(executor.start(run, SECRETS), (error: unknown) => error instanceof ValidationError && !error.message.includes(token));
      assert.equal(double.getObject('jobs', NS, `scaffold-${run.id}`), undefined);
      assert.equal(double.getObject('secrets', NS, `scaffold-${run.id}`), undefined);

      const ssh = runOf({ repositoryUrl: 'ssh://git@git.example.net/platform/gitops.git' });
      const { job } = await executor.start(ssh, SECRETS);
      const env = Object.fromEntries((container(double.getObject('jobs', NS, job) as JsonObject)['env'] as Env).map((e) => [e.name, e.value]));
      assert.equal(env['SCAFFOLD_REPO_URL'], 'ssh://git@git.example.net/platform/gitops.git');
    });
    it('leaves no Secret behind when the Job cannot be created: an API server rejection is a ValidationError, an outage an UnavailableError', async () => {
      for (const [code, kind] of [
        [422, ValidationError],
        [503, UnavailableError],
      ] as const) {
        const run = runOf();
        const name = `scaffold-${run.id}`;
        double.injectFailure({ method: 'POST', path: new RegExp(`/namespaces/${NS}/jobs$`), code });
        await assert.rejects(executor.start(run, SECRETS), (error: unknown) => error instanceof kind && !String(error).includes(GIT_TOKEN));
        assert.equal(double.getObject('jobs', NS, name), undefined);
        assert.equal(double.getObject('secrets', NS, name), undefined, `credentials are not left for a Job that will never run (${code})`);
      }
    });

    it("brings a Secret left by an interrupted start up to date: the Job mounts this attempt's credentials, not the last one's", async () => {
      const run = runOf();
      const name = `scaffold-${run.id}`;
      // A previous start created the Secret, then stopped before the Job.
      double.setSecret(NS, name, { 'git-token': 'glpat-STALE-token' });
      await executor.start(run, SECRETS);
      assert.equal(decoded(double.getObject('secrets', NS, name))['git-token'], GIT_TOKEN);
      assert.ok(double.getObject('jobs', NS, name));
    });
  });

  describe('inspect', () => {
    it('reports missing for a run without a Job', async () => {
      assert.deepEqual(await executor.inspect(runOf()), { state: 'missing' });
    });

    it('reports pending, then running from the Job status', async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      assert.deepEqual(await executor.inspect(run), { state: 'pending' });
      double.addPodForJob(NS, job, { phase: 'Pending' });
      double.setJobStatus(NS, job, { active: 1, ready: 0 });
      assert.deepEqual(await executor.inspect(run), { state: 'pending' });
      double.setJobStatus(NS, job, { active: 1, ready: 1 });
      assert.deepEqual(await executor.inspect(run), { state: 'running' });
    });

    it("maps Complete plus the runner's termination message to succeeded", async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      const result = {
        status: 'succeeded',
        message: 'cluster eu-prod-1 scaffolded',
        gitops_path: 'clusters/eu-prod-1',
        commits: [
          { pass: 'infrastructure', sha: 'a'.repeat(40) },
          { pass: 'all', sha: 'b'.repeat(40) },
        ],
        step: 7,
      };
      double.addPodForJob(NS, job, { phase: 'Succeeded', terminationMessage: JSON.stringify(result) });
      double.setJobStatus(NS, job, { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] });
      assert.deepEqual(await executor.inspect(run), { state: 'succeeded', result });
    });

    it('maps Failed plus a failed result to failed, from the newest pod', async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      double.addPodForJob(NS, job, { phase: 'Failed', exitCode: 1, terminationMessage: JSON.stringify({ status: 'failed', message: 'first try', step: 3 }) });
      await new Promise((r) => setTimeout(r, 1100)); // creationTimestamp has whole seconds
      const failed = { status: 'failed', message: 'push rejected: remote unreachable', step: 3 };
      double.addPodForJob(NS, job, { phase: 'Failed', exitCode: 1, terminationMessage: JSON.stringify(failed) });
      double.setJobStatus(NS, job, {
        failed: 2,
        conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }],
      });
      assert.deepEqual(await executor.inspect(run), { state: 'failed', result: failed });
    });

    it("reports a run its pod failure policy ended (refused input, exit 2) with the runner's own reason", async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      const refused = { status: 'failed', message: 'cluster.name: must be a DNS-1123 label', step: 1 };
      double.addPodForJob(NS, job, { phase: 'Failed', exitCode: 2, terminationMessage: JSON.stringify(refused) });
      double.setJobStatus(NS, job, {
        failed: 1,
        conditions: [
          {
            type: 'Failed',
            status: 'True',
            reason: 'PodFailurePolicy',
            message: `Container runner for pod ${NS}/${job}-x failed with exit code 2 matching FailJob rule at index 1`,
          },
        ],
      });
      assert.deepEqual(await executor.inspect(run), { state: 'failed', result: refused });
    });

    it('explains a Job that failed before the runner wrote a result (deadline, log-tail fallback)', async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      const pod = double.addPodForJob(NS, job, { logLines: ['{"level":"info","step":4,"msg":"waiting for the Sealed Secrets controller"}'] });
      double.setPodPhase(NS, pod, 'Failed', { exitCode: 137 });
      double.setJobStatus(NS, job, {
        failed: 1,
        conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }],
      });
      const state = await executor.inspect(run);
      assert.equal(state.state, 'failed');
      assert.ok(state.state === 'failed');
      assert.match(
        state.result.message,
        /^DeadlineExceeded: Job was active longer than specified deadline; last event: waiting for the Sealed Secrets controller$/,
      );
      assert.equal(state.result.step, 4);
    });

    it('does not call a Complete Job without a result a success', async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      double.addPodForJob(NS, job, { phase: 'Succeeded' });
      double.setJobStatus(NS, job, { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] });
      const state = await executor.inspect(run);
      assert.equal(state.state, 'failed');
    });
  });

  describe('logs', () => {
    it("returns the pod's log through the API", async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      const lines = ['{"step":1,"msg":"clone"}', '{"step":2,"msg":"render infrastructure"}'];
      const pod = double.addPodForJob(NS, job, { phase: 'Succeeded', logLines: lines, terminationMessage: '{"status":"succeeded","message":"ok"}' });
      assert.deepEqual(await collect(executor.logs(run, { follow: false })), [sourceLineOf(pod), ...lines]);
      const logRequest = double.requests.find((r) => r.path === `/api/v1/namespaces/${NS}/pods/${pod}/log`);
      assert.equal(logRequest?.query['container'], 'runner');
      assert.ok(double.requests.some((r) => r.path === `/api/v1/namespaces/${NS}/pods` && r.query['labelSelector'] === `job-name=${job}`));
    });

    it('follows a running pod and ends when its log ends and the Job is done, resuming a dropped stream without repeats', async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      const pod = double.addPodForJob(NS, job, { phase: 'Running', logLines: ['one'] });
      const received: string[] = [];
      const done = (async () => {
        for await (const line of executor.logs(run, { follow: true })) received.push(line);
      })();
      const until = async (n: number): Promise<void> => {
        for (let i = 0; i < 200 && received.length < n; i++) await new Promise((r) => setTimeout(r, 10));
        assert.ok(received.length >= n, `expected ${n} lines, got ${JSON.stringify(received)}`);
      };
      await until(2);
      double.appendPodLog(NS, pod, ['two', 'three']);
      await until(4);
      double.interruptPodLogStreams(NS, pod);
      await new Promise((r) => setTimeout(r, 100));
      double.appendPodLog(NS, pod, ['four']);
      await until(5);
      double.setJobStatus(NS, job, { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] });
      double.appendPodLog(NS, pod, ['five']);
      double.setPodPhase(NS, pod, 'Succeeded', { terminationMessage: '{"status":"succeeded","message":"ok"}' });
      await done;
      assert.deepEqual(received, [sourceLineOf(pod), 'one', 'two', 'three', 'four', 'five']);
      const follows = double.requests.filter((r) => r.path.endsWith(`/pods/${pod}/log`) && r.query['follow'] === 'true');
      assert.equal(follows.length, 2, 'one follow, one resume after the drop');
      assert.ok(follows[1]?.query['sinceTime'], "the resume starts at the last line's time");
    });

    it('stops following when the signal aborts', async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      const pod = double.addPodForJob(NS, job, { phase: 'Running', logLines: ['only'] });
      const controller = new AbortController();
      const received: string[] = [];
      for await (const line of executor.logs(run, { follow: true, signal: controller.signal })) {
        received.push(line);
        setTimeout(() => controller.abort(), 50);
      }
      assert.deepEqual(received, [sourceLineOf(pod), 'only']);
    });

    it('reads a retried Job pod by pod, each from its start after its source line, and names the retry', async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      const first = double.addPodForJob(NS, job, {
        phase: 'Failed',
        logLines: ['a1', 'a2'],
        terminationMessage: '{"status":"failed","message":"push failed"}',
      });
      await new Promise((r) => setTimeout(r, 1100)); // creationTimestamp has whole seconds: the retry is created later
      const second = double.addPodForJob(NS, job, { phase: 'Running', logLines: ['b1'] });
      const received: string[] = [];
      const done = (async () => {
        for await (const line of executor.logs(run, { follow: true })) received.push(line);
      })();
      for (let i = 0; i < 200 && received.length < 5; i++) await new Promise((r) => setTimeout(r, 10));
      double.appendPodLog(NS, second, ['b2']);
      double.setJobStatus(NS, job, { succeeded: 1, failed: 1, conditions: [{ type: 'Complete', status: 'True' }] });
      double.setPodPhase(NS, second, 'Succeeded', { terminationMessage: '{"status":"succeeded","message":"ok"}' });
      await done;
      assert.deepEqual(received, [sourceLineOf(first), 'a1', 'a2', sourceLineOf(second, true), 'b1', 'b2']);
      assert.deepEqual(
        received
          .map(parseOutputSource)
          .filter((s) => s !== undefined)
          .map((s) => s.source),
        [`pod/${first}`, `pod/${second}`],
      );

      // A later replay in which the first pod's log can no longer be read (its node is gone) still names both pods.
      double.injectFailure({ method: 'GET', path: new RegExp(`/pods/${first}/log$`), code: 404 });
      const replay = await collect(executor.logs(run, { follow: false }));
      assert.deepEqual(replay, [sourceLineOf(first), sourceLineOf(second, true), 'b1', 'b2']);
    });

    it('yields nothing for a run whose Job is gone', async () => {
      assert.deepEqual(await collect(executor.logs(runOf(), { follow: true })), []);
    });
  });

  describe('with the run monitor', () => {
    let store: PgRunStore;
    before(async () => {
      store = await PgRunStore.open();
    });
    after(async () => {
      await store.close();
    });

    const waitFor = async (what: string, condition: () => Promise<boolean>): Promise<void> => {
      for (let i = 0; i < 500; i++) {
        if (await condition()) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.fail(`timed out waiting for ${what}`);
    };
    const monitorOf = (): RunMonitor =>
      new RunMonitor({ store, executor, options: { logFlushMs: 10, missingGraceMs: 0, recheckDelayMs: 20, reconcileIntervalMs: 60_000 } });
    const stored = async (id: string): Promise<string[]> => (await store.readLogs(id)).map((l) => l.line);

    it("a service restart while the Job retries in a new pod loses none of the new pod's lines and stores none twice", async () => {
      const template = runOf();
      const run = await store.create({
        id: template.id,
        cluster: template.cluster,
        repositoryUrl: template.repositoryUrl,
        branch: template.branch,
        reference: template.reference,
        job: jobNameOf(template.id),
        createdBy: template.createdBy,
        sealing: template.sealing,
      });
      const { job } = await executor.start(run, SECRETS);
      const first = double.addPodForJob(NS, job, { phase: 'Running', logLines: ['{"event":"step_started","step":1,"step_name":"clone"}', 'a2'] });

      // Before the restart: the first pod's output so far.
      let stop = new AbortController();
      let monitor = monitorOf();
      await monitor.start(stop.signal);
      monitor.track(run);
      await waitFor("the first pod's lines", async () => (await stored(run.id)).length === 3);
      stop.abort();
      await monitor.idle();

      // While the service is down: the first pod fails and is lost with its node (its log cannot be read any
      // more), and the Job retries in a second pod.
      double.appendPodLog(NS, first, ['a3']);
      double.setPodPhase(NS, first, 'Failed', { terminationMessage: '{"status":"failed","message":"step 3: push failed"}' });
      double.injectFailure({ method: 'GET', path: new RegExp(`/pods/${first}/log$`), code: 404, times: 1000 });
      await new Promise((r) => setTimeout(r, 1100)); // creationTimestamp has whole seconds: the retry is created later
      const second = double.addPodForJob(NS, job, { phase: 'Running', logLines: ['{"event":"step_started","step":1,"step_name":"clone"}', 'b2'] });

      // After the restart.
      stop = new AbortController();
      monitor = monitorOf();
      await monitor.start(stop.signal);
      await waitFor("the second pod's lines", async () => (await stored(run.id)).includes('b2'));
      double.appendPodLog(NS, second, ['b3']);
      double.setJobStatus(NS, job, { succeeded: 1, failed: 1, conditions: [{ type: 'Complete', status: 'True' }] });
      double.setPodPhase(NS, second, 'Succeeded', { terminationMessage: '{"status":"succeeded","message":"pushed","step":7}' });
      await waitFor('the result', async () => (await store.get(run.id))?.status === 'succeeded');
      stop.abort();
      await monitor.idle();

      assert.deepEqual(await stored(run.id), [
        sourceLineOf(first),
        '{"event":"step_started","step":1,"step_name":"clone"}',
        'a2',
        sourceLineOf(second, true),
        '{"event":"step_started","step":1,"step_name":"clone"}',
        'b2',
        'b3',
      ]);
      assert.equal((await store.get(run.id))?.message, 'pushed');
    });
  });

  describe('cancel', () => {
    it('deletes the Job in the background (with its pods) and the Secret; a second cancel is fine', async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      double.addPodForJob(NS, job, { phase: 'Running' });
      await executor.cancel(run);
      const deletion = double.requests.find((r) => r.method === 'DELETE' && r.path === `/apis/batch/v1/namespaces/${NS}/jobs/${job}`);
      assert.equal(deletion?.query['propagationPolicy'], 'Background');
      assert.equal(double.getObject('jobs', NS, job), undefined);
      assert.equal(double.getObject('secrets', NS, job), undefined);
      assert.equal(
        double.listObjects('pods', NS).filter((p) => ((p['metadata'] as JsonObject)['labels'] as Record<string, string>)['job-name'] === job).length,
        0,
      );
      await executor.cancel(run);
      assert.deepEqual(await executor.inspect(run), { state: 'missing' });
    });

    it("deletes the run's Secret itself when the Job never came to own it", async () => {
      const run = runOf();
      const name = `scaffold-${run.id}`;
      // Making the Job the Secret's owner failed: start() carries on, and the garbage collector will not remove the Secret.
      double.injectFailure({ method: 'PATCH', path: new RegExp(`/secrets/${name}$`), code: 503 });
      await executor.start(run, SECRETS);
      assert.equal(((double.getObject('secrets', NS, name) as JsonObject)['metadata'] as JsonObject)['ownerReferences'], undefined);
      await executor.cancel(run);
      assert.equal(double.getObject('jobs', NS, name), undefined);
      assert.equal(double.getObject('secrets', NS, name), undefined, 'no credentials outlive a cancelled run');
    });

    it('the Job is the fence: a runner pod that outlived its Job (deleted orphaning it) still counts as running until it ends', async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      const pod = double.addPodForJob(NS, job, { phase: 'Running' });
      const batch = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir) }).makeApiClient(BatchV1Api);
      await batch.deleteNamespacedJob({ namespace: NS, name: job, propagationPolicy: 'Orphan' });
      assert.equal(double.getObject('jobs', NS, job), undefined);
      assert.deepEqual(await executor.inspect(run), { state: 'running' }, 'a runner that may still push is not missing');
      double.setPodPhase(NS, pod, 'Succeeded', { exitCode: 0 });
      assert.deepEqual(await executor.inspect(run), { state: 'missing' });
    });

    it('the Job is the fence for a runner pod not started yet too: an orphaned pending pod will still run and push', async () => {
      const run = runOf();
      const { job } = await executor.start(run, SECRETS);
      const pod = double.addPodForJob(NS, job, { phase: 'Pending' });
      const batch = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir) }).makeApiClient(BatchV1Api);
      await batch.deleteNamespacedJob({ namespace: NS, name: job, propagationPolicy: 'Orphan' });
      assert.deepEqual(await executor.inspect(run), { state: 'running' }, 'a pod that has yet to start is not missing');
      double.setPodPhase(NS, pod, 'Failed', { exitCode: 1 });
      assert.deepEqual(await executor.inspect(run), { state: 'missing' });
    });
  });
});
