/**
 * End-to-end tests of the scaffold runner: the real `scaffold-runner` CLI and
 * the library `runScaffold`, pushing through a real `git daemon` and a real
 * `git http-backend` (basic auth) on 127.0.0.1, fetching the sealing
 * certificate from the Kubernetes API double through a real kubeconfig, and
 * verifying results with the real `kubectl kustomize`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { access, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { verifyWorkTree } from '../../src/workspace/verify-work-tree.js';
import { CliGitRemote } from '../../src/git/cli-git-remote.js';
import { generateQueueKey } from '../../src/git/queue-auth.js';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import type { Logger } from '../../src/logger.js';
import type { ClusterSpec } from '../../src/model/cluster-spec.js';
import { packageVersion, platformDir } from '../../src/package-paths.js';
import type { SealingCertificateSource } from '../../src/run/ports.js';
import { runScaffold, StepError, type ScaffoldRunOptions, type StepNumber } from '../../src/runner/run-scaffold.js';
import { createTestCertificate, type TestCertificate } from '../../src/sealing/test-certificate.js';
import type { RunResult } from '../../src/run/run-record.js';
import { writeFluxBootstrap } from '../support/flux-bootstrap.js';
import { type GitDaemon, type GitHttpServer, startGitDaemon, startGitHttpServer } from '../support/git-server.js';
import { type KubeApiDouble, startKubeApiDouble } from '../support/kube-api-double.js';
import {
  type CapturingLogger,
  type RemoteCommit,
  type RunnerEvent,
  type RunnerOutcome,
  capturingLogger,
  commitsOf,
  describeOutcome,
  eventually,
  filesAt,
  outcomeOf,
  runRunner,
  sealedSecretsIn,
  secretNeedles,
  startRunner,
  treeAt,
  unsealAll,
} from '../support/runner.js';
import { git } from '../support/git.js';
import { closedPort } from '../support/net.js';

const CLUSTER: ClusterSpec = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };
const GITOPS_PATH = `clusters/${CLUSTER.name}`;
const CONTROLLER = { namespace: 'kube-system', name: 'sealed-secrets-controller' } as const;
const CERT_PROXY_PATH = '/api/v1/namespaces/kube-system/services/http:sealed-secrets-controller:http/proxy/v1/cert.pem';

let scratch: string;
/** Bare repositories served by the daemon and the http server live here. */
let served: string;
/** The seeded platform every test's remote is copied from, so all share the seed commit. */
let seedRepo: string;
let seedSha: string;
let daemon: GitDaemon;
let certificate: TestCertificate;
let certFile: string;
let remoteCount = 0;
/** TMPDIR of the CLI runs: their working copies (and tsx's cache) stay inside the scratch directory. */
let runnerTmp: string;

function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { TMPDIR: runnerTmp, ...extra };
}

/** A new bare remote below `served`, a copy of the seeded platform. @returns its directory name and path */
async function newRemote(): Promise<{ name: string; dir: string }> {
  const name = `remote-${++remoteCount}.git`;
  const dir = join(served, name);
  await git(scratch, 'clone', '--quiet', '--bare', seedRepo, dir);
  for (const [key, value] of [
    ['uploadpack.allowFilter', 'true'],
    ['uploadpack.allowAnySHA1InWant', 'true'],
    ['http.receivepack', 'true'],
    ['receive.denyNonFastForwards', 'true'],
  ] as const) {
    await git(dir, 'config', key, value);
  }
  return { name, dir };
}

async function resultPath(): Promise<string> {
  return join(await mkdtemp(join(scratch, 'result-')), 'result.json');
}

function clusterArgs(repoUrl: string, cluster: ClusterSpec = CLUSTER): string[] {
  return ['--repo-url', repoUrl, '--cluster', cluster.name, '--domain', cluster.domain, '--region', cluster.region];
}

/** The scaffold commits on the remote, oldest first. */
async function scaffoldCommits(bare: string): Promise<RemoteCommit[]> {
  return (await commitsOf(bare, 'main', seedSha)).reverse();
}

function stepEvents(events: readonly RunnerEvent[]): string[] {
  return events
    .filter((e) => e.event === 'step_started' || e.event === 'step_finished' || e.event === 'step_skipped' || e.event === 'step_failed')
    .map((e) => `${String(e.event)}:${String(e.step)}`);
}

const EXPECTED_STEPS_WITH_CERT = [
  'step_started:1',
  'step_finished:1',
  'step_started:2',
  'step_finished:2',
  'step_started:3',
  'step_finished:3',
  'step_skipped:4',
  'step_skipped:5',
  'step_started:6',
  'step_finished:6',
  'step_started:7',
  'step_finished:7',
];

const EXPECTED_STEPS_WITH_KUBE = [1, 2, 3, 4, 5, 6, 7].flatMap((n) => [`step_started:${n}`, `step_finished:${n}`]);

function assertJsonLines(outcome: RunnerOutcome): void {
  assert.deepEqual(outcome.nonJsonLines, [], `stdout must be one JSON object a line\n${describeOutcome(outcome)}`);
  assert.ok(outcome.events.length > 0, 'the runner logged events');
  for (const event of outcome.events) assert.equal(typeof event.msg, 'string');
}

/**
 * The checks every successful two-pass run must pass: exactly two new commits,
 * pass 1 without any SealedSecret, pass 2 with them, the result naming both.
 * @returns the unsealed values of pass 2
 */
async function assertTwoPassRun(
  bare: string,
  result: RunResult | undefined,
  privateKey: TestCertificate['privateKey'],
  id?: string,
): Promise<Map<string, string>> {
  const commits = await scaffoldCommits(bare);
  assert.equal(commits.length, 2, `exactly two commits land: ${commits.map((c) => c.subject).join(' | ')}`);
  const [infra, all] = commits as [RemoteCommit, RemoteCommit];
  assert.equal(infra.trailers['Scaffold-Pass'], 'infrastructure');
  assert.equal(all.trailers['Scaffold-Pass'], 'all');
  for (const commit of commits) {
    assert.equal(commit.trailers['Scaffold-Cluster'], CLUSTER.name);
    assert.match(commit.trailers['Scaffold-Id'] ?? '', id ? new RegExp(`^${id}$`) : /^[0-9a-f-]{36}$/);
  }
  assert.equal(await git(bare, 'rev-parse', 'main'), all.sha);

  const infraTree = await treeAt(bare, infra.sha, GITOPS_PATH);
  assert.ok(infraTree.size > 0);
  assert.deepEqual(sealedSecretsIn(infraTree), [], 'pass 1 holds no SealedSecret');
  for (const [path, text] of infraTree) assert.doesNotMatch(text, /kind:\s*SealedSecret/, `${path} in pass 1`);
  assert.ok(infraTree.has(`${GITOPS_PATH}/flux/infrastructure.yaml`));
  assert.ok(!infraTree.has(`${GITOPS_PATH}/flux/apps.yaml`), 'pass 1 leaves out the layers that depend on infrastructure');

  const allTree = await treeAt(bare, all.sha, GITOPS_PATH);
  const sealed = sealedSecretsIn(allTree);
  // postgresql, rabbitmq and tcr-database at least; the registry pull secret only when one was supplied.
  assert.ok(sealed.length >= 3, `pass 2 holds the SealedSecrets: ${sealed.map((s) => s.path).join(', ')}`);
  const values = unsealAll(sealed, privateKey);
  assert.ok(values.size >= 5);
  for (const value of values.values()) assert.ok(value.length > 0);

  assert.ok(result, 'a result file was written');
  assert.equal(result.status, 'succeeded');
  assert.equal(result.gitops_path, GITOPS_PATH);
  assert.deepEqual(result.commits, [
    { pass: 'infrastructure', sha: infra.sha },
    { pass: 'all', sha: all.sha },
  ]);
  return values;
}

/** Everything in a git directory except its object store: where a leaked credential would sit. */
async function gitMetadataOf(dotGit: string): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(dotGit, { recursive: true, withFileTypes: true })) {
    const full = join(entry.parentPath, entry.name);
    if (!entry.isFile() || relative(dotGit, full).startsWith('objects')) continue;
    parts.push(await readFile(full, 'latin1').catch(() => ''));
  }
  return parts.join('\n');
}

function assertAbsent(haystack: string, needles: readonly string[], where: string): void {
  for (const needle of needles) assert.ok(!haystack.includes(needle), `a secret value (${needle.length} chars) appears in ${where}`);
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-runner-it-'));
  served = join(scratch, 'served');
  await mkdir(served);
  runnerTmp = join(scratch, 'tmp');
  await mkdir(runnerTmp);
  seedRepo = join(scratch, 'seed.git');
  await ensureSeededBareRepository(seedRepo, platformDir());
  seedSha = await git(seedRepo, 'rev-parse', 'main');
  daemon = await startGitDaemon({ baseDir: served });
  certificate = createTestCertificate();
  certFile = join(scratch, 'cert.pem');
  await writeFile(certFile, certificate.certificatePem);
});

after(async () => {
  await daemon?.stop();
  await rm(scratch, { recursive: true, force: true });
});

describe('scaffold-runner through git daemon with --cert', () => {
  it('pushes two passes, reports them, logs JSON steps, verifies clean, leaks no password, and converges on a rerun', async () => {
    const remote = await newRemote();
    const resultFile = await resultPath();
    const id = 'run-daemon-1';
    const outcome = await runRunner({
      args: [...clusterArgs(daemon.url(remote.name)), '--cert', certFile, '--id', id, '--result-file', resultFile],
      env: cliEnv(),
      resultFile,
    });
    assert.equal(outcome.code, 0, describeOutcome(outcome));
    assertJsonLines(outcome);
    assert.deepEqual(stepEvents(outcome.events), EXPECTED_STEPS_WITH_CERT);
    for (const event of outcome.events) if (event.run_id !== undefined) assert.equal(event.run_id, id);
    // One verifier a run: pass 2 takes pass 1's build of the unchanged infrastructure layer from its cache, and says so.
    const verified = outcome.events.filter((e) => e.event === 'verified');
    assert.equal(verified.length, 2, describeOutcome(outcome));
    assert.equal(verified[0]!.kustomize_cached, 0);
    assert.ok(Number(verified[1]!.kustomize_cached) >= 1, JSON.stringify(verified[1]));
    assert.ok(Number(verified[1]!.run_cache_hit_rate) > 0);

    const values = await assertTwoPassRun(remote.dir, outcome.result, certificate.privateKey, id);
    const commitEvents = outcome.events.filter((e) => e.event === 'commit');
    assert.deepEqual(
      commitEvents.map((e) => [e.pass, e.sha, e.pushed]),
      outcome.result!.commits!.map((c) => [c.pass, c.sha, true]),
    );

    // `generate-gitops-env verify` on a fresh clone of what was pushed.
    const clone = join(scratch, 'verify-clone');
    await git(scratch, 'clone', '--quiet', remote.dir, clone);
    const report = await verifyWorkTree(clone);
    assert.deepEqual(report.findings, [], report.summary);
    assert.ok(report.kustomizationsChecked > 0);

    // No generated password in plaintext (or base64) anywhere it could leak.
    const needles = secretNeedles(values);
    // Four generated values (tcr-database's is postgresql's password), each as itself and in base64.
    assert.ok(needles.length >= 8, String(needles.length));
    assertAbsent(outcome.stdout, needles, 'stdout');
    assertAbsent(outcome.stderr, needles, 'stderr');
    assertAbsent(await readFile(resultFile, 'utf8'), needles, 'the result file');
    const history = await git(remote.dir, 'log', '-p', '--all', '--format=%H%n%B');
    assert.ok(history.includes('SealedSecret'), 'the history holds the sealed files');
    assertAbsent(history, needles, 'the remote history');

    // A full rerun after success (with rotation explicitly off through the
    // environment) adds no commit, keeps the sealed bytes, and reports the same commits.
    const treeBefore = await git(remote.dir, 'rev-parse', `main:${GITOPS_PATH}`);
    const rerunFile = await resultPath();
    const rerun = await runRunner({
      args: [...clusterArgs(daemon.url(remote.name)), '--result-file', rerunFile],
      env: cliEnv({ SCAFFOLD_CERT: certFile, SCAFFOLD_ROTATE_CREDENTIALS: 'false' }),
      resultFile: rerunFile,
    });
    assert.equal(rerun.code, 0, describeOutcome(rerun));
    assert.equal((await scaffoldCommits(remote.dir)).length, 2, 'a rerun after success adds no commit');
    assert.equal(await git(remote.dir, 'rev-parse', `main:${GITOPS_PATH}`), treeBefore, 'the tree is byte-identical');
    assert.equal(rerun.result?.status, 'succeeded');
    assert.deepEqual(rerun.result?.commits, outcome.result!.commits, 'the rerun names the commits the passes landed as');
    assert.ok(rerun.events.some((e) => e.event === 'credential' && e.action === 'kept'));
    // Kept, or omitted (the registry pull secret: none was supplied, none is written).
    assert.ok(!rerun.events.some((e) => e.event === 'credential' && e.action !== 'kept' && e.action !== 'omitted'), 'no credential is rotated');
  });
});

describe('scaffold-runner into a cluster path that flux bootstrap wrote flux-system/ into', () => {
  it('keeps flux-system/ byte for byte and listed in the entry point through both passes, and the verify gate passes', async () => {
    const remote = await newRemote();
    const work = await mkdtemp(join(scratch, 'bootstrap-'));
    await git(work, 'clone', '--quiet', remote.dir, 'repo');
    const repo = join(work, 'repo');
    const bootstrap = await writeFluxBootstrap(repo, CLUSTER.name);
    await git(repo, 'add', '--all');
    await git(
      repo,
      '-c',
      'user.name=flux',
      '-c',
      'user.email=flux@example.invalid',
      '-c',
      'commit.gpgsign=false',
      'commit',
      '--quiet',
      '-m',
      'Add Flux sync manifests',
    );
    await git(repo, 'push', '--quiet', 'origin', 'main');
    const bootstrapSha = await git(remote.dir, 'rev-parse', 'main');

    const resultFile = await resultPath();
    const outcome = await runRunner({
      args: [...clusterArgs(daemon.url(remote.name)), '--cert', certFile, '--result-file', resultFile],
      env: cliEnv(),
      resultFile,
    });
    assert.equal(outcome.code, 0, describeOutcome(outcome));
    assert.equal(outcome.result?.status, 'succeeded');
    const commits = (await commitsOf(remote.dir, 'main', bootstrapSha)).reverse();
    assert.deepEqual(
      commits.map((c) => c.trailers['Scaffold-Pass']),
      ['infrastructure', 'all'],
    );

    for (const commit of commits) {
      const tree = await treeAt(remote.dir, commit.sha, GITOPS_PATH);
      for (const [path, text] of bootstrap) assert.equal(tree.get(path), text, `${path} at pass ${commit.trailers['Scaffold-Pass']}`);
      const entry = tree.get(`${GITOPS_PATH}/kustomization.yaml`) ?? '';
      assert.match(entry, /^resources:\n {2}- flux\n {2}- flux-system\n/m, `the entry point lists flux-system at pass ${commit.trailers['Scaffold-Pass']}`);
    }
    assert.ok(!outcome.events.some((e) => e.event === 'rendered' && e.removed !== 0), 'nothing removed');
  });
});

describe('scaffold-runner through git http-backend with basic auth', () => {
  let http: GitHttpServer;
  const token = `tok-${randomBytes(12).toString('hex')}`;
  const username = 'scaffolder';

  before(async () => {
    http = await startGitHttpServer({ baseDir: served, username, password: token });
  });
  after(async () => {
    await http?.stop();
  });

  it('authenticates with SCAFFOLD_GIT_TOKEN/USERNAME from the environment and never writes the token down', async () => {
    const remote = await newRemote();
    const resultFile = await resultPath();
    const ownTmp = await mkdtemp(join(scratch, 'runner-tmp-'));
    const runner = startRunner({
      args: [...clusterArgs(http.url(remote.name)), '--result-file', resultFile],
      env: { SCAFFOLD_GIT_TOKEN: token, SCAFFOLD_GIT_USERNAME: username, SCAFFOLD_CERT_PEM: certificate.certificatePem, TMPDIR: ownTmp },
    });
    // While the run is between its passes, its working copy is on disk: look at its .git.
    await runner.waitForEvent((e) => e.event === 'step_started' && e.step === 6);
    const workRoots = (await readdir(ownTmp)).filter((name) => name.startsWith('scaffold-'));
    assert.equal(workRoots.length, 1, 'the run works in one temp directory');
    const workspaceGit = await gitMetadataOf(join(ownTmp, workRoots[0]!, 'repo', '.git'));
    assert.match(workspaceGit, /\[remote "origin"\]/);
    const outcome = await outcomeOf(runner, resultFile);
    assert.ok(outcome.result, describeOutcome(outcome));
    assert.equal(outcome.code, 0, describeOutcome(outcome));
    assertJsonLines(outcome);
    assert.deepEqual(stepEvents(outcome.events), EXPECTED_STEPS_WITH_CERT);
    const values = await assertTwoPassRun(remote.dir, outcome.result, certificate.privateKey);

    // The server saw the credential; it was needed (unauthenticated requests get 401).
    const basic = `Basic ${Buffer.from(`${username}:${token}`).toString('base64')}`;
    assert.ok(http.requests.some((r) => r.authorization === basic && r.path.includes(remote.name)));
    assert.deepEqual(
      (await readdir(ownTmp)).filter((name) => name.startsWith('scaffold-')),
      [],
      'the working copy is removed afterwards',
    );

    const tokenNeedles = [token, Buffer.from(`${username}:${token}`).toString('base64'), encodeURIComponent(token)];
    const history = await git(remote.dir, 'log', '-p', '--all', '--format=%H%n%B');
    for (const [where, text] of [
      ['stdout', outcome.stdout],
      ['stderr', outcome.stderr],
      ['the result file', await readFile(resultFile, 'utf8')],
      ["the runner's clone (.git)", workspaceGit],
      ['the remote history', history],
      ["the remote's config", await readFile(join(remote.dir, 'config'), 'utf8')],
    ] as const) {
      assertAbsent(text, tokenNeedles, where);
    }
    assertAbsent(outcome.stdout + outcome.stderr + history, secretNeedles(values), 'logs or history');
  });
});

describe('scaffold-runner against the Kubernetes API double (steps 4-5)', () => {
  let kube: KubeApiDouble;
  let kubeconfig: string;
  const clusterCert = createTestCertificate();
  const proxied: string[] = [];

  before(async () => {
    kube = await startKubeApiDouble();
    kubeconfig = await kube.writeKubeconfig(await mkdtemp(join(scratch, 'kube-')));
    kube.setService(CONTROLLER.namespace, CONTROLLER.name, { ports: [{ name: 'http', port: 8080 }] });
    kube.setProxyHandler(CONTROLLER.namespace, CONTROLLER.name, 'http', (request) => {
      proxied.push(`${request.method} ${request.path}`);
      return request.path === '/v1/cert.pem'
        ? { status: 200, headers: { 'Content-Type': 'application/x-pem-file' }, body: clusterCert.certificatePem }
        : { status: 404, body: '404 page not found\n' };
    });
  });
  after(async () => {
    await kube?.stop();
  });

  it('pushes pass 1, waits for the controller Deployment, fetches cert.pem through the service proxy and seals with it', async () => {
    kube.setDeploymentAvailable(CONTROLLER.namespace, CONTROLLER.name, false);
    const remote = await newRemote();
    const resultFile = await resultPath();
    const runner = startRunner({
      args: [...clusterArgs(daemon.url(remote.name)), '--controller-timeout', '60s', '--result-file', resultFile],
      env: cliEnv({ SCAFFOLD_KUBECONFIG: kubeconfig }),
    });
    await runner.waitForEvent((e) => e.event === 'step_started' && e.step === 4);
    // It is watching the Deployment...
    await eventually('a watch on the controller Deployment', () =>
      kube.requests.some((r) => r.path === '/apis/apps/v1/namespaces/kube-system/deployments' && r.query['watch'] === 'true') ? true : undefined,
    );
    // ...with pass 1 already on the remote, and no certificate fetched yet.
    const during = await scaffoldCommits(remote.dir);
    assert.deepEqual(
      during.map((c) => c.trailers['Scaffold-Pass']),
      ['infrastructure'],
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(!runner.events.some((e) => e.event === 'step_finished' && e.step === 4), 'still waiting while the controller is not Available');
    assert.ok(!kube.requests.some((r) => r.path.includes('/services/')), 'neither the Service nor cert.pem was read before the controller was Available');
    assert.deepEqual(proxied, []);

    kube.setDeploymentAvailable(CONTROLLER.namespace, CONTROLLER.name, true);
    const outcome = await outcomeOf(runner, resultFile);
    assert.ok(outcome.result, describeOutcome(outcome));
    assert.equal(outcome.code, 0, describeOutcome(outcome));
    assertJsonLines(outcome);
    assert.deepEqual(stepEvents(outcome.events), EXPECTED_STEPS_WITH_KUBE);

    // kubeseal's way: read the Service, then its first port's NAME in the proxy path.
    assert.ok(kube.requests.some((r) => r.method === 'GET' && r.path === '/api/v1/namespaces/kube-system/services/sealed-secrets-controller'));
    assert.deepEqual(
      kube.requests.filter((r) => r.path.includes('/proxy/')).map((r) => `${r.method} ${r.path}`),
      [`GET ${CERT_PROXY_PATH}`],
    );
    assert.deepEqual(proxied, ['GET /v1/cert.pem']);

    // Sealed with the fetched certificate: the cluster's private key opens every value.
    await assertTwoPassRun(remote.dir, outcome.result, clusterCert.privateKey);
    const sealed = sealedSecretsIn(await treeAt(remote.dir, 'main', GITOPS_PATH));
    assert.throws(() => unsealAll(sealed, certificate.privateKey), /does not decrypt/, 'not sealed with some other key');
  });

  it('stops on SIGTERM while waiting (a cancelled Job): exit 143, a failed result, no working copy left', async () => {
    kube.setDeploymentAvailable(CONTROLLER.namespace, CONTROLLER.name, false);
    const remote = await newRemote();
    const resultFile = await resultPath();
    const id = 'cancelled-run-1';
    const runner = startRunner({
      args: [...clusterArgs(daemon.url(remote.name)), '--id', id, '--kubeconfig', kubeconfig, '--controller-timeout', '60s', '--result-file', resultFile],
      env: cliEnv(),
    });
    await runner.waitForEvent((e) => e.event === 'step_started' && e.step === 4);
    runner.kill('SIGTERM');
    const exit = await runner.exited;
    assert.equal(exit.code, 143, runner.stderr());
    const result = JSON.parse(await readFile(resultFile, 'utf8')) as RunResult;
    assert.equal(result.status, 'failed');
    assert.equal(result.step, 4);
    assert.match(result.message, /SIGTERM/);
    assert.deepEqual(
      result.commits?.map((c) => c.pass),
      ['infrastructure'],
    );
    assert.deepEqual(
      (await readdir(runnerTmp)).filter((entry) => entry.startsWith(`scaffold-${id}-`)),
      [],
      'the working copy is removed',
    );
  });

  it('gives up after --controller-timeout with exit 75, naming the Deployment and its state', async () => {
    kube.setDeploymentAvailable(CONTROLLER.namespace, CONTROLLER.name, false);
    const remote = await newRemote();
    const resultFile = await resultPath();
    const proxiedBefore = proxied.length;
    const started = Date.now();
    const outcome = await runRunner({
      args: [...clusterArgs(daemon.url(remote.name)), '--kubeconfig', kubeconfig, '--controller-timeout', '2s', '--result-file', resultFile],
      env: cliEnv(),
      resultFile,
    });
    assert.equal(outcome.code, 75, describeOutcome(outcome));
    assertJsonLines(outcome);
    assert.ok(Date.now() - started >= 2000);
    const result = outcome.result;
    assert.ok(result);
    assert.equal(result.status, 'failed');
    assert.equal(result.step, 4);
    assert.match(result.message, /step 4/);
    assert.match(result.message, /Deployment kube-system\/sealed-secrets-controller/);
    assert.match(result.message, /Available=False/);
    assert.match(result.message, /2s/);
    // Pass 1 stays pushed and is reported; nothing was fetched or sealed.
    const commits = await scaffoldCommits(remote.dir);
    assert.deepEqual(
      commits.map((c) => c.trailers['Scaffold-Pass']),
      ['infrastructure'],
    );
    assert.deepEqual(result.commits, [{ pass: 'infrastructure', sha: commits[0]!.sha }]);
    assert.equal(proxied.length, proxiedBefore);
    assert.deepEqual(stepEvents(outcome.events).slice(-2), ['step_started:4', 'step_failed:4']);
  });
});

describe('resuming an interrupted run', { concurrency: true }, () => {
  /** Thrown out of the logger to stop a library run right after a step finished, like a SIGKILL would. */
  class Crash extends Error {}

  /** A logger that "dies" once step `n` has finished (everything the step did has happened). */
  function crashingLogger(n: StepNumber): CapturingLogger {
    const inner = capturingLogger();
    let crashed = false;
    const wrap = (logger: Logger): Logger => ({
      debug: (f, m) => logger.debug(f, m),
      warn: (f, m) => logger.warn(f, m),
      error: (f, m) => logger.error(f, m),
      info: (fields, message) => {
        logger.info(fields, message);
        if (!crashed && fields['event'] === 'step_finished' && fields['step'] === n) {
          crashed = true;
          throw new Crash(`killed after step ${n}`);
        }
      },
      child: (bindings) => wrap(logger.child(bindings)),
    });
    return Object.assign(wrap(inner), { lines: inner.lines, text: inner.text });
  }

  /** The cluster's controller, already up: steps 4 and 5 run (and can be interrupted). */
  const certificates: SealingCertificateSource = {
    async waitForController() {},
    async fetchCertificate() {
      return certificate.certificatePem;
    },
    // These runs seal fresh credentials or keep them: nothing is re-encrypted.
    async reencrypt() {
      throw new Error('not asked in these tests');
    },
  };

  function options(url: string, id: string): ScaffoldRunOptions {
    return { id, repositoryUrl: url, cluster: CLUSTER, generatorVersion: packageVersion() };
  }

  // No pre-push verify gate here (the CLI tests run it): what matters is what the remote holds after a crash.
  async function run(url: string, id: string, logger: CapturingLogger = capturingLogger()): Promise<RunResult> {
    return runScaffold({ git: new CliGitRemote({ logger }), certificates, logger, workRoot: scratch }, options(url, id));
  }

  let reference: { files: string[]; plain: Map<string, string> };

  /** Files of the cluster at main, and the content of every file that is not sealed. */
  async function snapshot(bare: string): Promise<{ files: string[]; plain: Map<string, string> }> {
    const tree = await treeAt(bare, 'main', GITOPS_PATH);
    const sealed = new Set(sealedSecretsIn(tree).map((s) => s.path));
    return { files: [...tree.keys()].sort(), plain: new Map([...tree].filter(([path]) => !sealed.has(path))) };
  }

  before(async () => {
    const remote = await newRemote();
    const result = await run(daemon.url(remote.name), 'reference');
    assert.equal(result.status, 'succeeded');
    reference = await snapshot(remote.dir);
    assert.ok(reference.files.some((f) => f.includes('/sealed/')));
  });

  for (const n of [1, 2, 3, 4, 5, 6, 7] as const) {
    it(`converges after a crash right after step ${n}: same tree, each pass committed once, reruns add nothing`, async () => {
      const remote = await newRemote();
      const url = daemon.url(remote.name);
      await assert.rejects(run(url, `crash-${n}`, crashingLogger(n)), (error: unknown) => error instanceof StepError && error.cause instanceof Crash);
      const afterCrash = await scaffoldCommits(remote.dir);
      assert.equal(afterCrash.length, n < 3 ? 0 : n < 7 ? 1 : 2, `what the crashed run left on the remote after step ${n}`);

      const rerun = await run(url, `rerun-${n}`);
      assert.equal(rerun.status, 'succeeded');
      const commits = await scaffoldCommits(remote.dir);
      assert.deepEqual(
        commits.map((c) => c.trailers['Scaffold-Pass']),
        ['infrastructure', 'all'],
        'each pass committed exactly once',
      );
      assert.deepEqual(rerun.commits, [
        { pass: 'infrastructure', sha: commits[0]!.sha },
        { pass: 'all', sha: commits[1]!.sha },
      ]);
      const state = await snapshot(remote.dir);
      assert.deepEqual(state.files, reference.files, 'the same files as an uninterrupted run');
      assert.deepEqual(state.plain, reference.plain, 'every unsealed file byte-identical to an uninterrupted run');
      const sealed = sealedSecretsIn(await treeAt(remote.dir, 'main', GITOPS_PATH));
      assert.equal(unsealAll(sealed, certificate.privateKey).size >= 5, true);

      // Once pass 2 has landed, credentials are kept: a further full rerun is a no-op.
      const tree = await git(remote.dir, 'rev-parse', `main:${GITOPS_PATH}`);
      const again = await run(url, `again-${n}`);
      assert.deepEqual(again.commits, rerun.commits);
      assert.equal((await scaffoldCommits(remote.dir)).length, 2, 'a rerun after success adds no commit');
      assert.equal(await git(remote.dir, 'rev-parse', `main:${GITOPS_PATH}`), tree, 'SealedSecrets byte-identical');
    });
  }

  it("says in the run's log which Secret a FluxInstance pulls with, which must exist before it is applied", async () => {
    const remote = await newRemote();
    const url = daemon.url(remote.name);
    // The platform moved to the Flux Operator: every cluster gets a FluxInstance with the default platform's pull Secret.
    const work = await mkdtemp(join(scratch, 'flux-instance-'));
    await git(scratch, 'clone', '--quiet', remote.dir, work);
    const scaffold = join(work, 'scaffold.yaml');
    const descriptor = await readFile(scaffold, 'utf8');
    const operated = descriptor
      .replace('fluxInstance:\n  enabled: false\n', 'fluxInstance:\n  enabled: true\n')
      .replace('  sync:\n    pullSecret: flux-system\n', '  sync:\n    url: https://git.example.net/platform/gitops.git\n    pullSecret: flux-system\n');
    assert.match(operated, /fluxInstance:\n {2}enabled: true\n/, 'the probe turns the FluxInstance on');
    assert.match(operated, /\n {4}url: https:\/\/git\.example\.net\/platform\/gitops\.git\n/, 'the probe sets the sync URL');
    await writeFile(scaffold, operated);
    await git(work, '-c', 'user.name=test', '-c', 'user.email=test@example.invalid', 'commit', '--quiet', '-am', 'Flux Operator for every cluster');
    await git(work, 'push', '--quiet', 'origin', 'HEAD:main');
    const logger = capturingLogger();
    const result = await run(url, 'flux-instance', logger);
    assert.equal(result.status, 'succeeded');
    assert.ok((await treeAt(remote.dir, 'main', GITOPS_PATH)).has(`${GITOPS_PATH}/flux/flux-instance.yaml`));
    const notes = logger.lines.filter((l) => l.fields['event'] === 'note' && l.fields['flux_sync'] !== undefined);
    assert.ok(notes.length > 0, logger.text());
    for (const note of notes) {
      assert.equal(note.fields['pull_secret'], 'flux-system');
      assert.match(
        note.msg,
        /^Flux pulls https:\/\/git\.example\.net\/platform\/gitops\.git with the credentials of Secret flux-system\/flux-system: create it before applying the FluxInstance/,
      );
    }
  });

  it('rotates credentials only when asked: one new pass-2 commit, fresh values, pass 1 untouched', async () => {
    const remote = await newRemote();
    const url = daemon.url(remote.name);
    const first = await run(url, 'rotate-1');
    const before = unsealAll(sealedSecretsIn(await treeAt(remote.dir, 'main', GITOPS_PATH)), certificate.privateKey);
    const logger = capturingLogger();
    const rotated = await runScaffold(
      { git: new CliGitRemote({ logger }), certificates, logger, workRoot: scratch },
      { ...options(url, 'rotate-2'), rotateCredentials: true },
    );
    const commits = await scaffoldCommits(remote.dir);
    assert.deepEqual(
      commits.map((c) => c.trailers['Scaffold-Pass']),
      ['infrastructure', 'all', 'all'],
    );
    assert.equal(commits[2]!.trailers['Scaffold-Id'], 'rotate-2');
    assert.deepEqual(rotated.commits, [first.commits![0], { pass: 'all', sha: commits[2]!.sha }]);
    const after = unsealAll(sealedSecretsIn(await treeAt(remote.dir, 'main', GITOPS_PATH)), certificate.privateKey);
    assert.deepEqual([...after.keys()], [...before.keys()]);
    for (const [key, value] of after) {
      if (key.endsWith('/.dockerconfigjson') || key.endsWith('/DATABASE_PASSWORD')) continue;
      assert.notEqual(value, before.get(key), `${key} was rotated`);
    }
    assert.equal(after.get('tcr/tcr-database/DATABASE_PASSWORD'), after.get('database/postgresql-credentials/password'), 'sameAs still holds after rotation');
  });

  it('converges after the CLI process is SIGKILLed once pass 1 is pushed', async () => {
    const remote = await newRemote();
    const url = daemon.url(remote.name);
    const runner = startRunner({ args: [...clusterArgs(url), '--cert', certFile], env: cliEnv() });
    await runner.waitForEvent((e) => e.event === 'step_finished' && e.step === 3);
    runner.kill('SIGKILL');
    const exit = await runner.exited;
    assert.equal(exit.signal, 'SIGKILL');
    assert.ok(!runner.events.some((e) => e.event === 'step_finished' && e.step === 7));
    const afterKill = await scaffoldCommits(remote.dir);
    assert.deepEqual(
      afterKill.map((c) => c.trailers['Scaffold-Pass']),
      ['infrastructure'],
    );

    const resultFile = await resultPath();
    const rerun = await runRunner({ args: [...clusterArgs(url), '--cert', certFile, '--result-file', resultFile], env: cliEnv(), resultFile });
    assert.equal(rerun.code, 0, describeOutcome(rerun));
    const commits = await scaffoldCommits(remote.dir);
    assert.deepEqual(
      commits.map((c) => c.trailers['Scaffold-Pass']),
      ['infrastructure', 'all'],
    );
    assert.equal(commits[0]!.sha, afterKill[0]!.sha, 'pass 1 is not committed again');
    assert.deepEqual(rerun.result?.commits, [
      { pass: 'infrastructure', sha: commits[0]!.sha },
      { pass: 'all', sha: commits[1]!.sha },
    ]);
    assert.ok(rerun.events.some((e) => e.event === 'commit' && e.pass === 'infrastructure' && e.pushed === false));
    const state = await snapshot(remote.dir);
    assert.deepEqual(state.files, reference.files);
    assert.deepEqual(state.plain, reference.plain);
  });
});

describe('20 runners at once into one repository', () => {
  // A correctness test, not a timing one (npm run bench measures speed): on this 2-core machine the 20 runs,
  // each cloning, rendering, verifying and landing through the fenced queue, take about four minutes.
  it('all succeed; 40 commits, linear history, every cluster complete', { timeout: 600_000 }, async () => {
    const remote = await newRemote();
    const url = daemon.url(remote.name);
    const clusters: ClusterSpec[] = Array.from({ length: 20 }, (_, i) => {
      const name = `fleet-${String(i + 1).padStart(2, '0')}`;
      return { name, domain: `${name}.example.net`, region: i % 2 === 0 ? 'eu-west-1' : 'us-east-2' };
    });
    const logger = capturingLogger();
    // One queue key for all, as the service hands its runners: a run carries the others' announced commits
    // (with a key each, as separate CLI processes have, nobody may carry anybody's and every run pushes alone).
    const queueAuth = { key: Buffer.from(generateQueueKey(), 'utf8'), shared: true, attempt: 1 };
    const settled = await Promise.allSettled(
      clusters.map((cluster) =>
        runScaffold(
          { git: new CliGitRemote({ logger, queueAuth }), logger, workRoot: scratch },
          { id: `fleet-${cluster.name}`, repositoryUrl: url, cluster, certificatePem: certificate.certificatePem, generatorVersion: packageVersion() },
        ),
      ),
    );
    const failures = settled.flatMap((s, i) => (s.status === 'rejected' ? [`${clusters[i]!.name}: ${String((s.reason as Error).message)}`] : []));
    // A failed run's pushes, as its log told them, so a failure here says what the landing queue did.
    const pushLog = (cluster: string) =>
      logger.lines.filter((l) => l.fields['cluster'] === cluster && l.fields['push'] !== undefined).map((l) => JSON.stringify({ ...l.fields, msg: l.msg }));
    const failedPushes = settled.flatMap((s, i) => (s.status === 'rejected' ? pushLog(clusters[i]!.name) : []));
    assert.deepEqual(failures, [], `every run succeeds; the failed runs pushed:\n${failedPushes.join('\n')}`);

    const commits = await commitsOf(remote.dir, 'main', seedSha);
    assert.equal(commits.length, 40, 'history holds all 40 commits');
    assert.equal(await git(remote.dir, 'rev-list', '--merges', 'main'), '', 'no merge commits');
    for (const commit of commits) assert.equal(commit.parents.length, 1);

    const clone = join(scratch, 'fleet-clone');
    await git(scratch, 'clone', '--quiet', remote.dir, clone);
    const referenceFiles = (await filesAt(remote.dir, 'main', `clusters/${clusters[0]!.name}`)).map((f) => f.replace(clusters[0]!.name, 'NAME'));
    assert.ok(referenceFiles.some((f) => f.includes('/sealed/')));
    for (const [i, cluster] of clusters.entries()) {
      const result = (settled[i] as PromiseFulfilledResult<RunResult>).value;
      const own = commits.filter((c) => c.trailers['Scaffold-Cluster'] === cluster.name).reverse();
      assert.deepEqual(
        own.map((c) => c.trailers['Scaffold-Pass']),
        ['infrastructure', 'all'],
        cluster.name,
      );
      assert.deepEqual(
        result.commits,
        own.map((c) => ({ pass: c.trailers['Scaffold-Pass'], sha: c.sha })),
        `${cluster.name} reports the commits that landed`,
      );
      const files = (await filesAt(remote.dir, 'main', `clusters/${cluster.name}`)).map((f) => f.replace(cluster.name, 'NAME'));
      assert.deepEqual(files, referenceFiles, `${cluster.name} is complete`);
      const config = await readFile(join(clone, 'clusters', cluster.name, 'flux', 'cluster-config.yaml'), 'utf8');
      assert.match(config, new RegExp(`cluster_domain: ${cluster.domain.replace(/\./g, '\\.')}`));
      const sealed = sealedSecretsIn(await treeAt(remote.dir, 'main', `clusters/${cluster.name}`));
      assert.ok(unsealAll(sealed, certificate.privateKey).size >= 5, `${cluster.name} has its sealed credentials`);
    }
    // verify (kubectl kustomize) on the first and the last cluster to land; the others have the same files.
    const [first, last] = [commits.at(-1)!.trailers['Scaffold-Cluster']!, commits[0]!.trailers['Scaffold-Cluster']!];
    for (const report of await Promise.all([first, last].map((cluster) => verifyWorkTree(clone, { cluster })))) {
      assert.deepEqual(report.findings, [], report.summary);
    }
    const attempts = logger.lines.filter((l) => l.fields['event'] === 'commit').map((l) => Number(l.fields['attempts']));
    assert.equal(attempts.length, 40);
    // The runs raced: some found the branch moved after they cloned and landed through the queue or
    // a rebase. Whether two pushes also collided (attempts > 1) depends on timing; the landing queue
    // usually prevents it, so that is not asserted here (cli-git-remote.test.ts forces it).
    const raced = logger.lines.filter((l) => ['queued', 'lost', 'carried'].includes(String(l.fields['push'])));
    assert.ok(raced.length > 0, 'the runs really raced (some commits were rebased onto others that landed first)');
  });
});

describe('scaffold-runner refuses bad input', { concurrency: true }, () => {
  async function refused(args: string[], env: Record<string, string> = {}): Promise<RunnerOutcome> {
    const resultFile = await resultPath();
    return runRunner({ args: [...args, '--result-file', resultFile], env: cliEnv(env), resultFile });
  }

  it('exits 2 with a failed result for a bad cluster name, and pushes nothing', async () => {
    const remote = await newRemote();
    const outcome = await refused([...clusterArgs(daemon.url(remote.name), { ...CLUSTER, name: 'EU_prod' }), '--cert', certFile]);
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.equal(outcome.result?.status, 'failed');
    assert.match(outcome.result?.message ?? '', /--cluster: must be a DNS-1123 label/, 'names the flag the user typed');
    assert.equal(outcome.result?.gitops_path, undefined, 'no path is made from a bad name');
    assert.equal((await scaffoldCommits(remote.dir)).length, 0);
  });

  it('exits 2 when given both --cert and --kubeconfig, or neither', async () => {
    const remote = await newRemote();
    const kubeconfig = join(scratch, 'unused-kubeconfig');
    await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\n');
    const outcomes = await Promise.all(
      [['--cert', certFile, '--kubeconfig', kubeconfig], []].map((extra) => refused([...clusterArgs(daemon.url(remote.name)), ...extra])),
    );
    for (const outcome of outcomes) {
      assert.equal(outcome.code, 2, describeOutcome(outcome));
      assert.equal(outcome.result?.status, 'failed');
      assert.match(outcome.result?.message ?? '', /--kubeconfig\/--cert/);
    }
    assert.equal((await scaffoldCommits(remote.dir)).length, 0);
  });

  it('exits 2 for a --cert that is not a certificate, before pushing anything', async () => {
    const remote = await newRemote();
    const notACert = join(scratch, 'not-a-cert.pem');
    await writeFile(notACert, 'hello\n');
    const outcome = await refused([...clusterArgs(daemon.url(remote.name)), '--cert', notACert]);
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.equal(outcome.result?.status, 'failed');
    assert.match(outcome.result?.message ?? '', /certificate/);
    assert.equal((await scaffoldCommits(remote.dir)).length, 0, 'no half-scaffolded cluster is left behind');
  });

  it('refuses a kubeconfig that would run a command on its host: exit 2, the command never ran, nothing pushed', async () => {
    const remote = await newRemote();
    const marker = join(scratch, 'exec-ran');
    const kubeconfig = [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
      'contexts: [{name: c, context: {cluster: c, user: u}}]',
      'current-context: c',
      'users:',
      '- name: u',
      '  user:',
      '    exec:',
      '      apiVersion: client.authentication.k8s.io/v1',
      '      command: sh',
      `      args: ["-c", "touch ${marker}"]`,
      '',
    ].join('\n');
    for (const env of [{ SCAFFOLD_KUBECONFIG_DATA: kubeconfig }, {}] as Record<string, string>[]) {
      const file = join(scratch, 'exec.kubeconfig');
      await writeFile(file, kubeconfig);
      const args = [...clusterArgs(daemon.url(remote.name)), ...(Object.keys(env).length === 0 ? ['--kubeconfig', file] : [])];
      const outcome = await refused(args, env);
      assert.equal(outcome.code, 2, describeOutcome(outcome));
      assert.match(outcome.result?.message ?? '', /users\[0\]\.user\.exec runs a command/);
      assert.equal(outcome.result?.step, undefined, 'refused before step 1');
    }
    await assert.rejects(access(marker), 'the exec command never ran');
    assert.equal((await scaffoldCommits(remote.dir)).length, 0);
  });

  it('refuses an exec hidden behind a YAML alias or merge key (the old policy passed it and step 4 ran it after step 3 pushed): exit 2, nothing ran, nothing pushed', async () => {
    const remote = await newRemote();
    const marker = join(scratch, 'aliased-exec-ran');
    const exec = `{apiVersion: client.authentication.k8s.io/v1, command: sh, args: ["-c", "touch ${marker}"]}`;
    const head = [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
      'contexts: [{name: c, context: {cluster: c, user: u}}]',
      'current-context: c',
    ];
    const variants: [Record<string, string>, string, RegExp][] = [
      // The whole user entry parked under preferences, pulled into users by an alias; handed over as the Job's env.
      [
        { SCAFFOLD_KUBECONFIG_DATA: '' },
        [...head, `preferences: {x: &u {name: u, user: {exec: ${exec}}}}`, 'users: [*u]', ''].join('\n'),
        /YAML alias \(\*name\) at users\[0\]/,
      ],
      // The user's body parked under extensions, merged in with `<<`; handed over as a --kubeconfig file.
      [
        {},
        [...head, `extensions: [{name: x, extension: &b {exec: ${exec}}}]`, 'users: [{name: u, user: {<<: *b}}]', ''].join('\n'),
        /YAML merge key \(<<\) at users\[0\]\.user/,
      ],
    ];
    for (const [env, kubeconfig, pattern] of variants) {
      const file = join(scratch, 'aliased.kubeconfig');
      await writeFile(file, kubeconfig);
      const viaEnv = 'SCAFFOLD_KUBECONFIG_DATA' in env;
      // A short controller timeout: where the kubeconfig is accepted (the old code), step 4 gives up quickly after running the exec.
      const outcome = await refused(
        [...clusterArgs(daemon.url(remote.name)), '--controller-timeout', '3s', ...(viaEnv ? [] : ['--kubeconfig', file])],
        viaEnv ? { SCAFFOLD_KUBECONFIG_DATA: kubeconfig } : {},
      );
      assert.equal(outcome.code, 2, describeOutcome(outcome));
      assert.match(outcome.result?.message ?? '', pattern);
      assert.equal(outcome.result?.step, undefined, 'refused before step 1');
    }
    await assert.rejects(access(marker), 'the exec command never ran');
    assert.equal((await scaffoldCommits(remote.dir)).length, 0, 'nothing was pushed');
  });

  it('exits 2 for a cluster named like the reference environment and for an empty .dockerconfigjson, naming the flag', async () => {
    const remote = await newRemote();
    const reserved = await refused([...clusterArgs(daemon.url(remote.name), { ...CLUSTER, name: 'development' }), '--cert', certFile]);
    assert.equal(reserved.code, 2, describeOutcome(reserved));
    assert.match(reserved.result?.message ?? '', /--cluster: "development" is the reference environment/);
    const emptyAuth = await refused([...clusterArgs(daemon.url(remote.name)), '--cert', certFile], { SCAFFOLD_REGISTRY_AUTH: '{"auths":{}}' });
    assert.equal(emptyAuth.code, 2, describeOutcome(emptyAuth));
    assert.match(emptyAuth.result?.message ?? '', /--registry-auth/);
    assert.equal((await scaffoldCommits(remote.dir)).length, 0);
  });

  it('exits 2 with a failed result when a required flag is missing', async () => {
    const outcome = await refused(['--cluster', CLUSTER.name, '--cert', certFile]);
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.equal(outcome.result?.status, 'failed');
    assert.match(outcome.result?.message ?? '', /--repo-url/);
  });

  it('exits 2 for a scaffold without --domain and --region, naming both, and pushes nothing', async () => {
    const remote = await newRemote();
    const outcome = await refused(['--repo-url', daemon.url(remote.name), '--cluster', CLUSTER.name, '--cert', certFile]);
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.equal(outcome.result?.status, 'failed');
    assert.match(outcome.result?.message ?? '', /--domain: is required for a scaffold/);
    assert.match(outcome.result?.message ?? '', /--region: is required for a scaffold/);
    assert.equal(outcome.result?.step, undefined, 'refused before step 1');
    assert.equal((await scaffoldCommits(remote.dir)).length, 0);
  });

  it('exits 75 (transient) when the remote cannot be reached', async () => {
    const port = await closedPort();
    const outcome = await refused([...clusterArgs(`git://127.0.0.1:${port}/nowhere.git`), '--cert', certFile]);
    assert.equal(outcome.code, 75, describeOutcome(outcome));
    assertJsonLines(outcome);
    assert.equal(outcome.result?.status, 'failed');
    assert.equal(outcome.result?.step, 1);
    assert.deepEqual(outcome.result?.commits, []);
  });
});
