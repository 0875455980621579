import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { access, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnavailableError, ValidationError } from '../errors.js';
import { capturingLogger } from '../../test/support/runner.js';
import { LocalExecutor, type LocalExecutorDeps } from './local-executor.js';
import type { ExecutionState } from '../service/run-executor.js';
import { contractRunOf } from '../service/run-executor.contract.js';
import type { RunSecrets, RunRecord } from '../run/run-record.js';

// A stand-in for scaffold-runner. What it does depends on the cluster name's
// prefix: ok-* succeeds and writes a result file, crash-* exits 3 without one,
// hang-* starts a grandchild and waits (stubborn-* also ignores SIGTERM).
// It reports secret variables as sha256 digests, so the test can check they
// arrived without the values being printed.
const FAKE_RUNNER = `
import { mkdirSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const digest = (v) => (v === undefined ? null : createHash('sha256').update(v).digest('hex'));
const env = process.env;
const cluster = env.SCAFFOLD_CLUSTER ?? '';
// A work tree on the scratch volume, as the real runner's clone puts it there.
if (env.SCAFFOLD_SCRATCH_DIR) {
  mkdirSync(env.SCAFFOLD_SCRATCH_DIR + '/upgrade-work/clusters', { recursive: true });
  writeFileSync(env.SCAFFOLD_SCRATCH_DIR + '/upgrade-work/clusters/kustomization.yaml', 'resources: []\\n');
}
emit({ event: 'step_started', step: 1, step_name: 'clone' });
emit({
  event: 'env',
  plain: Object.fromEntries(['SCAFFOLD_ID', 'SCAFFOLD_REPO_URL', 'SCAFFOLD_BRANCH', 'SCAFFOLD_CLUSTER', 'SCAFFOLD_DOMAIN', 'SCAFFOLD_REGION', 'SCAFFOLD_REFERENCE', 'SCAFFOLD_RESULT_FILE', 'SCAFFOLD_SCRATCH_DIR'].map((k) => [k, env[k] ?? null])),
  secrets: Object.fromEntries(['SCAFFOLD_GIT_USERNAME', 'SCAFFOLD_GIT_TOKEN', 'SCAFFOLD_CERT_PEM', 'SCAFFOLD_KUBECONFIG_DATA', 'SCAFFOLD_REGISTRY_AUTH', 'SCAFFOLD_GITHUB_APP_ID', 'SCAFFOLD_GITHUB_APP_INSTALLATION_ID', 'SCAFFOLD_GITHUB_APP_PRIVATE_KEY', 'SCAFFOLD_QUEUE_KEY'].map((k) => [k, digest(env[k])])),
  argv: process.argv,
  hasPath: env.PATH !== undefined,
  inheritedServiceSecret: env.API_TOKENS ?? null,
  cwd: process.cwd(),
});
process.stderr.write('a line on stderr\\n');
if (cluster.startsWith('crash-')) process.exit(3);
if (cluster.startsWith('full-')) {
  // A disk that filled up under the result file: half a file, and the runner's last word on its event stream.
  writeFileSync(env.SCAFFOLD_RESULT_FILE, '{"status":');
  emit({ event: 'result_not_written', msg: 'could not write the result file: no space left on device' });
  process.exit(1);
}
if (cluster.startsWith('hang-') || cluster.startsWith('stubborn-')) {
  // The handler is in place before the line the test waits for: a SIGTERM must never beat it.
  if (cluster.startsWith('stubborn-')) process.on('SIGTERM', () => emit({ event: 'warning', msg: 'ignoring SIGTERM' }));
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  emit({ event: 'grandchild', pid: child.pid });
  setInterval(() => {}, 1000);
} else {
  writeFileSync(env.SCAFFOLD_RESULT_FILE, JSON.stringify({ status: 'succeeded', message: 'pushed', gitops_path: 'clusters/' + cluster, commits: [{ pass: 'all', sha: 'a'.repeat(40) }], step: 7 }));
  emit({ event: 'run_finished', msg: 'done' });
}
`;

const SECRETS: RunSecrets = {
  repositoryCredentials: { username: 'scaffolder', token: 'git-token-SECRET-1' },
  certificate: '-----BEGIN CERTIFICATE-----\nSECRET-2\n-----END CERTIFICATE-----\n',
  kubeconfig: { kind: 'inline', value: 'apiVersion: v1\nkind: Config\n# SECRET-3\n' },
  registryDockerconfigjson: '{"auths":{"r.example.net":{"auth":"SECRET-4"}}}',
  githubApp: { appId: '123456', installationId: '7890123', privateKey: '-----BEGIN RSA PRIVATE KEY-----\nMIIE-SECRET-5\n-----END RSA PRIVATE KEY-----\n' },
};
const SECRET_VALUES = ['git-token-SECRET-1', 'SECRET-2', 'SECRET-3', 'SECRET-4', 'SECRET-5'];
const sha = (value: string) => createHash('sha256').update(value).digest('hex');

let dir: string;
let runnerPath: string;
let counter = 0;
const savedApiTokens = process.env.API_TOKENS;

function runOf(prefix: string): RunRecord {
  counter++;
  const id = `${prefix}-${counter}`;
  return contractRunOf({
    id,
    cluster: { name: id, domain: `${id}.example.net`, region: 'eu-west-1' },
    repositoryUrl: 'file:///srv/gitops.git',
    createdBy: 'static:0',
  });
}

function executor(options: Partial<LocalExecutorDeps> = {}): LocalExecutor {
  return new LocalExecutor({ runnerCommand: { command: process.execPath, args: [runnerPath] }, dataDir: join(dir, 'data'), killGraceMs: 5000, ...options });
}

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

async function waitForState(ex: LocalExecutor, run: RunRecord, states: ExecutionState['state'][], timeoutMs = 10_000): Promise<ExecutionState> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await ex.inspect(run);
    if (states.includes(state.state)) return state;
    if (Date.now() > deadline) throw new Error(`run ${run.id} stayed ${state.state}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A killed orphan stays a zombie until its new parent reaps it: that counts as dead.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

async function waitUntilDead(pid: number, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} is still alive`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

function eventOf(lines: readonly string[], name: string): Record<string, unknown> {
  const line = lines.find((l) => l.startsWith('{') && JSON.parse(l).event === name);
  assert.ok(line, `no ${name} event in ${JSON.stringify(lines)}`);
  return JSON.parse(line) as Record<string, unknown>;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-executor-'));
  runnerPath = join(dir, 'fake-runner.mjs');
  await writeFile(runnerPath, FAKE_RUNNER);
  // A service credential in the service's environment must not reach the runner.
  process.env.API_TOKENS = 'service-api-token-must-not-leak';
  // Where the operator wants work trees and verify's copies made (memory, as a runner Job has it): each runner gets a directory there.
  process.env.SCAFFOLD_SCRATCH_DIR = join(dir, 'scratch');
});
after(async () => {
  if (savedApiTokens === undefined) delete process.env.API_TOKENS;
  else process.env.API_TOKENS = savedApiTokens;
  delete process.env.SCAFFOLD_SCRATCH_DIR;
  await rm(dir, { recursive: true, force: true });
});

describe('LocalExecutor', () => {
  it('runs the runner with the run in its environment and secrets (a GitHub App too) in the environment only', async () => {
    const logger = capturingLogger();
    const queueKey = 'queue-key-SECRET-'.padEnd(64, 'q');
    const ex = executor({ logger, queueKey });
    const run = runOf('ok');
    assert.deepEqual(await ex.start(run, SECRETS), { job: `scaffold-${run.id}` });
    assert.deepEqual(await ex.start(run, SECRETS), { job: `scaffold-${run.id}` }, 'start is idempotent');
    const lines = await collect(ex.logs(run, { follow: true }));

    const env = eventOf(lines, 'env');
    assert.deepEqual(env.plain, {
      SCAFFOLD_ID: run.id,
      SCAFFOLD_REPO_URL: 'file:///srv/gitops.git',
      SCAFFOLD_BRANCH: 'main',
      SCAFFOLD_CLUSTER: run.cluster.name,
      SCAFFOLD_DOMAIN: run.cluster.domain,
      SCAFFOLD_REGION: 'eu-west-1',
      SCAFFOLD_REFERENCE: 'development',
      SCAFFOLD_RESULT_FILE: ex.resultFileOf(run.id),
      SCAFFOLD_SCRATCH_DIR: join(dir, 'scratch', run.id),
    });
    assert.deepEqual(env.secrets, {
      SCAFFOLD_GIT_USERNAME: sha('scaffolder'),
      SCAFFOLD_GIT_TOKEN: sha('git-token-SECRET-1'),
      SCAFFOLD_CERT_PEM: sha(SECRETS.certificate as string),
      SCAFFOLD_KUBECONFIG_DATA: sha('apiVersion: v1\nkind: Config\n# SECRET-3\n'),
      SCAFFOLD_REGISTRY_AUTH: sha(SECRETS.registryDockerconfigjson as string),
      SCAFFOLD_GITHUB_APP_ID: sha('123456'),
      SCAFFOLD_GITHUB_APP_INSTALLATION_ID: sha('7890123'),
      SCAFFOLD_GITHUB_APP_PRIVATE_KEY: sha(SECRETS.githubApp?.privateKey as string),
      // The landing queue's key (git/queue-auth.ts): the service's, the same for every run.
      SCAFFOLD_QUEUE_KEY: sha(queueKey),
    });
    const argv = JSON.stringify(env.argv);
    for (const secret of [...SECRET_VALUES, queueKey]) assert.ok(!argv.includes(secret), 'no secret in argv');
    assert.equal(env.hasPath, true);
    assert.equal(env.inheritedServiceSecret, null, "the service's own environment is not inherited");
    assert.equal(env.cwd, join(dir, 'data', 'runs', run.id));

    assert.ok(lines.includes('a line on stderr'), 'stderr is part of the log');
    assert.equal(eventOf(lines, 'run_finished').msg, 'done');

    const state = await waitForState(ex, run, ['succeeded']);
    assert.deepEqual(state, {
      state: 'succeeded',
      result: { status: 'succeeded', message: 'pushed', gitops_path: `clusters/${run.cluster.name}`, commits: [{ pass: 'all', sha: 'a'.repeat(40) }], step: 7 },
    });

    for (const file of await filesUnder(dir)) {
      const content = await readFile(file, 'utf8');
      for (const secret of SECRET_VALUES) assert.ok(!content.includes(secret), `${file} holds a secret`);
    }
    assert.ok(logger.lines.length > 0);
    for (const secret of SECRET_VALUES) assert.ok(!logger.text().includes(secret), "no secret in the executor's log");
    // Replaying the log after the run ended yields the same lines.
    assert.deepEqual(await collect(ex.logs(run, { follow: false })), lines);
  });

  it('after a restart reads the result file and the whole output from the run directory, and reports runs it never saw as missing', async () => {
    const first = executor();
    const run = runOf('ok');
    await first.start(run, SECRETS);
    await waitForState(first, run, ['succeeded']);
    const printed = await collect(first.logs(run, { follow: false }));

    const restarted = executor();
    const state = await restarted.inspect(run);
    assert.equal(state.state, 'succeeded');
    assert.deepEqual(await collect(restarted.logs(run, { follow: true })), printed, 'the output outlives the process that started the runner');
    assert.equal(eventOf(printed, 'run_finished').msg, 'done');
    assert.deepEqual(await restarted.inspect(runOf('ok')), { state: 'missing' });
  });

  it('reports a runner that exits without a result as failed, with its exit code', async () => {
    const ex = executor();
    const run = runOf('crash');
    await ex.start(run, SECRETS);
    const state = await waitForState(ex, run, ['failed']);
    assert.equal(state.state, 'failed');
    assert.match(state.state === 'failed' ? state.result.message : '', /exited with code 3 without writing a result/);
  });

  it('reports a disk that filled up as "no space left on device", not as a malformed result', async () => {
    const ex = executor();
    const run = runOf('full');
    await ex.start(run, SECRETS);
    const state = await waitForState(ex, run, ['failed']);
    const message = state.state === 'failed' ? state.result.message : '';
    assert.match(message, /no space left on device/);
    assert.doesNotMatch(message, /not JSON/);
  });

  it('reports a runner that cannot be spawned as failed', async () => {
    const ex = new LocalExecutor({ runnerCommand: { command: join(dir, 'no-such-binary'), args: [] }, dataDir: join(dir, 'data') });
    const run = runOf('ok');
    await ex.start(run, SECRETS);
    const state = await waitForState(ex, run, ['failed']);
    assert.match(state.state === 'failed' ? state.result.message : '', /could not start the runner/);
  });

  it('cancel kills the whole process group and ends the followed log', async () => {
    const ex = executor();
    const run = runOf('hang');
    await ex.start(run, SECRETS);
    const follower = collect(ex.logs(run, { follow: true }));
    let grandchild: number | undefined;
    for await (const line of ex.logs(run, { follow: true })) {
      if (line.includes('"grandchild"')) {
        grandchild = JSON.parse(line).pid as number;
        break;
      }
    }
    assert.ok(grandchild !== undefined && alive(grandchild));
    assert.equal((await ex.inspect(run)).state, 'running');
    await ex.cancel(run);
    const state = await ex.inspect(run);
    assert.equal(state.state, 'failed');
    assert.match(state.state === 'failed' ? state.result.message : '', /cancelled/);
    await waitUntilDead(grandchild);
    const lines = await follower;
    assert.ok(lines.some((l) => l.includes('"grandchild"')));
    await ex.cancel(run); // idempotent
  });

  it('cancel escalates to SIGKILL when the runner ignores SIGTERM', async () => {
    const ex = executor({ killGraceMs: 200 });
    const run = runOf('stubborn');
    await ex.start(run, SECRETS);
    for await (const line of ex.logs(run, { follow: true })) if (line.includes('"grandchild"')) break;
    assert.deepEqual(await readdir(join(dir, 'scratch', run.id)), ['upgrade-work']);
    const started = Date.now();
    await ex.cancel(run);
    assert.ok(Date.now() - started >= 150, 'SIGTERM alone did not stop it');
    assert.equal((await ex.inspect(run)).state, 'failed');
    // Killed before it could clean up: the executor removes its directories, the one on the scratch volume too.
    await assert.rejects(access(join(dir, 'scratch', run.id)));
  });

  it('queues runs beyond the concurrency limit as pending, and close stops everything', async () => {
    const ex = executor({ concurrency: 1 });
    const first = runOf('hang');
    const second = runOf('hang');
    const third = runOf('hang');
    await ex.start(first, SECRETS);
    await ex.start(second, SECRETS);
    await ex.start(third, SECRETS);
    assert.equal((await ex.inspect(first)).state, 'running');
    assert.equal((await ex.inspect(second)).state, 'pending');
    assert.equal((await ex.inspect(third)).state, 'pending');

    await ex.cancel(third); // a queued run is dropped without ever starting
    assert.equal((await ex.inspect(third)).state, 'failed');
    await ex.cancel(first);
    await waitForState(ex, second, ['running']);

    await ex.close();
    assert.equal((await ex.inspect(second)).state, 'failed');
    await assert.rejects(ex.start(runOf('ok'), SECRETS), UnavailableError);
  });

  it('refuses a kubeconfig Secret reference, which only a Kubernetes executor can mount', async () => {
    const ex = executor();
    await assert.rejects(ex.start(runOf('ok'), { kubeconfig: { kind: 'secretRef', namespace: 'clusters', name: 'x', key: 'value' } }), ValidationError);
  });
});
