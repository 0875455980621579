/**
 * Upgrade and removal runs against a real bare repository served by a real
 * `git daemon` on loopback: three generated clusters behind their reference
 * (an overlay patch edited after they were rendered), the real pre-push gate
 * (kubectl kustomize, the CRD schemas), native git. Once through the
 * `scaffold-runner` binary with SCAFFOLD_ACTION=upgrade and neither a
 * certificate nor a kubeconfig.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { UnavailableError, VerificationError } from '../errors.js';
import type { GitRemote, GitWorkspace } from '../run/ports.js';
import { CliGitRemote } from '../git/cli-git-remote.js';
import { generateQueueKey } from '../git/queue-auth.js';
import { createForgeClient } from '../delivery/create-delivery.js';
import { PullRequestDelivery } from '../delivery/pull-request-delivery.js';
import { createWorkTreeVerifier } from '../workspace/verify-work-tree.js';
import type { RunResult } from '../run/run-record.js';
import { type GitDaemon, startGitDaemon } from '../../test/support/git-server.js';
import { startForgeDouble } from '../../test/support/forge-double.js';
import { protectMain } from '../../test/support/protected-branch.js';
import { git } from '../../test/support/git.js';
import { createGeneratedFleet, REFERENCE_PATCH } from '../../test/support/generated-fleet.js';
import { capturingLogger, commitsOf, describeOutcome, filesAt, runRunner, startRunner, treeAt, type CapturingLogger } from '../../test/support/runner.js';
import { startKubeApiDouble } from '../../test/support/kube-api-double.js';
import { runFleetChange, type FleetChangeOptions } from './run-fleet-change.js';
import { failedResult, StepError } from './step-runner.js';
import { verifierFor } from './run-scaffold.js';

const CLUSTERS = ['eu-1', 'eu-2', 'eu-3'];
/** eu-3 also holds flux bootstrap's flux-system/, which no removal deletes. */
const BOOTSTRAPPED = 'eu-3';
/** A SealedSecret the generator wrote (not a sealed/ directory's kustomization). */
const SEALED_FILE = /\/sealed\/sealed-[^/]+\.yaml$/;

let scratch: string;
let served: string;
let template: string;
let daemon: GitDaemon;
let remotes = 0;
const verify = verifierFor(createWorkTreeVerifier());

interface Remote {
  readonly dir: string;
  readonly url: string;
  readonly base: string;
}

/** A copy of the template; below `owner/` when a forge double hosts it (the forge client reads owner and name from the URL). */
async function newRemote(owner?: string): Promise<Remote> {
  const name = `${owner ? `${owner}/` : ''}fleet-${++remotes}.git`;
  const dir = join(served, name);
  await git(scratch, 'clone', '--quiet', '--bare', template, dir);
  await git(dir, 'config', 'uploadpack.allowFilter', 'true');
  await git(dir, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
  return { dir, url: daemon.url(name), base: await git(dir, 'rev-parse', 'main') };
}

/** Commits what `change` does to a clone of `remote` and pushes it. @returns the remote's new main */
async function pushChange(remote: Remote, message: string, change: (work: string) => Promise<void>): Promise<string> {
  const work = await mkdtemp(join(scratch, 'change-'));
  await git(scratch, 'clone', '--quiet', remote.dir, work);
  await change(work);
  await git(work, 'add', '--all');
  await git(work, 'commit', '--quiet', '-m', message);
  await git(work, 'push', '--quiet', 'origin', 'main');
  return git(remote.dir, 'rev-parse', 'main');
}

/** `remote` with every working copy's push going through `push` (handed the real working copy). */
function pushingThrough(
  remote: GitRemote,
  push: (workspace: GitWorkspace, options: Parameters<GitWorkspace['push']>[0]) => ReturnType<GitWorkspace['push']>,
): GitRemote {
  return {
    clone: async (cloneOptions) => {
      const workspace = await remote.clone(cloneOptions);
      return new Proxy(workspace, {
        get: (target, key) =>
          key === 'push'
            ? (pushOptions: Parameters<GitWorkspace['push']>[0]) => push(target, pushOptions)
            : (Reflect.get(target, key) as unknown) instanceof Function
              ? Reflect.get(target, key).bind(target)
              : Reflect.get(target, key),
      });
    },
  };
}

/** A git remote whose working copies' first push lands `change` on `remote` just before, as another run's push would: the push has to rebase. */
function landingFirst(remote: Remote, logger: CapturingLogger, message: string, change: (work: string) => Promise<void>): GitRemote {
  let moved: Promise<string> | undefined;
  return pushingThrough(new CliGitRemote({ logger }), async (workspace, pushOptions) => {
    await (moved ??= pushChange(remote, message, change));
    return workspace.push(pushOptions);
  });
}

function options(remote: Remote, action: FleetChangeOptions['action'], cluster: string, id = `run-${action}-${cluster}-${remotes}`): FleetChangeOptions {
  return { id, action, repositoryUrl: remote.url, cluster: { name: cluster }, generatorVersion: 'test' };
}

function run(logger: CapturingLogger, opts: FleetChangeOptions): Promise<RunResult> {
  return runFleetChange({ git: new CliGitRemote({ logger }), logger, verify, workRoot: scratch }, opts);
}

function stepEvents(logger: CapturingLogger): string[] {
  return logger.lines
    .filter((l) => /^step_/.test(String(l.fields['event'])))
    .map((l) => `${String(l.fields['event'])}:${String(l.fields['step'])}:${String(l.fields['step_name'])}`);
}

/** Files changed between two commits, repository-relative. */
async function changedFiles(bare: string, from: string, to: string): Promise<string[]> {
  return (await git(bare, 'diff', '--name-only', from, to)).split('\n').filter(Boolean);
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-fleet-change-'));
  served = join(scratch, 'served');
  await mkdir(served);
  template = join(scratch, 'template.git');
  await createGeneratedFleet(join(scratch, 'work'), template, { clusters: CLUSTERS, fluxBootstrapped: [BOOTSTRAPPED] });
  daemon = await startGitDaemon({ baseDir: served });
});

after(async () => {
  await daemon?.stop();
  await rm(scratch, { recursive: true, force: true });
});

describe('runFleetChange: upgrade', () => {
  it('lands one commit re-rendering only that cluster, credentials byte-identical, and a rerun commits nothing', async () => {
    const remote = await newRemote();
    const logger = capturingLogger();
    const sealedBefore = [...(await treeAt(remote.dir, 'main', 'clusters/eu-2'))].filter(([path]) => SEALED_FILE.test(path));
    assert.ok(sealedBefore.length > 0, 'the cluster has sealed credentials');

    const result = await run(logger, options(remote, 'upgrade', 'eu-2', 'upgrade-eu-2'));

    const commits = await commitsOf(remote.dir, 'main', remote.base);
    assert.equal(commits.length, 1, commits.map((c) => c.subject).join(' | '));
    const [commit] = commits;
    assert.deepEqual(
      { ...commit!.trailers },
      {
        'Scaffold-Id': 'upgrade-eu-2',
        'Scaffold-Pass': 'upgrade',
        'Scaffold-Cluster': 'eu-2',
        'Scaffold-Reference': 'development',
        'Scaffold-Action': 'upgrade',
      },
    );
    assert.match(commit!.subject, /^Upgrade cluster eu-2/);
    const changed = await changedFiles(remote.dir, remote.base, 'main');
    assert.ok(changed.length > 0);
    for (const path of changed) assert.match(path, /^clusters\/eu-2\//);
    assert.match(await git(remote.dir, 'show', 'main:clusters/eu-2/apps/tcr-api-replicas.yaml'), /value: 4/, 'the edited reference patch reached eu-2');
    const sealedAfter = [...(await treeAt(remote.dir, 'main', 'clusters/eu-2'))].filter(([path]) => SEALED_FILE.test(path));
    assert.deepEqual(sealedAfter, sealedBefore, 'every sealed credential byte-identical');

    assert.equal(result.status, 'succeeded');
    assert.equal(result.gitops_path, 'clusters/eu-2');
    assert.deepEqual(result.commits, [{ pass: 'upgrade', sha: commit!.sha }]);
    assert.equal(result.step, 3);
    const diff = await git(remote.dir, 'diff', '--name-status', remote.base, 'main');
    const count = (status: string) => diff.split('\n').filter((line) => line.startsWith(status)).length;
    assert.deepEqual(result.changes, { added: count('A'), modified: count('M'), removed: count('D'), credentialsKept: sealedBefore.length });
    assert.deepEqual(stepEvents(logger), [
      'step_started:1:clone',
      'step_finished:1:clone',
      'step_started:2:render-upgrade',
      'step_finished:2:render-upgrade',
      'step_started:3:push-upgrade',
      'step_finished:3:push-upgrade',
    ]);
    assert.ok(
      logger.lines.some((l) => l.fields['event'] === 'file_change'),
      'one file_change summary line',
    );

    const again = capturingLogger();
    const rerun = await run(again, options(remote, 'upgrade', 'eu-2', 'upgrade-eu-2-again'));
    assert.equal(rerun.status, 'succeeded');
    assert.deepEqual(rerun.commits, []);
    assert.match(rerun.message, /clusters\/eu-2 is up to date with the reference: nothing to commit/);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), commit!.sha, 'nothing more pushed');
  });

  it('upgrades a batch from one clone: each cluster verified and committed on its own, all landed in one push, a cluster that fails verify left as it was', async () => {
    const remote = await newRemote();
    const logger = capturingLogger();
    // eu-2's render fails the gate; eu-1 before it and eu-3 after it are no less ready.
    const leftOut = new Map<string, readonly string[] | undefined>();
    const gate: typeof verify = async (dir, cluster, signal, leaveOut) => {
      leftOut.set(cluster, leaveOut);
      return cluster === 'eu-2' ? { findings: ['clusters/eu-2/apps: a finding of the test'] } : verify(dir, cluster, signal, leaveOut);
    };
    const batchRun = runFleetChange(
      { git: new CliGitRemote({ logger }), logger, verify: gate, workRoot: scratch },
      { ...options(remote, 'upgrade', 'eu-1', 'batch-upgrade'), batch: ['eu-2', 'eu-3'] },
    );
    const error = await batchRun.then(
      () => assert.fail('a batch with a failed cluster fails'),
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof StepError && error.cause instanceof VerificationError, String(error));
    assert.deepEqual(error.cause.findings, ['clusters/eu-2: clusters/eu-2/apps: a finding of the test']);
    const result = failedResult(error, { name: 'eu-1' });
    assert.deepEqual(result.batch, { 'eu-1': 'upgraded', 'eu-2': 'failed', 'eu-3': 'upgraded' });
    // Each cluster verified as a run of it alone would see the tree: without the batch's other clusters.
    assert.deepEqual(Object.fromEntries(leftOut), {
      'eu-1': ['clusters/eu-2', 'clusters/eu-3'],
      'eu-2': ['clusters/eu-1', 'clusters/eu-3'],
      'eu-3': ['clusters/eu-1', 'clusters/eu-2'],
    });

    const commits = await commitsOf(remote.dir, 'main', remote.base);
    assert.deepEqual(
      commits.map((c) => [c.trailers['Scaffold-Cluster'], c.trailers['Scaffold-Id'], c.trailers['Scaffold-Pass']]),
      [
        ['eu-3', 'batch-upgrade', 'upgrade'],
        ['eu-1', 'batch-upgrade', 'upgrade'],
      ],
      'one commit a cluster, newest first, none for eu-2',
    );
    assert.deepEqual(
      result.commits,
      [...commits].reverse().map((c) => ({ pass: 'upgrade', sha: c.sha, cluster: c.trailers['Scaffold-Cluster'] })),
    );
    for (const commit of commits) {
      const touched = (await git(remote.dir, 'diff-tree', '--no-commit-id', '--name-only', '-r', commit.sha)).split('\n').filter(Boolean);
      for (const path of touched) assert.ok(path.startsWith(`clusters/${commit.trailers['Scaffold-Cluster']}/`), `${commit.sha} touches ${path}`);
    }
    assert.deepEqual(await changedFiles(remote.dir, remote.base, 'main').then((files) => files.filter((f) => f.startsWith('clusters/eu-2/'))), []);
    assert.deepEqual(
      logger.lines.filter((l) => l.fields['event'] === 'batch_cluster').map((l) => [l.fields['batch_cluster'], l.fields['status']]),
      [
        ['eu-2', 'failed'],
        ['eu-1', 'upgraded'],
        ['eu-3', 'upgraded'],
      ],
      'a failure as it comes, the upgrades once their push landed',
    );
    assert.equal(logger.lines.filter((l) => l.fields['push'] === 'landed').length, 1, 'one push for the batch');
    assert.deepEqual(
      logger.lines.filter((l) => l.fields['event'] === 'commit').map((l) => l.fields['sha']),
      result.commits.map((c) => c.sha),
      'a commit event for each landed commit',
    );

    // Run again: what landed is up to date, eu-2 fails the same way, nothing more is pushed.
    const head = await git(remote.dir, 'rev-parse', 'main');
    const again = await runFleetChange(
      { git: new CliGitRemote({ logger }), logger, verify, workRoot: scratch },
      { ...options(remote, 'upgrade', 'eu-1', 'batch-upgrade-2'), batch: ['eu-3'] },
    );
    assert.equal(again.status, 'succeeded');
    assert.deepEqual(again.batch, { 'eu-1': 'up_to_date', 'eu-3': 'up_to_date' });
    assert.deepEqual(again.commits, []);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), head);
  });

  it('renders a batch cluster again from the branch when its push gave up on a transient failure, landing it once', async () => {
    const remote = await newRemote();
    const logger = capturingLogger();
    const real = new CliGitRemote({ logger });
    // The first push gives up as one overtaken 30 times would; its commit stays local, unlanded.
    let refused = 0;
    const git = pushingThrough(real, async (workspace, pushOptions) => {
      if (refused++ === 0) throw new UnavailableError('push to main was overtaken by concurrent pushes 30 times; giving up');
      return workspace.push(pushOptions);
    });
    const result = await runFleetChange({ git, logger, verify, workRoot: scratch }, { ...options(remote, 'upgrade', 'eu-1', 'batch-retry'), batch: ['eu-2'] });
    assert.equal(result.status, 'succeeded', result.message);
    assert.deepEqual(result.batch, { 'eu-1': 'upgraded', 'eu-2': 'upgraded' });
    const commits = await commitsOf(remote.dir, 'main', remote.base);
    assert.deepEqual(commits.map((c) => c.trailers['Scaffold-Cluster']).sort(), ['eu-1', 'eu-2'], 'each cluster landed once');
    assert.deepEqual(
      logger.lines.filter((l) => l.fields['event'] === 'batch_retry').map((l) => [l.fields['batch_cluster'], l.fields['retry']]),
      [['eu-1', 1]],
    );
  });

  it('with workTreeRoot, keeps the work tree there and the history in the work root, removing both when the batch ends', async () => {
    const remote = await newRemote();
    const logger = capturingLogger();
    const workTreeRoot = await mkdtemp(join(scratch, 'memory-'));
    const workRoot = await mkdtemp(join(scratch, 'disk-'));
    const seen: { dir: string; gitFile: string; files: string[] }[] = [];
    const git = pushingThrough(new CliGitRemote({ logger }), async (workspace, pushOptions) => {
      seen.push({ dir: workspace.dir, gitFile: await readFile(join(workspace.dir, '.git'), 'utf8'), files: await readdir(join(workspace.dir, 'clusters')) });
      return workspace.push(pushOptions);
    });
    const result = await runFleetChange(
      { git, logger, verify, workRoot, workTreeRoot },
      { ...options(remote, 'upgrade', 'eu-1', 'batch-separate'), batch: ['eu-2'] },
    );
    assert.equal(result.status, 'succeeded', result.message);
    assert.deepEqual(result.batch, { 'eu-1': 'upgraded', 'eu-2': 'upgraded' });
    assert.equal(seen.length, 1);
    const [pushed] = seen as [(typeof seen)[number]];
    assert.equal(dirname(pushed.dir), workTreeRoot);
    const gitDir = /^gitdir: (.+)\n$/.exec(pushed.gitFile)?.[1] ?? '';
    assert.ok(gitDir.startsWith(`${workRoot}/`), gitDir);
    assert.deepEqual(pushed.files.sort(), ['development', 'eu-1', 'eu-2']);
    assert.deepEqual(await readdir(workTreeRoot), []);
    assert.deepEqual(await readdir(workRoot), []);
  });

  it('verifies every cluster of a batch again when its push rebases onto changed shared inputs', async () => {
    const remote = await newRemote();
    const logger = capturingLogger();
    const verified: string[] = [];
    const gate: typeof verify = async (dir, cluster, signal, leaveOut) => {
      verified.push(cluster);
      return verify(dir, cluster, signal, leaveOut);
    };
    // While the batch rendered, someone changed base/: its push has to rebase onto that.
    const through = landingFirst(remote, logger, 'a shared input changes under the batch', async (work) => {
      const [file = ''] = (await git(work, 'ls-files', 'base/*.yaml')).split('\n');
      await writeFile(join(work, file), `${await readFile(join(work, file), 'utf8')}# changed under the batch\n`);
    });
    const result = await runFleetChange(
      { git: through, logger, verify: gate, workRoot: scratch },
      { ...options(remote, 'upgrade', 'eu-1', 'batch-rebase'), batch: ['eu-2', 'eu-3'] },
    );
    assert.equal(result.status, 'succeeded', result.message);
    assert.deepEqual(verified, ['eu-1', 'eu-2', 'eu-3', 'eu-1', 'eu-2', 'eu-3'], 'each cluster verified when rendered, and again on the rebased tree');
    assert.deepEqual(
      logger.lines.filter((l) => l.fields['event'] === 'reverify').map((l) => l.fields['verified']),
      [true, true, true],
    );
    const commits = await commitsOf(remote.dir, 'main', remote.base);
    assert.deepEqual(
      commits.map((c) => c.trailers['Scaffold-Cluster'] ?? c.subject),
      ['eu-3', 'eu-2', 'eu-1', 'a shared input changes under the batch'],
      'the batch on top of the change it rebased onto',
    );
  });

  it('renders a batch again when a cluster fails its verify on the rebased tree: that cluster fails alone, the others land', async () => {
    const remote = await newRemote();
    const logger = capturingLogger();
    const [file = ''] = (await git(remote.dir, 'ls-tree', '-r', '--name-only', 'main', 'base/')).split('\n').filter((f) => f.endsWith('.yaml'));
    const MARK = '# breaks eu-2';
    // eu-2 fails the gate on any tree holding the change below, as a shared input that breaks one cluster would.
    const gate: typeof verify = async (dir, cluster, signal, leaveOut) =>
      cluster === 'eu-2' && (await readFile(join(dir, file), 'utf8')).includes(MARK)
        ? { findings: ['clusters/eu-2: broken by the change to base/'] }
        : verify(dir, cluster, signal, leaveOut);
    const through = landingFirst(remote, logger, 'a shared input changes under the batch', async (work) => {
      await writeFile(join(work, file), `${await readFile(join(work, file), 'utf8')}${MARK}\n`);
    });
    const error = await runFleetChange(
      { git: through, logger, verify: gate, workRoot: scratch },
      { ...options(remote, 'upgrade', 'eu-1', 'batch-reverify-fails'), batch: ['eu-2', 'eu-3'] },
    ).then(
      () => assert.fail('eu-2 fails'),
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof StepError && error.cause instanceof VerificationError, String(error));
    assert.deepEqual(error.cause.findings, ['clusters/eu-2: clusters/eu-2: broken by the change to base/'], "the finding is eu-2's alone");
    assert.deepEqual(failedResult(error, { name: 'eu-1' }).batch, { 'eu-1': 'upgraded', 'eu-2': 'failed', 'eu-3': 'upgraded' });
    const commits = await commitsOf(remote.dir, 'main', remote.base);
    assert.deepEqual(
      commits.map((c) => c.trailers['Scaffold-Cluster'] ?? c.subject),
      ['eu-3', 'eu-1', 'a shared input changes under the batch'],
    );
    assert.deepEqual(
      logger.lines.filter((l) => l.fields['event'] === 'batch_retry').map((l) => l.fields['retry']),
      [1],
    );
  });

  it('lands what a batch committed before an unexpected error stopped it, and starts nothing after', async () => {
    const remote = await newRemote();
    const logger = capturingLogger();
    const gate: typeof verify = async (dir, cluster, signal, leaveOut) => {
      if (cluster === 'eu-3') throw new Error('the gate crashed');
      return verify(dir, cluster, signal, leaveOut);
    };
    // The branch moved meanwhile: the push rebases, which a working tree left half-upgraded by eu-3 would refuse.
    const through = landingFirst(remote, logger, 'another change lands first', (work) => writeFile(join(work, 'NOTES.md'), 'notes\n'));
    const error = await runFleetChange(
      { git: through, logger, verify: gate, workRoot: scratch },
      { ...options(remote, 'upgrade', 'eu-1', 'batch-crash'), batch: ['eu-2', 'eu-3'] },
    ).then(
      () => assert.fail('the batch stops'),
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof StepError, String(error));
    assert.match(String((error.cause as Error).message), /the gate crashed/);
    assert.deepEqual(failedResult(error, { name: 'eu-1' }).batch, { 'eu-1': 'upgraded', 'eu-2': 'upgraded', 'eu-3': 'not_started' });
    const commits = await commitsOf(remote.dir, 'main', remote.base);
    assert.deepEqual(
      commits.map((c) => c.trailers['Scaffold-Cluster'] ?? c.subject),
      ['eu-2', 'eu-1', 'another change lands first'],
    );
  });

  it("lands a batch's commits over another run that landed first, rebased as one chain through the landing queue", async () => {
    const remote = await newRemote();
    const logger = capturingLogger();
    // One queue key for all, as the service hands its runners: each may carry the other's announced commits.
    const queueAuth = { key: Buffer.from(generateQueueKey(), 'utf8'), shared: true, attempt: 1 };
    let single: Promise<RunResult> | undefined;
    // The batch's push waits until a run of eu-3 landed: the branch moved past the batch's base.
    const through = pushingThrough(new CliGitRemote({ logger, queueAuth }), async (workspace, pushOptions) => {
      single ??= runFleetChange(
        { git: new CliGitRemote({ logger, queueAuth }), logger, verify, workRoot: scratch },
        options(remote, 'upgrade', 'eu-3', 'single-eu-3'),
      );
      await single;
      return workspace.push(pushOptions);
    });
    const batch = await runFleetChange(
      { git: through, logger, verify, workRoot: scratch },
      { ...options(remote, 'upgrade', 'eu-1', 'chain-batch'), batch: ['eu-2'] },
    );
    assert.equal(batch.status, 'succeeded', batch.message);
    assert.equal((await single!).status, 'succeeded');
    const commits = await commitsOf(remote.dir, 'main', remote.base);
    assert.deepEqual(
      commits.map((c) => [c.trailers['Scaffold-Cluster'], c.parents.length]),
      [
        ['eu-2', 1],
        ['eu-1', 1],
        ['eu-3', 1],
      ],
      "the batch's chain on top of eu-3's commit, linear",
    );
    assert.deepEqual(
      batch.commits,
      commits
        .slice(0, 2)
        .reverse()
        .map((c) => ({ pass: 'upgrade', sha: c.sha, cluster: c.trailers['Scaffold-Cluster'] })),
      'the batch reports the commits as they landed, after the rebase',
    );
    assert.ok(
      logger.lines.some((l) => l.fields['push'] === 'queued'),
      'the batch found the branch moved and queued',
    );
  });

  it('refuses a batch that is not an upgrade, names a cluster twice or is not made of cluster names, before cloning', async () => {
    const remote = await newRemote();
    for (const [opts, pattern] of [
      [{ ...options(remote, 'remove', 'eu-1'), batch: ['eu-2'] }, /only an upgrade/],
      [{ ...options(remote, 'upgrade', 'eu-1'), batch: ['eu-2', 'eu-1'] }, /names a cluster twice/],
      [{ ...options(remote, 'upgrade', 'eu-1'), batch: ['../eu-2'] }, /not cluster names/],
    ] as const) {
      await assert.rejects(run(capturingLogger(), opts), pattern);
    }
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.base);
  });

  it('lands two concurrent upgrades of different clusters, one commit each (the landing queue takes pass upgrade)', async () => {
    const remote = await newRemote();
    const results = await Promise.all(['eu-1', 'eu-2'].map((cluster) => run(capturingLogger(), options(remote, 'upgrade', cluster, `together-${cluster}`))));
    const commits = await commitsOf(remote.dir, 'main', remote.base);
    assert.equal(commits.length, 2, commits.map((c) => c.subject).join(' | '));
    for (const [index, cluster] of ['eu-1', 'eu-2'].entries()) {
      const commit = commits.find((c) => c.trailers['Scaffold-Cluster'] === cluster);
      assert.ok(commit, `${cluster}'s upgrade landed`);
      assert.deepEqual(results[index]!.commits, [{ pass: 'upgrade', sha: commit.sha }]);
      const touched = (await git(remote.dir, 'diff-tree', '--no-commit-id', '--name-only', '-r', commit.sha)).split('\n');
      for (const path of touched) assert.ok(path.startsWith(`clusters/${cluster}/`), `${commit.sha} touches only ${cluster}: ${path}`);
    }
  });

  it('fails at step 2 with the findings when the re-rendered tree fails verification, and pushes nothing', async () => {
    const remote = await newRemote();
    // The reference's patch made invalid (a Deployment's replicas must be an integer): every render from it fails the gate.
    const base = await pushChange(remote, 'a broken reference patch', async (work) => {
      await writeFile(join(work, REFERENCE_PATCH), (await readFile(join(work, REFERENCE_PATCH), 'utf8')).replace(/value: \d+/, 'value: many'));
    });

    const error = await run(capturingLogger(), options(remote, 'upgrade', 'eu-1')).catch((e: unknown) => e);
    assert.ok(error instanceof StepError);
    assert.equal(error.step, 2);
    assert.ok(error.cause instanceof VerificationError, String(error.cause));
    assert.ok(
      error.cause.findings.some((finding) => /replicas/.test(finding)),
      error.cause.findings.join('\n'),
    );
    assert.match(failedResult(error, { name: 'eu-1' }).message, /^step 2 \(render-upgrade\) failed: \d+ verification finding/);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), base);
  });

  for (const [cluster, why] of [
    ['development', /reference environment/],
    ['eu-9', /clusters\/eu-9 does not exist/],
  ] as const) {
    it(`fails at step 2 for ${cluster} and pushes nothing`, async () => {
      const remote = await newRemote();
      const logger = capturingLogger();
      const error = await run(logger, options(remote, 'upgrade', cluster)).then(
        () => assert.fail('the run should fail'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof StepError);
      assert.equal(error.step, 2);
      const result = failedResult(error, { name: cluster });
      assert.equal(result.status, 'failed');
      assert.equal(result.step, 2);
      assert.match(result.message, /^step 2 \(render-upgrade\) failed: /);
      assert.match(result.message, why);
      assert.deepEqual(result.commits, []);
      assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.base);
      assert.ok(stepEvents(logger).includes('step_failed:2:render-upgrade'));
    });
  }
});

describe('runFleetChange: remove', () => {
  it("removes only the generator's files, keeps flux-system/, other clusters and base/, and a rerun succeeds with the same commit", async () => {
    const remote = await newRemote();
    const logger = capturingLogger();
    const bootstrap = (await filesAt(remote.dir, 'main', `clusters/${BOOTSTRAPPED}`)).filter((p) => p.includes('/flux-system/'));
    assert.ok(bootstrap.length > 0);
    const others = await treeAt(remote.dir, 'main', 'clusters/eu-1');
    const base = await git(remote.dir, 'rev-parse', 'main:base');

    const result = await run(logger, options(remote, 'remove', BOOTSTRAPPED, 'remove-eu-3'));

    const commits = await commitsOf(remote.dir, 'main', remote.base);
    assert.equal(commits.length, 1);
    const [commit] = commits;
    assert.equal(commit!.trailers['Scaffold-Pass'], 'remove');
    assert.equal(commit!.trailers['Scaffold-Action'], 'remove');
    assert.equal(commit!.trailers['Scaffold-Cluster'], BOOTSTRAPPED);
    assert.equal(commit!.trailers['Scaffold-Id'], 'remove-eu-3');
    assert.match(commit!.subject, /^Remove cluster eu-3/);
    assert.deepEqual(
      await filesAt(remote.dir, 'main', `clusters/${BOOTSTRAPPED}`),
      [...bootstrap, `clusters/${BOOTSTRAPPED}/kustomization.yaml`].sort(),
      'only flux-system/ is left, and the sync path listing it',
    );
    assert.match(await git(remote.dir, 'show', `main:clusters/${BOOTSTRAPPED}/kustomization.yaml`), /resources:\n {2}- flux-system$/);
    const removed = await changedFiles(remote.dir, remote.base, 'main');
    for (const path of removed) assert.match(path, /^clusters\/eu-3\//);
    assert.deepEqual(await treeAt(remote.dir, 'main', 'clusters/eu-1'), others);
    assert.equal(await git(remote.dir, 'rev-parse', 'main:base'), base);
    assert.equal(await git(remote.dir, 'show', `main:${REFERENCE_PATCH}`).then((t) => t.length > 0), true);

    assert.equal(result.status, 'succeeded');
    assert.deepEqual(result.commits, [{ pass: 'remove', sha: commit!.sha }]);
    assert.deepEqual(result.changes, { added: 0, modified: 1, removed: removed.length - 1, kept: bootstrap });
    assert.deepEqual(
      stepEvents(logger).filter((e) => e.startsWith('step_finished')),
      ['step_finished:1:clone', 'step_finished:4:remove-files', 'step_finished:5:push-removal'],
    );

    const rerun = await run(capturingLogger(), options(remote, 'remove', BOOTSTRAPPED, 'remove-eu-3'));
    assert.equal(rerun.status, 'succeeded');
    assert.deepEqual(rerun.commits, [{ pass: 'remove', sha: commit!.sha }], 'the rerun reports the commit that removed it');
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), commit!.sha);
  });

  it('goes through a pull request on scaffold/<cluster>/remove when main is protected, titled and listing the kept files', async () => {
    const remote = await newRemote('acme');
    await protectMain(remote.dir);
    const forge = await startForgeDouble({ forge: 'github', repoDir: remote.dir, owner: 'acme', repo: `fleet-${remotes}`, token: 'forge-token' });
    try {
      const logger = capturingLogger();
      const client = createForgeClient({
        forge: 'github',
        apiUrl: forge.apiUrl,
        repositoryUrl: remote.url,
        auth: { kind: 'token', token: 'forge-token' },
        logger,
      });
      const delivery = new PullRequestDelivery({ forge: client, autoMerge: true, pollIntervalMs: 50, logger });
      const result = await runFleetChange({ git: new CliGitRemote({ logger }), logger, delivery, workRoot: scratch }, options(remote, 'remove', BOOTSTRAPPED));

      const [pull] = forge.pulls;
      assert.ok(pull && forge.pulls.length === 1);
      assert.equal(pull.title, "Remove eu-3: the generator's files");
      assert.equal(pull.head, 'scaffold/eu-3/remove');
      assert.deepEqual(pull.labels, ['gitops-scaffolder', 'scaffold-pass:remove']);
      assert.match(pull.body, /Files kept \(not written by gitops-scaffolder\)/);
      assert.match(pull.body, /flux-system\//);
      assert.ok(pull.merged);
      const main = await git(remote.dir, 'rev-parse', 'main');
      assert.deepEqual(result.commits, [{ pass: 'remove', sha: main }]);
      assert.ok(
        (await filesAt(remote.dir, 'main', 'clusters/eu-3')).every((path) => path.includes('/flux-system/') || path === 'clusters/eu-3/kustomization.yaml'),
      );
    } finally {
      await forge.stop();
    }
  });

  it('refuses the reference environment at step 4', async () => {
    const remote = await newRemote();
    const error = await run(capturingLogger(), options(remote, 'remove', 'development')).catch((e: unknown) => e);
    assert.ok(error instanceof StepError);
    assert.equal(error.step, 4);
    assert.match(failedResult(error, { name: 'development' }).message, /^step 4 \(remove-files\) failed: .*reference environment/);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.base);
  });
});

describe('runFleetChange: a directory the generator did not write', () => {
  for (const [action, why] of [
    ['upgrade', /has no provenance.yaml: it was not generated by gitops-scaffolder, so there is nothing to re-render/],
    ['remove', /has no provenance.yaml: it was not generated by gitops-scaffolder, so nothing in it is the generator's to remove/],
  ] as const) {
    // A removal's steps 2-3 lift the data's protection, skipped unless asked for.
    const step = action === 'upgrade' ? 2 : 4;
    it(`is refused by ${action} at step ${step}, nothing pushed`, async () => {
      const remote = await newRemote();
      const base = await pushChange(remote, 'a hand-made cluster', async (work) => {
        await mkdir(join(work, 'clusters/hand-made'), { recursive: true });
        await writeFile(
          join(work, 'clusters/hand-made/kustomization.yaml'),
          'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n',
        );
      });
      const error = await run(capturingLogger(), options(remote, action, 'hand-made')).catch((e: unknown) => e);
      assert.ok(error instanceof StepError);
      assert.equal(error.step, step);
      assert.match(failedResult(error, { name: 'hand-made' }).message, why);
      assert.equal(await git(remote.dir, 'rev-parse', 'main'), base);
    });
  }
});

describe('scaffold-runner --action upgrade', () => {
  it('upgrades one cluster by name alone (no certificate, kubeconfig, domain or region) and reports the commit', async () => {
    const remote = await newRemote();
    const resultFile = join(await mkdtemp(join(scratch, 'result-')), 'result.json');
    const runnerTmp = await mkdtemp(join(scratch, 'tmp-'));
    const outcome = await runRunner({
      args: ['--repo-url', remote.url, '--cluster', 'eu-1', '--id', 'cli-upgrade-eu-1', '--result-file', resultFile],
      env: { SCAFFOLD_ACTION: 'upgrade', TMPDIR: runnerTmp },
      resultFile,
    });
    assert.equal(outcome.code, 0, describeOutcome(outcome));
    const [commit] = await commitsOf(remote.dir, 'main', remote.base);
    assert.ok(commit);
    assert.equal(commit.trailers['Scaffold-Pass'], 'upgrade');
    assert.equal(outcome.result?.status, 'succeeded');
    assert.deepEqual(outcome.result?.commits, [{ pass: 'upgrade', sha: commit.sha }]);
    assert.ok((outcome.result?.changes?.modified ?? 0) + (outcome.result?.changes?.added ?? 0) > 0);
    assert.deepEqual(outcome.nonJsonLines, []);
  });

  it('with --wait-ready and only a kubeconfig, succeeds once Flux is Ready at the upgrade commit', async () => {
    const remote = await newRemote();
    const kube = await startKubeApiDouble();
    try {
      const kubeconfig = await kube.writeKubeconfig(await mkdtemp(join(scratch, 'kube-')));
      const resultFile = join(await mkdtemp(join(scratch, 'result-')), 'result.json');
      kube.setKustomization('flux-system', 'flux-system', {
        spec: { sourceRef: { kind: 'GitRepository', name: 'flux-system' }, path: './clusters/eu-2' },
        status: {},
      });
      const runner = startRunner({
        args: [
          '--action',
          'upgrade',
          '--repo-url',
          remote.url,
          '--cluster',
          'eu-2',
          '--domain',
          'eu-2.example.net',
          '--region',
          'eu-west-1',
          '--kubeconfig',
          kubeconfig,
          '--wait-ready',
          '--ready-timeout',
          '60s',
          '--result-file',
          resultFile,
        ],
        env: { TMPDIR: await mkdtemp(join(scratch, 'tmp-')) },
      });
      const waiting = await runner.waitForEvent((e) => e.event === 'flux_ready_wait', 60_000);
      const commit = await git(remote.dir, 'rev-parse', 'main');
      assert.notEqual(commit, remote.base);
      assert.equal(waiting['commit'], commit, 'waits for the upgrade commit');
      kube.setKustomization('flux-system', 'flux-system', {
        status: {
          lastAppliedRevision: `main@sha1:${commit}`,
          conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', message: `Applied revision: main@sha1:${commit}` }],
        },
      });
      const exit = await runner.exited;
      assert.equal(exit.code, 0, describeOutcome({ code: exit.code, stdout: runner.stdout(), stderr: runner.stderr() }));
      const result = JSON.parse(await readFile(resultFile, 'utf8')) as RunResult;
      assert.equal(result.status, 'succeeded');
      assert.deepEqual(result.commits, [{ pass: 'upgrade', sha: commit }]);
      assert.match(result.message, new RegExp(`Flux Ready at ${commit.slice(0, 12)}`));
    } finally {
      await kube.stop();
    }
  });

  it('refuses rotation flags for a removal before cloning: bad input, nothing pushed', async () => {
    const remote = await newRemote();
    const resultFile = join(await mkdtemp(join(scratch, 'result-')), 'result.json');
    const outcome = await runRunner({
      args: [
        '--action',
        'remove',
        '--rotate-credentials',
        '--repo-url',
        remote.url,
        '--cluster',
        'eu-1',
        '--domain',
        'eu-1.example.net',
        '--region',
        'eu-west-1',
        '--result-file',
        resultFile,
      ],
      env: { TMPDIR: await mkdtemp(join(scratch, 'tmp-')) },
      resultFile,
    });
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.equal(outcome.result?.status, 'failed');
    assert.match(outcome.result?.message ?? '', /--rotate-credentials\/--rotate-only: a removal deletes sealed credentials, it never seals them anew/);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.base);
  });
});
