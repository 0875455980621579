/**
 * `scaffold-runner --wait-ready`: the real runner pushes both passes to a real
 * bare repository, then reads the cluster's Flux Kustomizations from the
 * Kubernetes API double until they are Ready at the pushed commit.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { platformDir } from '../../src/package-paths.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import type { RunResult } from '../../src/run/run-record.js';
import { startKubeApiDouble, type KubeApiDouble } from '../support/kube-api-double.js';
import { git } from '../support/git.js';
import { describeOutcome, runRunner, startRunner } from '../support/runner.js';

const CLUSTER = ['--cluster', 'eu-ready-1', '--domain', 'eu-ready-1.example.net', '--region', 'eu-west-1'];

describe('scaffold-runner --wait-ready', () => {
  let scratch: string;
  let kube: KubeApiDouble;
  let kubeconfig: string;
  let certFile: string;
  let remotes = 0;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'runner-ready-'));
    kube = await startKubeApiDouble();
    kubeconfig = await kube.writeKubeconfig(scratch);
    certFile = join(scratch, 'cert.pem');
    await writeFile(certFile, createTestCertificate().certificatePem);
  });
  after(async () => {
    await kube?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  async function remote(): Promise<{ dir: string; url: string }> {
    const dir = join(scratch, `remote-${++remotes}.git`);
    await ensureSeededBareRepository(dir, platformDir());
    return { dir, url: pathToFileURL(dir).href };
  }

  it('succeeds only once Flux reports the Kustomizations Ready at the pushed commit, logging their progress', async () => {
    const { dir, url } = await remote();
    const resultFile = join(scratch, 'result-ok.json');
    const ref = { kind: 'GitRepository', name: 'flux-system' };
    kube.setKustomization('flux-system', 'flux-system', {
      spec: { sourceRef: ref, path: './clusters/eu-ready-1' },
      status: { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'Progressing', message: 'Reconciliation in progress' }] },
    });
    const runner = startRunner({
      args: [
        '--repo-url',
        url,
        ...CLUSTER,
        '--cert',
        certFile,
        '--kubeconfig',
        kubeconfig,
        '--wait-ready',
        '--ready-timeout',
        '60s',
        '--result-file',
        resultFile,
      ],
      env: { TMPDIR: scratch },
    });
    const waiting = await runner.waitForEvent((e) => e.event === 'flux_ready_wait', 60_000);
    const commit = await git(dir, 'rev-parse', 'main');
    assert.equal(waiting['commit'], commit, 'waits for the last pushed commit');
    await runner.waitForEvent((e) => e.event === 'kustomization' && e['phase'] === 'progressing', 20_000);
    const applied = { lastAppliedRevision: `main@sha1:${commit}`, lastAttemptedRevision: `main@sha1:${commit}` };
    const ready = { type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', message: `Applied revision: main@sha1:${commit}` };
    kube.setKustomization('flux-system', 'flux-system', { status: { ...applied, conditions: [ready] } });
    kube.setKustomization('flux-system', 'apps', { spec: { sourceRef: ref, path: './clusters/eu-ready-1/apps' }, status: { ...applied, conditions: [ready] } });
    const exit = await runner.exited;
    assert.equal(exit.code, 0, describeOutcome({ code: exit.code, stdout: runner.stdout(), stderr: runner.stderr() }));
    const result = JSON.parse(await readFile(resultFile, 'utf8')) as RunResult;
    assert.equal(result.status, 'succeeded');
    assert.match(result.message, new RegExp(`Flux Ready at ${commit.slice(0, 12)} \\(apps, flux-system\\)`));
    const progress = runner.events.filter((e) => e.event === 'kustomization').map((e) => `${String(e['name'])}:${String(e['phase'])}`);
    assert.deepEqual(progress, ['flux-system:progressing', 'apps:ready', 'flux-system:ready']);
    assert.ok(runner.events.some((e) => e.event === 'flux_ready'));
  });

  it('counts a commit pushed after the run that contains its own, and not a commit that does not', async () => {
    const { dir, url } = await remote();
    const resultFile = join(scratch, 'result-later.json');
    kube.setKustomization('flux-system', 'flux-system', { status: {} });
    kube.setKustomization('flux-system', 'apps', { status: {} });
    const runner = startRunner({
      args: [
        '--repo-url',
        url,
        ...CLUSTER,
        '--cert',
        certFile,
        '--kubeconfig',
        kubeconfig,
        '--wait-ready',
        '--ready-timeout',
        '90s',
        '--result-file',
        resultFile,
      ],
      env: { TMPDIR: scratch },
    });
    await runner.waitForEvent((e) => e.event === 'flux_ready_wait', 60_000);
    const ours = await git(dir, 'rev-parse', 'main');
    // Another run pushes after this one; and some commit off the branch that lacks ours.
    const work = join(scratch, 'later-work');
    await git(scratch, 'clone', '--quiet', dir, work);
    const ident = ['-c', 'user.name=other', '-c', 'user.email=other@example.invalid', '-c', 'commit.gpgsign=false'];
    await git(work, ...ident, 'commit', '--quiet', '--allow-empty', '-m', 'Another run');
    await git(work, 'push', '--quiet', 'origin', 'main');
    const later = await git(dir, 'rev-parse', 'main');
    const unrelated = await git(work, ...ident, 'commit-tree', '-m', 'Unrelated', `${ours}^{tree}`);
    const ready = (sha: string) => ({
      status: {
        lastAppliedRevision: `main@sha1:${sha}`,
        conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', message: `Applied revision: main@sha1:${sha}` }],
      },
    });
    kube.setKustomization('flux-system', 'flux-system', ready(unrelated));
    kube.setKustomization('flux-system', 'apps', ready(later));
    await runner.waitForEvent((e) => e.event === 'kustomization' && e['name'] === 'apps' && e['phase'] === 'ready', 30_000);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(
      runner.events.some((e) => e.event === 'flux_ready'),
      false,
      "a commit without the run's does not count",
    );
    kube.setKustomization('flux-system', 'flux-system', ready(later));
    const exit = await runner.exited;
    assert.equal(exit.code, 0, describeOutcome({ code: exit.code, stdout: runner.stdout(), stderr: runner.stderr() }));
    const result = JSON.parse(await readFile(resultFile, 'utf8')) as RunResult;
    assert.equal(result.status, 'succeeded');
    assert.equal(result.commits?.at(-1)?.sha, ours, 'the run reports its own commit');
  });

  it('fails after --ready-timeout naming the Kustomization that is not Ready, with the commits it pushed', async () => {
    const { dir, url } = await remote();
    const resultFile = join(scratch, 'result-timeout.json');
    kube.setKustomization('flux-system', 'flux-system', {
      status: {
        lastAppliedRevision: 'main@sha1:0000000000000000000000000000000000000000',
        conditions: [{ type: 'Ready', status: 'False', reason: 'ArtifactFailed', message: 'failed to checkout and determine revision' }],
      },
    });
    kube.setKustomization('flux-system', 'apps', { status: {} });
    const outcome = await runRunner({
      args: [
        '--repo-url',
        url,
        ...CLUSTER,
        '--cert',
        certFile,
        '--kubeconfig',
        kubeconfig,
        '--wait-ready',
        '--ready-timeout',
        '1s',
        '--result-file',
        resultFile,
      ],
      env: { TMPDIR: scratch },
      resultFile,
    });
    assert.equal(outcome.code, 1, describeOutcome(outcome));
    const commit = await git(dir, 'rev-parse', 'main');
    assert.equal(outcome.result?.status, 'failed');
    assert.deepEqual(
      outcome.result?.commits?.map((c) => c.pass),
      ['infrastructure', 'all'],
    );
    assert.match(
      outcome.result?.message ?? '',
      new RegExp(`^pushed ${commit.slice(0, 12)}, but Flux did not report Ready: Flux did not apply ${commit.slice(0, 12)} within 1s; not Ready: `),
    );
    assert.match(outcome.result?.message ?? '', /flux-system\/flux-system \(Ready=False \(ArtifactFailed: failed to checkout and determine revision\)/);
    assert.match(outcome.result?.message ?? '', /flux-system\/apps \(no Ready condition yet, nothing applied yet\)/);
  });

  it('refuses --wait-ready without a kubeconfig before cloning anything', async () => {
    const { url } = await remote();
    const resultFile = join(scratch, 'result-refused.json');
    const outcome = await runRunner({
      args: ['--repo-url', url, ...CLUSTER, '--cert', certFile, '--wait-ready', '--result-file', resultFile],
      env: { TMPDIR: scratch },
      resultFile,
    });
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.match(outcome.result?.message ?? '', /--wait-ready: needs the cluster's kubeconfig/);
  });
});
