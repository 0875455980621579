/**
 * The landing queue against a real git daemon on loopback: a run whose push
 * lost announces its commit, the next run to land carries it, and the owner
 * finds it on the branch; commits whose verify verdict would not hold are left
 * for their owners.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GitWorkspace } from '../runner/ports.js';
import { type GitDaemon, createBareRepository, startGitDaemon } from '../../test/support/git-server.js';
import { git } from '../../test/support/git.js';
import type { Logger } from '../logger.js';
import { CliGitRemote } from './cli-git-remote.js';
import { runGit } from './git-process.js';
import { queueRef } from './landing-queue.js';
import { readLandedCommits } from './landed-commits.js';

const AUTHOR = { name: 'Scaffold Bot', email: 'bot@example.invalid' };
const OTHER_AUTHOR = { name: 'Other Run', email: 'other@example.invalid' };

/** Log events with their fields, to see what each push did. */
function recorder(): { logger: Logger; events: Record<string, unknown>[] } {
  const events: Record<string, unknown>[] = [];
  const record = (fields: Record<string, unknown>, message: string) => void events.push({ ...fields, message });
  const logger: Logger = { debug: record, info: record, warn: record, error: record, child: () => logger };
  return { logger, events };
}

function passTrailers(id: string, cluster: string, pass = 'infrastructure', reference = 'development'): Record<string, string> {
  return { 'Scaffold-Id': id, 'Scaffold-Pass': pass, 'Scaffold-Cluster': cluster, 'Scaffold-Reference': reference };
}

describe('landing queue', () => {
  let scratch: string;
  let served: string;
  let daemon: GitDaemon;
  let counter = 0;
  const workdir = () => join(scratch, `work-${++counter}`);

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gs-landing-'));
    served = join(scratch, 'served');
    await createBareRepository(join(served, 'seed.git'), {
      seed: async (work) => {
        const files: Record<string, string> = {
          'base/infrastructure/kustomization.yaml': 'resources: []\n',
          'clusters/development/kustomization.yaml': 'resources: [flux]\n',
        };
        for (const [path, content] of Object.entries(files)) {
          await mkdir(join(work, path, '..'), { recursive: true });
          await writeFile(join(work, path), content);
        }
      },
    });
    daemon = await startGitDaemon({ baseDir: served });
  });

  after(async () => {
    await daemon?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  async function freshRepo(name: string): Promise<string> {
    await runGit(['clone', '--quiet', '--bare', join(served, 'seed.git'), join(served, name)], { cwd: served });
    await runGit(['config', 'uploadpack.allowFilter', 'true'], { cwd: join(served, name) });
    return name;
  }

  async function cloneFor(remote: CliGitRemote, repo: string, cluster: string): Promise<GitWorkspace> {
    return remote.clone({ url: daemon.url(repo), branch: 'main', dir: workdir(), sparsePaths: ['base', 'clusters/development', `clusters/${cluster}`] });
  }

  async function writeCluster(ws: GitWorkspace, cluster: string, trailers: Record<string, string>, author = AUTHOR, path = `clusters/${cluster}`): Promise<string> {
    await mkdir(join(ws.dir, path), { recursive: true });
    await writeFile(join(ws.dir, path, 'kustomization.yaml'), `# ${cluster} ${trailers['Scaffold-Pass'] ?? ''}\n`);
    const sha = await ws.commit({ paths: [path], message: `Scaffold ${cluster}`, trailers, author });
    assert.ok(sha);
    return sha;
  }

  /** Puts `ws`'s HEAD in the queue, as its run does after losing a race. */
  async function announce(ws: GitWorkspace, trailers: Record<string, string>): Promise<string> {
    const ref = queueRef('main', { id: trailers['Scaffold-Id']!, pass: trailers['Scaffold-Pass']!, cluster: '', reference: '' });
    await git(ws.dir, 'push', '--quiet', 'origin', `HEAD:${ref}`);
    return ref;
  }

  /** Rewrites HEAD with what is staged (and `env`), keeping its message and trailers. */
  async function amend(dir: string, env: Record<string, string> = {}): Promise<void> {
    const identity = { GIT_COMMITTER_NAME: AUTHOR.name, GIT_COMMITTER_EMAIL: AUTHOR.email };
    await runGit(['commit', '--quiet', '--amend', '--no-edit', '--no-verify'], { cwd: dir, env: { ...identity, ...env } });
  }

  /**
   * A fresh repository on which alpha's run (`run-a`) has landed, and the
   * working copies of two more runs, beta and gamma, still on the base it moved
   * past: the start of every race below.
   */
  async function afterAlphaLanded(name: string, configure?: (bare: string) => Promise<unknown>) {
    const repo = await freshRepo(name);
    const bare = join(served, repo);
    if (configure) await configure(bare);
    const { logger, events } = recorder();
    const remote = new CliGitRemote({ backoff: { baseMs: 5, maxMs: 50 }, logger });
    const [first, beta, gamma] = (await Promise.all(['alpha', 'beta', 'gamma'].map((c) => cloneFor(remote, repo, c)))) as [GitWorkspace, GitWorkspace, GitWorkspace];
    await writeCluster(first, 'alpha', passTrailers('run-a', 'alpha'));
    await first.push();
    return { repo, bare, events, first, beta, gamma, dispose: () => Promise.all([first.dispose(), beta.dispose(), gamma.dispose()]) };
  }

  const queueRefs = async (bare: string) => (await git(bare, 'for-each-ref', '--format=%(refname)', 'refs/scaffold-queue/')).split('\n').filter(Boolean);

  it('carries an announced commit onto the branch in the same push, and its owner finds it there', async () => {
    const race = await afterAlphaLanded('carry.git');
    const { bare, events, first, beta: queued, gamma: carrier } = race;
    try {
      // gamma and then beta committed on the old base; beta lost its race to alpha and announced its verified commit.
      await writeCluster(carrier, 'gamma', passTrailers('run-a2', 'gamma'));
      const betaCommit = await writeCluster(queued, 'beta', passTrailers('run-b', 'beta'), OTHER_AUTHOR);
      const betaTree = await git(queued.dir, 'rev-parse', `${betaCommit}:clusters/beta`);
      await announce(queued, passTrailers('run-b', 'beta'));
      // gamma, first in line (commits of one second are ordered by run id), rebases and lands itself with beta on top.
      const landed = await carrier.push();
      assert.equal(landed.attempts, 1, 'it saw the branch had moved, so it rebased and carried before its one push');

      const log = (await git(bare, 'log', '--format=%an|%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main')).split('\n');
      assert.deepEqual(log.slice(0, 3), ['Other Run|run-b', 'Scaffold Bot|run-a2', 'Scaffold Bot|run-a']);
      assert.equal(await git(bare, 'rev-list', '--merges', 'main'), '');
      assert.equal(await git(bare, 'rev-parse', 'main:clusters/beta'), betaTree, 'the carried cluster tree is the one its run verified');
      assert.equal(await git(bare, 'rev-parse', 'main~1'), landed.sha, 'the carrier reports its own commit');
      assert.deepEqual(await queueRefs(bare), [], 'the landing push deleted the announcement it landed');
      assert.ok(events.some((e) => e['push'] === 'landed' && e['carried'] === 1));

      // The owner's own push now finds its commit on the branch and continues from there.
      const found = await queued.push();
      assert.equal(found.sha, await git(bare, 'rev-parse', 'main'));
      assert.equal(await git(queued.dir, 'rev-parse', 'HEAD'), found.sha);
      assert.equal(await git(bare, 'rev-list', '--count', 'main'), '4', 'nothing landed twice');
      assert.deepEqual(await queueRefs(bare), [], 'the owner leaves no announcement behind');

      // The carrier's next pass carries again: its chain of the first carry is no obstacle.
      await writeCluster(carrier, 'gamma', passTrailers('run-a2', 'gamma', 'all'));
      await writeCluster(first, 'alpha', passTrailers('run-z', 'alpha', 'all'));
      await announce(first, passTrailers('run-z', 'alpha', 'all'));
      await carrier.push();
      const ids = (await git(bare, 'log', '-2', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main')).split('\n');
      assert.deepEqual(ids, ['run-z', 'run-a2']);
    } finally {
      await race.dispose();
    }
  });

  it('lands many racing runs with far fewer pushes than runs, all commits once, history linear', async () => {
    const repo = await freshRepo('many.git');
    const bare = join(served, repo);
    const { logger, events } = recorder();
    const remote = new CliGitRemote({ backoff: { baseMs: 20, maxMs: 200 }, logger });
    const names = Array.from({ length: 8 }, (_, i) => `c${i}`);
    const workspaces = await Promise.all(names.map((c) => cloneFor(remote, repo, c)));
    try {
      await Promise.all(workspaces.map((ws, i) => writeCluster(ws, names[i]!, passTrailers(`run-${i}`, names[i]!))));
      const results = await Promise.all(workspaces.map((ws) => ws.push({ maxAttempts: 30 })));
      const onMain = (await git(bare, 'rev-list', 'main')).split('\n');
      for (const result of results) assert.ok(onMain.includes(result.sha), 'every run reports the commit that is on the branch');
      assert.equal(await git(bare, 'rev-list', '--count', 'main'), String(1 + names.length));
      assert.equal(await git(bare, 'rev-list', '--merges', 'main'), '');
      assert.equal((await git(bare, 'ls-tree', '--name-only', 'main', 'clusters/')).split('\n').length, names.length + 1);
      assert.deepEqual(await queueRefs(bare), []);
      const carried = events.filter((e) => e['push'] === 'carried').length;
      assert.ok(carried > 0, 'some runs were landed by another run');
    } finally {
      await Promise.all(workspaces.map((ws) => ws.dispose()));
    }
  });

  it('leaves an announced commit for its owner when it touches more than its cluster, is a symlink, is stale, or what its verify read changed', async () => {
    const repo = await freshRepo('refuse.git');
    const bare = join(served, repo);
    const { logger, events } = recorder();
    const remote = new CliGitRemote({ backoff: { baseMs: 5, maxMs: 50 }, logger });
    const ws = await Promise.all(['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'].map((c) => cloneFor(remote, repo, c)));
    const [first, outside, linked, stale, shared, carrier] = ws as [GitWorkspace, GitWorkspace, GitWorkspace, GitWorkspace, GitWorkspace, GitWorkspace];
    try {
      // A reference-environment change lands first: whatever read it must be verified again.
      await mkdir(join(first.dir, 'clusters/development'), { recursive: true });
      await writeFile(join(first.dir, 'clusters/development/kustomization.yaml'), 'resources: [flux, extra]\n');
      await first.commit({ paths: ['clusters/development'], message: 'edit the reference', trailers: {}, author: AUTHOR });
      await first.push();

      // zeta is first in line (the oldest commit; within one second, the first run id), so it carries without waiting.
      await writeCluster(carrier, 'zeta', passTrailers('run-a', 'zeta'));
      // beta's commit also writes base/: not a cluster-only change.
      await writeCluster(outside, 'beta', passTrailers('run-b', 'beta'));
      await mkdir(join(outside.dir, 'base/infrastructure'), { recursive: true });
      await writeFile(join(outside.dir, 'base/infrastructure/extra.yaml'), 'x: 1\n');
      await git(outside.dir, 'add', 'base');
      await amend(outside.dir);
      // gamma writes a symlink in its cluster.
      await mkdir(join(linked.dir, 'clusters/gamma'), { recursive: true });
      await symlink('/etc/passwd', join(linked.dir, 'clusters/gamma/kustomization.yaml'));
      await linked.commit({ paths: ['clusters/gamma'], message: 'link', trailers: passTrailers('run-g', 'gamma'), author: AUTHOR });
      // delta was announced long ago (its owner may be dead).
      await writeCluster(stale, 'delta', passTrailers('run-d', 'delta'));
      await amend(stale.dir, { GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z' });
      // epsilon was verified against the reference environment as it was before `first`.
      await writeCluster(shared, 'epsilon', passTrailers('run-e', 'epsilon'));
      for (const [w, trailers] of [[outside, passTrailers('run-b', 'beta')], [linked, passTrailers('run-g', 'gamma')], [stale, passTrailers('run-d', 'delta')], [shared, passTrailers('run-e', 'epsilon')]] as const) {
        await announce(w, trailers);
      }

      await carrier.push();
      assert.equal(await git(bare, 'log', '-1', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main'), 'run-a', 'nothing was carried');
      assert.equal((await queueRefs(bare)).length, 4, 'the announcements stay for their owners');
      const left = events.filter((e) => e['push'] === 'left').flatMap((e) => e['left'] as string[]).sort();
      assert.deepEqual(left, [
        'run-b/infrastructure: it changes base/infrastructure/extra.yaml, outside its cluster',
        'run-d/infrastructure: announced too long ago',
        'run-e/infrastructure: what its verify read has changed',
        'run-g/infrastructure: it writes clusters/gamma/kustomization.yaml with mode 120000',
      ]);
    } finally {
      await Promise.all(ws.map((w) => w.dispose()));
    }
  });

  it('recording a run as lost withdraws its announcements first, so no later push carries its commit', async () => {
    const race = await afterAlphaLanded('fence.git');
    const { repo, bare, beta: dead, gamma: carrier } = race;
    try {
      // beta's runner announced its commit and was killed.
      await writeCluster(dead, 'beta', passTrailers('run-dead', 'beta'));
      await announce(dead, passTrailers('run-dead', 'beta'));
      assert.deepEqual(await readLandedCommits({ repositoryUrl: daemon.url(repo), branch: 'main', runId: 'run-dead', scratchDir: scratch }), []);
      assert.deepEqual(await queueRefs(bare), []);

      await writeCluster(carrier, 'gamma', passTrailers('run-c', 'gamma'));
      await carrier.push();
      assert.equal(await git(bare, 'ls-tree', '--name-only', 'main', 'clusters/beta'), '', 'the dead run never lands');
    } finally {
      await race.dispose();
    }
  });

  it('races alone, and still lands every commit, when the remote takes no atomic pushes', async () => {
    const race = await afterAlphaLanded('no-atomic.git', (bare) => runGit(['config', 'receive.advertiseAtomic', 'false'], { cwd: bare }));
    const { bare, events, beta: queued, gamma: carrier } = race;
    try {
      // The carrier's commit is the older one, so it is first in line and carries at once.
      await writeCluster(carrier, 'gamma', passTrailers('run-c', 'gamma'));
      await writeCluster(queued, 'beta', passTrailers('run-q', 'beta'));
      await announce(queued, passTrailers('run-q', 'beta'));
      await carrier.push();
      assert.ok(events.some((e) => e['push'] === 'lost' && e['queued'] === false), 'the carrier fell back to racing alone');
      assert.equal(await git(bare, 'log', '-1', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main'), 'run-c', 'nothing was carried without an atomic push');
      assert.deepEqual(await queueRefs(bare), ['refs/scaffold-queue/main/run-q--infrastructure'], 'the carrier withdrew only its own announcement');
      // The announced run lands its own commit.
      await queued.push();
      assert.equal(await git(bare, 'rev-list', '--count', 'main'), '4');
      assert.equal(await git(bare, 'rev-list', '--merges', 'main'), '');
    } finally {
      await race.dispose();
    }
  });
});
