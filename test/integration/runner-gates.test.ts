/**
 * Issue 9: what the real `scaffold-runner` refuses to push. A platform broken
 * on purpose (a `${var}` no ConfigMap defines) must stop the run at the
 * render/verify step with the finding in its result and events, and leave the
 * remote as it was; a sealing certificate out of its validity window, or with
 * a weak key, must stop it before anything is pushed (or, fetched from the
 * cluster, before anything is sealed). Real git daemon, real kubectl kustomize.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import type { ClusterSpec } from '../../src/model/cluster-spec.js';
import { platformDir } from '../../src/package-paths.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { type GitDaemon, startGitDaemon } from '../support/git-server.js';
import { type KubeApiDouble, startKubeApiDouble } from '../support/kube-api-double.js';
import { type RunnerEvent, type RunnerOutcome, commitsOf, describeOutcome, runRunner } from '../support/runner.js';
import { git } from '../support/git.js';

const CLUSTER: ClusterSpec = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };
const CONTROLLER = { namespace: 'kube-system', name: 'sealed-secrets-controller' } as const;
const DAY = 86_400_000;
const IDENTITY = ['-c', 'user.name=Platform Team', '-c', 'user.email=platform@example.invalid', '-c', 'commit.gpgsign=false'];

let scratch: string;
let served: string;
let seedRepo: string;
let runnerTmp: string;
let daemon: GitDaemon;
let remoteCount = 0;
const certificate = createTestCertificate();
let certFile: string;

/**
 * A new bare remote holding the reference platform, with `edit` applied to it
 * in one more commit (a platform team's mistake).
 */
async function newRemote(edit?: (workTree: string) => Promise<void>): Promise<{ name: string; dir: string }> {
  const n = ++remoteCount;
  const name = `gates-${n}.git`;
  const dir = join(served, name);
  await git(scratch, 'clone', '--quiet', '--bare', seedRepo, dir);
  for (const [key, value] of [
    ['uploadpack.allowFilter', 'true'],
    ['uploadpack.allowAnySHA1InWant', 'true'],
    ['receive.denyNonFastForwards', 'true'],
  ] as const) {
    await git(dir, 'config', key, value);
  }
  if (edit) {
    const work = join(scratch, `work-${n}`);
    await git(scratch, 'clone', '--quiet', dir, work);
    await edit(work);
    await git(work, ...IDENTITY, 'commit', '--quiet', '-am', 'A platform change with a mistake in it');
    await git(work, 'push', '--quiet', 'origin', 'HEAD:main');
    await rm(work, { recursive: true, force: true });
  }
  return { name, dir };
}

/** Every ref of a bare repository and what it points at. */
async function refsOf(bare: string): Promise<string> {
  return git(bare, 'for-each-ref', '--format=%(refname) %(objectname)');
}

/** Sets an annotation (`key: "value"`) on the object the JSON patch `file` (below the work tree) targets. */
async function annotate(workTree: string, file: string, annotation: string): Promise<void> {
  const path = join(workTree, file);
  const text = await readFile(path, 'utf8');
  // The reference's overlay patches are JSON patches: one more operation sets the annotation.
  assert.match(text, /^- op: /m, `${file} is a JSON patch`);
  const [key, value] = annotation.split(/: (.*)/s) as [string, string];
  await writeFile(path, `${text}- op: add\n  path: /metadata/annotations\n  value:\n    ${key}: ${value}\n`);
}

async function run(args: readonly string[], env: Record<string, string> = {}): Promise<RunnerOutcome> {
  const resultFile = join(await mkdtemp(join(scratch, 'result-')), 'result.json');
  return runRunner({ args: [...args, '--result-file', resultFile], env: { TMPDIR: runnerTmp, ...env }, resultFile });
}

function clusterArgs(remoteName: string): string[] {
  return ['--repo-url', daemon.url(remoteName), '--cluster', CLUSTER.name, '--domain', CLUSTER.domain, '--region', CLUSTER.region];
}

function steps(events: readonly RunnerEvent[]): string[] {
  return events.filter((e) => typeof e.event === 'string' && e.event.startsWith('step_')).map((e) => `${String(e.event)}:${String(e.step)}`);
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-runner-gates-'));
  served = join(scratch, 'served');
  runnerTmp = join(scratch, 'tmp');
  await mkdir(served);
  await mkdir(runnerTmp);
  seedRepo = join(scratch, 'seed.git');
  await ensureSeededBareRepository(seedRepo, platformDir());
  daemon = await startGitDaemon({ baseDir: served });
  certFile = join(scratch, 'cert.pem');
  await writeFile(certFile, certificate.certificatePem);
});

after(async () => {
  await daemon?.stop();
  await rm(scratch, { recursive: true, force: true });
});

describe('scaffold-runner refuses to push a tree that verify finds fault with', { concurrency: true }, () => {
  it('stops at step 2 on an undefined ${var} in the infrastructure layer: exit 1, the finding reported, the remote untouched', async () => {
    const remote = await newRemote((work) =>
      annotate(work, 'clusters/development/infrastructure/ingress-nginx-replicas.yaml', 'platform.example.net/zone: "${ingress_zone}"'),
    );
    const refsBefore = await refsOf(remote.dir);
    const mainBefore = await git(remote.dir, 'rev-parse', 'main');

    const outcome = await run([...clusterArgs(remote.name), '--cert', certFile, '--id', 'gate-step-2']);

    assert.equal(outcome.code, 1, describeOutcome(outcome));
    assert.deepEqual(outcome.nonJsonLines, []);
    assert.deepEqual(steps(outcome.events), ['step_started:1', 'step_finished:1', 'step_started:2', 'step_failed:2'], describeOutcome(outcome));
    // The finding names the variable, the Kustomization that substitutes it and where it is used.
    const finding = /Kustomization flux-system\/infrastructure: \$\{ingress_zone\} \(used by HelmRelease ingress-nginx\/ingress-nginx\) is not defined/;
    const failed = outcome.events.find((e) => e.event === 'step_failed');
    assert.equal(failed?.error_code, 'verification_failed');
    assert.match(String(failed?.msg), finding);
    assert.equal(outcome.result?.status, 'failed');
    assert.equal(outcome.result?.step, 2);
    assert.match(outcome.result?.message ?? '', /verification finding/);
    assert.match(outcome.result?.message ?? '', finding);
    assert.deepEqual(outcome.result?.commits, []);
    assert.ok(!outcome.events.some((e) => e.event === 'commit'), 'nothing was committed');

    assert.equal(await git(remote.dir, 'rev-parse', 'main'), mainBefore, 'main is where it was');
    assert.equal(await refsOf(remote.dir), refsBefore, 'no ref moved or appeared');
    assert.deepEqual(await commitsOf(remote.dir, 'main', mainBefore), [], 'no new commit');
  });

  it('stops at step 6 on an undefined ${var} in a later layer: pass 1 stays, nothing sealed is pushed', async () => {
    const remote = await newRemote((work) => annotate(work, 'clusters/development/apps/tcr-api-replicas.yaml', 'platform.example.net/tier: "${tcr_api_tier}"'));
    const mainBefore = await git(remote.dir, 'rev-parse', 'main');

    const outcome = await run([...clusterArgs(remote.name), '--cert', certFile]);

    assert.equal(outcome.code, 1, describeOutcome(outcome));
    assert.deepEqual(steps(outcome.events).slice(-2), ['step_started:6', 'step_failed:6'], describeOutcome(outcome));
    assert.equal(outcome.result?.step, 6);
    assert.match(outcome.result?.message ?? '', /Kustomization flux-system\/apps: \$\{tcr_api_tier\} .* is not defined/);
    const landed = await commitsOf(remote.dir, 'main', mainBefore);
    assert.deepEqual(
      landed.map((c) => c.trailers['Scaffold-Pass']),
      ['infrastructure'],
      'only the first pass landed',
    );
    assert.deepEqual(outcome.result?.commits, [{ pass: 'infrastructure', sha: landed[0]!.sha }]);
    assert.equal(await git(remote.dir, 'ls-tree', '-r', '--name-only', 'main', '--', `clusters/${CLUSTER.name}/apps`), '', 'the broken layer was not pushed');
  });
});

describe('scaffold-runner refuses a sealing certificate outside its validity window or with a weak key', { concurrency: true }, () => {
  const now = Date.now();
  const bad = {
    expired: createTestCertificate({ notBefore: new Date(now - 3650 * DAY), notAfter: new Date(now - DAY) }).certificatePem,
    future: createTestCertificate({ notBefore: new Date(now + DAY) }).certificatePem,
    weak: createTestCertificate({ bits: 1024 }).certificatePem,
  };
  const messages = {
    expired: /(--cert|certificate): certificate #1 expired on \S+Z \(valid from \S+Z to \S+Z; now is \S+Z\)/,
    future: /(--cert|certificate): certificate #1 is not valid yet \(valid from \S+Z to \S+Z; now is \S+Z\)/,
    weak: /1024-bit RSA key; at least 2048 bits are required/,
  };

  for (const kind of ['expired', 'future', 'weak'] as const) {
    it(`exits 2 for a ${kind} --cert (and SCAFFOLD_CERT_PEM) before pushing anything`, async () => {
      const remote = await newRemote();
      const refsBefore = await refsOf(remote.dir);
      const file = join(scratch, `${kind}.pem`);
      await writeFile(file, bad[kind]);
      for (const outcome of [await run([...clusterArgs(remote.name), '--cert', file]), await run(clusterArgs(remote.name), { SCAFFOLD_CERT_PEM: bad[kind] })]) {
        assert.equal(outcome.code, 2, describeOutcome(outcome));
        assert.equal(outcome.result?.status, 'failed');
        assert.match(outcome.result?.message ?? '', messages[kind]);
        assert.deepEqual(outcome.result?.commits, []);
        assert.ok(!outcome.events.some((e) => e.event === 'step_started'), 'no step started');
      }
      assert.equal(await refsOf(remote.dir), refsBefore, 'the remote is untouched');
    });
  }

  describe('fetched from the cluster (step 5)', () => {
    let kube: KubeApiDouble;
    let kubeconfig: string;

    before(async () => {
      kube = await startKubeApiDouble();
      kubeconfig = await kube.writeKubeconfig(await mkdtemp(join(scratch, 'kube-')));
      kube.setService(CONTROLLER.namespace, CONTROLLER.name, { ports: [{ name: 'http', port: 8080 }] });
      kube.setDeploymentAvailable(CONTROLLER.namespace, CONTROLLER.name, true);
      kube.setProxyHandler(CONTROLLER.namespace, CONTROLLER.name, 'http', (request) =>
        request.path === '/v1/cert.pem'
          ? { status: 200, headers: { 'Content-Type': 'application/x-pem-file' }, body: bad.expired }
          : { status: 404, body: '404 page not found\n' },
      );
    });
    after(async () => {
      await kube?.stop();
    });

    it('fails step 5 on an expired certificate: pass 1 stays, nothing is sealed or pushed after it', async () => {
      const remote = await newRemote();
      const mainBefore = await git(remote.dir, 'rev-parse', 'main');
      const outcome = await run([...clusterArgs(remote.name), '--kubeconfig', kubeconfig, '--controller-timeout', '30s']);
      assert.equal(outcome.code, 2, describeOutcome(outcome));
      assert.deepEqual(steps(outcome.events).slice(-2), ['step_started:5', 'step_failed:5'], describeOutcome(outcome));
      assert.equal(outcome.result?.step, 5);
      assert.match(outcome.result?.message ?? '', messages.expired);
      const landed = await commitsOf(remote.dir, 'main', mainBefore);
      assert.deepEqual(
        landed.map((c) => c.trailers['Scaffold-Pass']),
        ['infrastructure'],
      );
      assert.ok(!outcome.events.some((e) => e.step === 6), 'step 6 never started');
    });
  });
});
