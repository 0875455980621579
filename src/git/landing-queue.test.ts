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
import { basename, join } from 'node:path';
import type { GitWorkspace } from '../run/ports.js';
import { type GitDaemon, createBareRepository, startGitDaemon } from '../../test/support/git-server.js';
import { git } from '../../test/support/git.js';
import { eventually } from '../../test/support/runner.js';
import type { Logger } from '../logger.js';
import { CliGitRemote } from './cli-git-remote.js';
import { runGit } from './git-process.js';
import { CARRY_WINDOW_MS, type CarryRules, type QueuedCommit, QueueSightings, carryRefusal, parseQueueRef, queueRef } from './landing-queue.js';
import { readLandedCommits } from './landed-commits.js';
import { type QueueAuth, announcementMac } from './queue-auth.js';
import { fenceCommit, fenceRef } from './attempt-fence.js';

const AUTHOR = { name: 'Scaffold Bot', email: 'bot@example.invalid' };
const OTHER_AUTHOR = { name: 'Other Run', email: 'other@example.invalid' };
/** The key the service shares with its runners in these tests. */
const KEY = Buffer.from('0123456789abcdef'.repeat(4));
const AUTH: QueueAuth = { key: KEY, shared: true, attempt: 1 };
/** Another service's key: what a planted announcement could at best be signed with. */
const WRONG_KEY = Buffer.from('fedcba9876543210'.repeat(4));

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

  async function writeCluster(
    ws: GitWorkspace,
    cluster: string,
    trailers: Record<string, string>,
    author = AUTHOR,
    path = `clusters/${cluster}`,
  ): Promise<string> {
    await mkdir(join(ws.dir, path), { recursive: true });
    await writeFile(join(ws.dir, path, 'kustomization.yaml'), `# ${cluster} ${trailers['Scaffold-Pass'] ?? ''}\n`);
    const sha = await ws.commit({ paths: [path], message: `Scaffold ${cluster}`, trailers, author });
    assert.ok(sha);
    return sha;
  }

  /** `ws`'s git as the queue's helpers call it. */
  const queueGitOf = (ws: GitWorkspace) => ({
    git: (args: readonly string[], call?: { readonly input?: string; readonly env?: Readonly<Record<string, string>> }) =>
      runGit(args, { cwd: ws.dir, ...(call?.input === undefined ? {} : { input: call.input }), ...(call?.env ? { env: call.env } : {}) }),
  });

  /**
   * Puts `ws`'s HEAD in the queue, as its run does after losing a race: under a
   * ref whose name holds the issue time and the MAC over what a carrier relies on.
   */
  async function announce(
    ws: GitWorkspace,
    trailers: Record<string, string>,
    options: { readonly key?: Buffer; readonly issuedAt?: number; readonly attempt?: number } = {},
  ): Promise<string> {
    const [sha = '', parent = '', tree = ''] = (await git(ws.dir, 'log', '-1', '--format=%H%n%P%n%T', 'HEAD')).split('\n');
    const id = trailers['Scaffold-Id']!;
    const pass = trailers['Scaffold-Pass']!;
    const issuedAt = options.issuedAt ?? Date.now();
    const attempt = options.attempt ?? 1;
    const mac = announcementMac(options.key ?? KEY, {
      branch: 'main',
      id,
      attempt,
      pass,
      cluster: trailers['Scaffold-Cluster']!,
      parent,
      tree,
      sha,
      issuedAt,
    });
    const ref = queueRef('main', { id, pass, attempt, issuedAt, mac });
    // With its attempt's fence open, as its runner's announcing push leaves it.
    const owner = { cluster: trailers['Scaffold-Cluster']!, attempt, id };
    const fence = await fenceCommit(queueGitOf(ws), 'open', owner, undefined);
    await git(ws.dir, 'push', '--quiet', 'origin', `HEAD:${ref}`, `+${fence}:${fenceRef('main', owner)}`);
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
    const remote = new CliGitRemote({ backoff: { baseMs: 5, maxMs: 50 }, logger, queueAuth: AUTH });
    const [first, beta, gamma] = (await Promise.all(['alpha', 'beta', 'gamma'].map((c) => cloneFor(remote, repo, c)))) as [
      GitWorkspace,
      GitWorkspace,
      GitWorkspace,
    ];
    await writeCluster(first, 'alpha', passTrailers('run-a', 'alpha'));
    await first.push();
    return { repo, bare, events, first, beta, gamma, dispose: () => Promise.all([first.dispose(), beta.dispose(), gamma.dispose()]) };
  }

  const queueRefs = async (bare: string) => (await git(bare, 'for-each-ref', '--format=%(refname)', 'refs/scaffold-queue/')).split('\n').filter(Boolean);

  /** Why the carrier deleted each announcement it refused, by the run id its ref names. */
  function refusedBy(events: readonly Record<string, unknown>[]): Record<string, string> {
    const lines = events.filter((e) => e['push'] === 'refused').flatMap((e) => e['refused'] as string[]);
    return Object.fromEntries(lines.map((line) => [line.split('--')[0], line.slice(line.indexOf(': ') + 2)]));
  }

  /** Issued 5 s ahead by the announcing runner's clock (inside the allowed skew), so gamma, the carrier, is first in line and carries at once. */
  const aheadOfCarrier = () => Date.now() + 5_000;

  it('carries an announced commit onto the branch in the same push, and its owner finds it there', async () => {
    const race = await afterAlphaLanded('carry.git');
    const { bare, events, first, beta: queued, gamma: carrier } = race;
    try {
      // gamma and then beta committed on the old base; beta lost its race to alpha and announced its verified commit.
      await writeCluster(carrier, 'gamma', passTrailers('run-a2', 'gamma'));
      const betaCommit = await writeCluster(queued, 'beta', passTrailers('run-b', 'beta'), OTHER_AUTHOR);
      const betaTree = await git(queued.dir, 'rev-parse', `${betaCommit}:clusters/beta`);
      // Its committer's clock says 2000: the queue goes by the MAC-covered issue time, not by commit dates.
      await amend(queued.dir, { GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z', GIT_COMMITTER_NAME: OTHER_AUTHOR.name, GIT_COMMITTER_EMAIL: OTHER_AUTHOR.email });
      await announce(queued, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
      // gamma, first in line, rebases and lands itself with beta on top.
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
      await announce(first, passTrailers('run-z', 'alpha', 'all'), { issuedAt: aheadOfCarrier() });
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
    const remote = new CliGitRemote({ backoff: { baseMs: 20, maxMs: 200 }, logger, queueAuth: AUTH });
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

  /**
   * One refusal: after alpha landed, beta's run announces a commit `plant`
   * makes, and gamma lands. Each scenario breaks exactly one rule, so the
   * carrier's reason is that rule's; without it the commit would be carried.
   * Beta's commit must not reach main, its announcement must be gone, and the
   * carrier must say why.
   */
  async function refusedScenario(name: string, expected: string, plant: (ws: GitWorkspace) => Promise<void>): Promise<void> {
    const race = await afterAlphaLanded(name);
    const { bare, events, beta, gamma } = race;
    try {
      await plant(beta);
      await writeCluster(gamma, 'gamma', passTrailers('run-c', 'gamma'));
      await gamma.push();
      assert.deepEqual(refusedBy(events), { 'run-b': expected });
      const ids = (await git(bare, 'log', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main')).split('\n');
      assert.deepEqual(ids, ['run-c', 'run-a'], "nothing of beta's run is on main: only gamma's and alpha's commits on the seed");
      assert.equal(await git(bare, 'rev-list', '--count', 'main'), '3');
      assert.equal(await git(bare, 'ls-tree', '--name-only', 'main', 'clusters/beta'), '', "beta's commit is not on main");
      assert.equal(
        await git(bare, 'rev-parse', 'main:clusters/development/kustomization.yaml'),
        await git(bare, 'rev-parse', 'main~2:clusters/development/kustomization.yaml'),
        'the reference environment is untouched',
      );
      assert.deepEqual(await queueRefs(bare), [], 'the carrier deleted the announcement it refused');
    } finally {
      await race.dispose();
    }
  }

  it('refuses an announcement for the reference environment, MAC and all', async () => {
    // Its trailers name beta as its reference, so only the carrier's own reserved set says no.
    await refusedScenario('refuse-reference.git', 'its cluster development is reserved', async (beta) => {
      await writeCluster(beta, 'development', passTrailers('run-b', 'development', 'infrastructure', 'beta'));
      await announce(beta, passTrailers('run-b', 'development', 'infrastructure', 'beta'), { issuedAt: aheadOfCarrier() });
    });
  });

  it("refuses a commit planted under a live run's announcement: its Scaffold-Id and MAC are the run's, its commit is not", async () => {
    await refusedScenario('refuse-live-id.git', 'it is not authenticated: its MAC does not hold under the service key', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      const ref = await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
      // Someone who may push replaces the run's commit under its ref: same parent, same trailers, their own content.
      await writeFile(join(beta.dir, 'clusters/beta/kustomization.yaml'), 'resources: [planted]\n');
      await git(beta.dir, 'add', 'clusters/beta');
      await amend(beta.dir);
      await git(beta.dir, 'push', '--quiet', '--force', 'origin', `HEAD:${ref}`);
    });
  });

  it("refuses an announcement whose commit writes into another tenant's cluster, read from its tree diff", async () => {
    await refusedScenario('refuse-tenant.git', 'it changes clusters/alpha/stolen.yaml, outside its cluster', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      // alpha's directory is outside beta's sparse cone: staged by plumbing, as an attacker's tooling would.
      const blob = await git(beta.dir, 'hash-object', '-w', '--stdin', '--path=x.yaml');
      await git(beta.dir, 'update-index', '--add', '--cacheinfo', `100644,${blob},clusters/alpha/stolen.yaml`);
      await amend(beta.dir);
      await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
    });
  });

  it('refuses an announcement issued in the future, whatever its commit dates say', async () => {
    await refusedScenario('refuse-future.git', 'announced in the future', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: Date.now() + 10 * 60_000 });
    });
  });

  it('refuses an announcement issued longer ago than the carry window, even with a fresh committer date', async () => {
    await refusedScenario('refuse-stale.git', 'announced too long ago', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      await amend(beta.dir, { GIT_COMMITTER_DATE: new Date(Date.now() + 60_000).toISOString() });
      await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: Date.now() - CARRY_WINDOW_MS - 60_000 });
    });
  });

  it('refuses an announcement whose commit writes a symbolic link', async () => {
    await refusedScenario('refuse-symlink.git', 'it writes clusters/beta/kustomization.yaml with mode 120000', async (beta) => {
      await mkdir(join(beta.dir, 'clusters/beta'), { recursive: true });
      await symlink('/etc/passwd', join(beta.dir, 'clusters/beta/kustomization.yaml'));
      await beta.commit({ paths: ['clusters/beta'], message: 'link', trailers: passTrailers('run-b', 'beta'), author: AUTHOR });
      await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
    });
  });

  it('leaves an announcement for its owner when what its verify read has changed since', async () => {
    const race = await afterAlphaLanded('left-reverify.git');
    const { bare, events, first, beta, gamma } = race;
    try {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      const ref = await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
      // The reference environment changes after beta verified against it.
      await writeFile(join(first.dir, 'clusters/development/kustomization.yaml'), 'resources: [flux, extra]\n');
      await first.commit({ paths: ['clusters/development'], message: 'edit the reference', trailers: {}, author: AUTHOR });
      await first.push();
      await writeCluster(gamma, 'gamma', passTrailers('run-c', 'gamma'));
      await gamma.push();
      assert.equal(await git(bare, 'ls-tree', '--name-only', 'main', 'clusters/beta'), '');
      assert.deepEqual(await queueRefs(bare), [ref], 'it stays for its owner, who verifies again');
      assert.deepEqual(
        events.filter((e) => e['push'] === 'left').flatMap((e) => e['left'] as string[]),
        ['run-b/infrastructure: what its verify read has changed'],
      );
    } finally {
      await race.dispose();
    }
  });

  /** Moves `owner`'s fence on the remote to a new `state` commit, as the runner of a newer attempt or the service does. */
  async function setFence(ws: GitWorkspace, state: 'open' | 'closed', owner: { cluster: string; attempt: number; id: string }): Promise<void> {
    const commit = await fenceCommit(queueGitOf(ws), state, owner, undefined);
    await git(ws.dir, 'push', '--quiet', 'origin', `+${commit}:${fenceRef('main', owner)}`);
  }

  it('refuses an announcement whose attempt the service fenced', async () => {
    await refusedScenario('refuse-fenced.git', 'its attempt is fenced: the service recorded it', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
      await setFence(beta, 'closed', { cluster: 'beta', attempt: 1, id: 'run-b' });
    });
  });

  it('refuses an announcement of a cluster whose newer attempt has started', async () => {
    await refusedScenario('refuse-superseded.git', 'a newer attempt of its cluster has started', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
      await setFence(beta, 'open', { cluster: 'beta', attempt: 2, id: 'run-b2' });
    });
  });

  it('refuses a planted announcement: a MAC made without the service key', async () => {
    await refusedScenario('refuse-forged.git', 'it is not authenticated: its MAC does not hold under the service key', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      await announce(beta, passTrailers('run-b', 'beta'), { key: WRONG_KEY, issuedAt: aheadOfCarrier() });
    });
  });

  /** The same commit under another name in the queue (the old name gone), as someone who may push any ref can do. */
  async function rename(bare: string, ref: string, change: Partial<{ attempt: number; issuedAt: number }>): Promise<string> {
    const renamed = queueRef('main', { ...parseQueueRef('main', ref)!, ...change });
    assert.notEqual(renamed, ref);
    await git(bare, 'update-ref', renamed, await git(bare, 'rev-parse', ref));
    await git(bare, 'update-ref', '-d', ref);
    return renamed;
  }

  it('refuses an authentic announcement whose commit was amended only in its message, under the same ref name', async () => {
    await refusedScenario('refuse-reworded.git', 'it is not authenticated: its MAC does not hold under the service key', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      const ref = await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
      const tree = await git(beta.dir, 'rev-parse', 'HEAD^{tree}');
      // Same parent, same tree, same trailers: only the message's subject differs.
      const message = (await git(beta.dir, 'log', '-1', '--format=%B', 'HEAD')).replace(/^[^\n]*/, 'Scaffold beta, reworded');
      await git(beta.dir, 'commit', '--quiet', '--amend', '--no-verify', '-m', message);
      assert.equal(await git(beta.dir, 'rev-parse', 'HEAD^{tree}'), tree);
      assert.equal((await git(beta.dir, 'log', '-1', '--format=%(trailers:key=Scaffold-Id,valueonly)', 'HEAD')).trim(), 'run-b');
      await git(beta.dir, 'push', '--quiet', '--force', 'origin', `HEAD:${ref}`);
    });
  });

  it('refuses an authentic announcement whose commit was amended only in its author, under the same ref name', async () => {
    await refusedScenario('refuse-reauthored.git', 'it is not authenticated: its MAC does not hold under the service key', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      const ref = await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
      const tree = await git(beta.dir, 'rev-parse', 'HEAD^{tree}');
      await git(beta.dir, 'commit', '--quiet', '--amend', '--no-edit', '--no-verify', `--author=${OTHER_AUTHOR.name} <${OTHER_AUTHOR.email}>`);
      assert.equal(await git(beta.dir, 'rev-parse', 'HEAD^{tree}'), tree);
      assert.equal(await git(beta.dir, 'log', '-1', '--format=%an', 'HEAD'), OTHER_AUTHOR.name);
      await git(beta.dir, 'push', '--quiet', '--force', 'origin', `HEAD:${ref}`);
    });
  });

  it("refuses a fenced attempt's announcement renamed to the run's next attempt with its old MAC", async () => {
    await refusedScenario('refuse-reattempted.git', 'it is not authenticated: its MAC does not hold under the service key', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      const ref = await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
      // The service closed attempt 1; attempt 2 of the same run has started, its fence open.
      await setFence(beta, 'closed', { cluster: 'beta', attempt: 1, id: 'run-b' });
      await setFence(beta, 'open', { cluster: 'beta', attempt: 2, id: 'run-b' });
      await rename(join(served, 'refuse-reattempted.git'), ref, { attempt: 2 });
    });
  });

  it('refuses a stale announcement renamed to a fresh issue time with its old MAC', async () => {
    await refusedScenario('refuse-redated.git', 'it is not authenticated: its MAC does not hold under the service key', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      const ref = await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: Date.now() - CARRY_WINDOW_MS - 60_000 });
      await rename(join(served, 'refuse-redated.git'), ref, { issuedAt: aheadOfCarrier() });
    });
  });

  /** Stages `content` at `path` by plumbing (the path may lie outside the sparse cone) and commits it with `trailers`, as an attacker's tooling would. */
  async function plantCommit(ws: GitWorkspace, path: string, trailers: Record<string, string>): Promise<void> {
    const blob = await git(ws.dir, 'hash-object', '-w', '--stdin', `--path=${path}`);
    await git(ws.dir, 'update-index', '--add', '--cacheinfo', `100644,${blob},${path}`);
    const trailerArgs = Object.entries(trailers).flatMap(([key, value]) => ['--trailer', `${key}: ${value}`]);
    await git(ws.dir, 'commit', '--quiet', '--no-verify', '-m', `Scaffold ${path}`, ...trailerArgs);
  }

  // Named here, not read from ALWAYS_RESERVED: an emptied list must fail these, not skip them.
  for (const cluster of ['base', 'flux-system']) {
    it(`refuses an authentic announcement for the cluster ${cluster}, which every cluster reads`, async () => {
      await refusedScenario(`refuse-${cluster}.git`, `its cluster ${cluster} is reserved`, async (beta) => {
        await plantCommit(beta, `clusters/${cluster}/kustomization.yaml`, passTrailers('run-b', cluster));
        await announce(beta, passTrailers('run-b', cluster), { issuedAt: aheadOfCarrier() });
      });
    });
  }

  it('refuses an authentic announcement whose cluster is its own reference environment', async () => {
    // The carrier's reference is development: only the announcement's own trailers make beta reserved.
    await refusedScenario('refuse-own-reference.git', 'its cluster beta is reserved', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta', 'infrastructure', 'beta'));
      await announce(beta, passTrailers('run-b', 'beta', 'infrastructure', 'beta'), { issuedAt: aheadOfCarrier() });
    });
  });

  it('refuses an authentic announcement whose commit has no valid author identity', async () => {
    await refusedScenario('refuse-author.git', 'its author is not a valid identity', async (beta) => {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      // The same commit with an empty author e-mail, written as a raw object (git commit would refuse it);
      // the MAC covers the commit, so its runner's key can still sign it.
      const raw = await git(beta.dir, 'cat-file', 'commit', 'HEAD');
      const forged = `${raw.replace(/^author [^\n]*$/m, 'author Scaffold Bot <> 1700000000 +0000')}\n`;
      assert.notEqual(forged, `${raw}\n`);
      const sha = (await runGit(['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: beta.dir, input: forged })).stdout.trim();
      await git(beta.dir, 'update-ref', 'HEAD', sha);
      assert.equal(await git(beta.dir, 'log', '-1', '--format=%ae', 'HEAD'), '');
      await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
    });
  });

  /** What the carrier left for the owners, as `<run>/<pass>: <reason>`. */
  const leftBy = (events: readonly Record<string, unknown>[]) => events.filter((e) => e['push'] === 'left').flatMap((e) => e['left'] as string[]);

  it('leaves an announcement whose parent is not on the branch for its owner', async () => {
    const race = await afterAlphaLanded('left-parent.git');
    const { bare, events, beta, gamma } = race;
    try {
      // A commit of its own the branch never had, then the pass commit on top: both change only clusters/beta.
      await writeCluster(beta, 'beta', passTrailers('run-x', 'beta', 'all'));
      await writeFile(join(beta.dir, 'clusters/beta/kustomization.yaml'), 'resources: [second]\n');
      await beta.commit({ paths: ['clusters/beta'], message: 'Scaffold beta', trailers: passTrailers('run-b', 'beta'), author: AUTHOR });
      const ref = await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
      await writeCluster(gamma, 'gamma', passTrailers('run-c', 'gamma'));
      await gamma.push();
      assert.equal(await git(bare, 'ls-tree', '--name-only', 'main', 'clusters/beta'), '', 'not carried');
      assert.deepEqual(await queueRefs(bare), [ref], 'not deleted: its owner rebases and lands it');
      assert.deepEqual(leftBy(events), ['run-b/infrastructure: its parent is not on the branch']);
      assert.deepEqual(refusedBy(events), {});
    } finally {
      await race.dispose();
    }
  });

  /**
   * Two announcements in one chain: beta's, and delta's, whose reference
   * environment is beta. Once beta's commit is on the chain, what delta's
   * verify read has changed, whether delta's parent is beta's (`sameParent`)
   * or a later commit of the branch.
   */
  async function chainedReference(name: string, sameParent: boolean): Promise<void> {
    const race = await afterAlphaLanded(name);
    const { repo, bare, events, beta, gamma } = race;
    const delta = await cloneFor(new CliGitRemote({ logger: recorder().logger, queueAuth: AUTH }), repo, 'delta');
    try {
      // delta's working copy is on the branch as alpha left it; moved back to the seed, it shares beta's parent.
      if (sameParent) await git(delta.dir, 'reset', '--quiet', '--hard', 'HEAD~1');
      assert.equal((await git(delta.dir, 'rev-parse', 'HEAD')) === (await git(beta.dir, 'rev-parse', 'HEAD')), sameParent);
      const issuedAt = aheadOfCarrier();
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      const betaRef = await announce(beta, passTrailers('run-b', 'beta'), { issuedAt });
      await writeCluster(delta, 'delta', passTrailers('run-d', 'delta', 'infrastructure', 'beta'));
      const deltaRef = await announce(delta, passTrailers('run-d', 'delta', 'infrastructure', 'beta'), { issuedAt: issuedAt + 1_000 });
      await writeCluster(gamma, 'gamma', passTrailers('run-c', 'gamma'));
      await gamma.push();
      const ids = (await git(bare, 'log', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main')).split('\n');
      assert.deepEqual(ids, ['run-b', 'run-c', 'run-a'], 'beta carried on top of gamma; delta not');
      assert.equal(await git(bare, 'ls-tree', '--name-only', 'main', 'clusters/delta'), '');
      assert.deepEqual(leftBy(events), ['run-d/infrastructure: what its verify read has changed']);
      assert.deepEqual(await queueRefs(bare), [deltaRef], "beta's announcement deleted with its landing, delta's left for its owner");
      assert.notEqual(betaRef, deltaRef);
    } finally {
      await delta.dispose();
      await race.dispose();
    }
  }

  it('leaves an announcement whose reference environment an earlier commit of the same chain changed (same parent)', async () => {
    await chainedReference('left-chained-same-parent.git', true);
  });

  it('leaves an announcement whose reference environment an earlier commit of the same chain changed (a later parent)', async () => {
    await chainedReference('left-chained-later-parent.git', false);
  });

  it('deletes an announcement its own renewal replaced, and carries only the renewal', async () => {
    const race = await afterAlphaLanded('renewed.git');
    const { bare, events, beta, gamma } = race;
    try {
      const issuedAt = aheadOfCarrier();
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      await announce(beta, passTrailers('run-b', 'beta'), { issuedAt });
      // The run made its commit again and renewed its announcement; the old ref outlived the renewal.
      await writeFile(join(beta.dir, 'clusters/beta/kustomization.yaml'), 'resources: [renewed]\n');
      await git(beta.dir, 'add', 'clusters/beta');
      await amend(beta.dir);
      const renewedTree = await git(beta.dir, 'rev-parse', 'HEAD:clusters/beta');
      await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: issuedAt + 1_000 });
      assert.equal((await queueRefs(bare)).length, 2);
      await writeCluster(gamma, 'gamma', passTrailers('run-c', 'gamma'));
      await gamma.push();
      assert.deepEqual(refusedBy(events), { 'run-b': 'a newer announcement of its run and pass replaced it' });
      const ids = (await git(bare, 'log', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main')).split('\n');
      assert.deepEqual(ids, ['run-b', 'run-c', 'run-a'], 'carried once');
      assert.equal(await git(bare, 'rev-parse', 'main:clusters/beta'), renewedTree, 'the renewed commit is the one carried');
      assert.deepEqual(await queueRefs(bare), []);
    } finally {
      await race.dispose();
    }
  });

  it('an announcement its carrier has watched for longer than the carry window is stale, whatever its issue time', () => {
    let clock = 0;
    const sightings = new QueueSightings(() => clock);
    const entry: QueuedCommit = {
      id: 'run-b',
      pass: 'infrastructure',
      cluster: 'beta',
      reference: 'development',
      ref: 'refs/scaffold-queue/main/x',
      sha: 'a'.repeat(40),
      parents: ['b'.repeat(40)],
      tree: 'c'.repeat(40),
      attempt: 1,
      issuedAt: Date.now(),
      authentic: true,
      author: AUTHOR,
      authorDate: '0 +0000',
      message: 'm',
    };
    const own = [{ mode: '100644', path: 'clusters/beta/kustomization.yaml' }];
    const fences = {
      open: new Set([fenceRef('main', { cluster: 'beta', attempt: 1, id: 'run-b' })]),
      closed: new Set<string>(),
      newestAttempt: new Map([['beta', 1]]),
    };
    const rules = (): CarryRules => ({
      auth: AUTH,
      sightings,
      reserved: new Set(['development', 'base', 'flux-system']),
      now: entry.issuedAt,
      branch: 'main',
      fences,
    });
    assert.equal(carryRefusal(entry, own, new Set(), rules()), undefined, 'first seen: carried');
    clock += CARRY_WINDOW_MS + 1;
    assert.deepEqual(carryRefusal(entry, own, new Set(), rules()), { reason: 'announced too long ago', unlandable: true });
  });

  it('deletes what can never land, so later runs are not held up by it', async () => {
    const race = await afterAlphaLanded('leftovers.git');
    const { bare, events, first, beta, gamma } = race;
    try {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      // Left by an older generator or planted: no MAC in the name; a blob; a name announcing another run than its commit's.
      await git(beta.dir, 'push', '--quiet', 'origin', 'HEAD:refs/scaffold-queue/main/run-b--infrastructure');
      const blob = await git(beta.dir, 'hash-object', '-w', '--stdin');
      await git(beta.dir, 'push', '--quiet', 'origin', `${blob}:refs/scaffold-queue/main/run-x--all--1--${Date.now()}--${'0'.repeat(64)}`);
      await git(beta.dir, 'push', '--quiet', 'origin', `HEAD:refs/scaffold-queue/main/run-y--infrastructure--1--${Date.now()}--${'0'.repeat(64)}`);
      assert.equal((await queueRefs(bare)).length, 3);

      await writeCluster(gamma, 'gamma', passTrailers('run-c', 'gamma'));
      await gamma.push();
      assert.deepEqual(await queueRefs(bare), [], 'the carrier deleted every leftover in its landing push');
      assert.deepEqual(refusedBy(events), {
        'run-b': 'its name carries no run, pass, attempt, issue time and MAC',
        'run-x': 'it points at a blob',
        'run-y': 'its commit is not the pass its name announces',
      });
      assert.equal(await git(bare, 'ls-tree', '--name-only', 'main', 'clusters/beta'), '');

      // The next run finds no queue: it pushes at once, without announcing itself.
      const before = events.length;
      await git(first.dir, 'fetch', '--quiet', 'origin');
      await git(first.dir, 'reset', '--quiet', '--hard', 'origin/main');
      await writeCluster(first, 'alpha', passTrailers('run-a3', 'alpha', 'all'));
      await first.push();
      assert.ok(!events.slice(before).some((e) => e['push'] === 'queued' || e['push'] === 'lost'), 'the next run was not queued');
    } finally {
      await race.dispose();
    }
  });

  /**
   * The remote's packed-refs lock, as another push deleting refs holds it:
   * git takes it for every deletion, and with core.packedRefsTimeout 0 it
   * does not wait for it, so each refused landing push comes back at once.
   */
  const holdPackedRefs = (bare: string) => writeFile(join(bare, 'packed-refs.lock'), '');
  const noLockWait = (bare: string) => git(bare, 'config', 'core.packedRefsTimeout', '0');

  /** beta's commit announced ahead of gamma, so gamma carries it and its landing push deletes beta's announcement: a push that needs the lock. */
  async function carryNeedingTheLock(race: Awaited<ReturnType<typeof afterAlphaLanded>>): Promise<void> {
    await writeCluster(race.beta, 'beta', passTrailers('run-b', 'beta'));
    await announce(race.beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
    await writeCluster(race.gamma, 'gamma', passTrailers('run-c', 'gamma'));
  }

  it('sends a landing push again when another push held the packed-refs lock, without counting it as overtaken', async () => {
    const race = await afterAlphaLanded('busy-lock.git', noLockWait);
    const { bare, events, gamma } = race;
    try {
      await carryNeedingTheLock(race);
      await holdPackedRefs(bare);
      // One attempt only: a refusal for the lock counted as a lost race would end the push.
      const pushing = gamma.push({ maxAttempts: 1 });
      while (!events.some((e) => e['push'] === 'busy')) await new Promise((resolve) => setTimeout(resolve, 5));
      await rm(join(bare, 'packed-refs.lock'));
      const landed = await pushing;
      assert.equal(landed.attempts, 1);
      const ids = (await git(bare, 'log', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main')).split('\n');
      assert.deepEqual(ids.slice(0, 3), ['run-b', 'run-c', 'run-a'], 'gamma landed, carrying beta');
      assert.deepEqual(await queueRefs(bare), []);
      assert.ok(!events.some((e) => e['push'] === 'lost'), 'no push was counted as lost');
    } finally {
      await race.dispose();
    }
  });

  it('names the packed-refs lock when it stays taken, and lands nothing', async () => {
    const race = await afterAlphaLanded('stuck-lock.git', noLockWait);
    const { bare, events, gamma } = race;
    try {
      await carryNeedingTheLock(race);
      const before = await git(bare, 'rev-parse', 'main');
      await holdPackedRefs(bare);
      await assert.rejects(gamma.push({ maxAttempts: 2 }), (error: Error) => {
        assert.equal(error.name, 'UnavailableError');
        assert.match(error.message, /packed-refs lock stayed taken through 9 pushes to main/);
        return true;
      });
      assert.equal(events.filter((e) => e['push'] === 'busy').length, 8, 'four pauses per attempt it may make');
      assert.equal(await git(bare, 'rev-parse', 'main'), before, 'nothing landed');
    } finally {
      await rm(join(bare, 'packed-refs.lock'), { force: true });
      await race.dispose();
    }
  });

  it('lands a commit whose announcement another run deleted without carrying it', async () => {
    const race = await afterAlphaLanded('vanished.git');
    const { bare, events, beta } = race;
    try {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      let deleted = false;
      // The branch moved past beta's base, so it announces, then carries itself. Just before its landing
      // push, its announcement disappears, as when a carrier refuses it.
      const landed = await beta.push({
        maxAttempts: 2,
        afterRebase: async () => {
          if (deleted) return;
          const [ref = ''] = await queueRefs(bare);
          assert.match(ref, /^refs\/scaffold-queue\/main\/run-b--infrastructure--/);
          await git(bare, 'update-ref', '-d', ref);
          deleted = true;
        },
      });
      assert.ok(deleted);
      assert.equal(landed.sha, await git(bare, 'rev-parse', 'main'));
      assert.equal(
        await git(bare, 'rev-parse', 'main:clusters/beta/kustomization.yaml'),
        await git(beta.dir, 'rev-parse', 'HEAD:clusters/beta/kustomization.yaml'),
      );
      assert.ok(
        events.some((e) => e['push'] === 'unannounced'),
        'the run said its announcement was gone',
      );
      assert.deepEqual(await queueRefs(bare), []);
    } finally {
      await race.dispose();
    }
  });

  it('leaves, and does not delete, an announcement whose fence it cannot see', async () => {
    const race = await afterAlphaLanded('no-fence.git');
    const { bare, events, beta, gamma } = race;
    try {
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      const ref = await announce(beta, passTrailers('run-b', 'beta'), { issuedAt: aheadOfCarrier() });
      // As a fetch that read the fences just before the push that made both saw it.
      await git(bare, 'update-ref', '-d', fenceRef('main', { cluster: 'beta', attempt: 1, id: 'run-b' }));
      await writeCluster(gamma, 'gamma', passTrailers('run-c', 'gamma'));
      await gamma.push();
      assert.equal(await git(bare, 'ls-tree', '--name-only', 'main', 'clusters/beta'), '', 'not carried');
      assert.deepEqual(await queueRefs(bare), [ref], 'not deleted: its owner may still land it');
      assert.deepEqual(refusedBy(events), {});
    } finally {
      await race.dispose();
    }
  });

  it("recognizes a run's landed commit by its MAC, not by a Scaffold-Id anyone can write", async () => {
    const race = await afterAlphaLanded('landed-mac.git');
    const { repo, bare, beta } = race;
    try {
      const real = await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      const landed = await beta.push();
      // Planted straight on main by someone who may push: the run's trailers, a MAC made up.
      await writeFile(join(beta.dir, 'clusters/beta/kustomization.yaml'), 'resources: [planted]\n');
      await git(beta.dir, 'add', 'clusters/beta');
      await git(
        beta.dir,
        '-c',
        `user.name=x`,
        '-c',
        'user.email=x@example.invalid',
        'commit',
        '--quiet',
        '-m',
        'planted',
        '--trailer',
        'Scaffold-Id: run-b',
        '--trailer',
        'Scaffold-Pass: all',
        '--trailer',
        'Scaffold-Cluster: beta',
        '--trailer',
        `Scaffold-Mac: ${'0'.repeat(64)}`,
      );
      await git(beta.dir, 'push', '--quiet', 'origin', 'HEAD:main');
      assert.equal(await git(bare, 'log', '-1', '--format=%s', 'main'), 'planted');
      assert.notEqual(landed.sha, real, 'rebased onto alpha');

      const read = await readLandedCommits({
        repositoryUrl: daemon.url(repo),
        branch: 'main',
        runId: 'run-b',
        attempt: 1,
        cluster: 'beta',
        queueKey: KEY,
        scratchDir: scratch,
      });
      assert.deepEqual(read, [{ pass: 'infrastructure', sha: landed.sha }], 'only the commit the run signed is its');
      const otherAttempt = await readLandedCommits({
        repositoryUrl: daemon.url(repo),
        branch: 'main',
        runId: 'run-b',
        attempt: 2,
        cluster: 'beta',
        queueKey: KEY,
        scratchDir: scratch,
      });
      assert.deepEqual(otherAttempt, [], "another attempt's MAC is not this one's");
    } finally {
      await race.dispose();
    }
  });

  it('recording a run as lost withdraws its announcements first, so no later push carries its commit', async () => {
    const race = await afterAlphaLanded('fence.git');
    const { repo, bare, beta: dead, gamma: carrier } = race;
    try {
      // beta's runner announced its commit and was killed.
      await writeCluster(dead, 'beta', passTrailers('run-dead', 'beta'));
      await announce(dead, passTrailers('run-dead', 'beta'));
      assert.deepEqual(
        await readLandedCommits({
          repositoryUrl: daemon.url(repo),
          branch: 'main',
          runId: 'run-dead',
          attempt: 1,
          cluster: 'beta',
          queueKey: KEY,
          scratchDir: scratch,
        }),
        [],
      );
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
      await announce(queued, passTrailers('run-q', 'beta'), { issuedAt: aheadOfCarrier() });
      await carrier.push();
      assert.ok(
        events.some((e) => e['push'] === 'lost' && e['queued'] === false),
        'the carrier fell back to racing alone',
      );
      assert.equal(
        await git(bare, 'log', '-1', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main'),
        'run-c',
        'nothing was carried without an atomic push',
      );
      assert.deepEqual(
        (await queueRefs(bare)).map((ref) => ref.split('--').slice(0, 2).join('--')),
        ['refs/scaffold-queue/main/run-q--infrastructure'],
        'the carrier withdrew only its own announcement',
      );
      // The announced run lands its own commit.
      await queued.push();
      assert.equal(await git(bare, 'rev-list', '--count', 'main'), '4');
      assert.equal(await git(bare, 'rev-list', '--merges', 'main'), '');
    } finally {
      await race.dispose();
    }
  });

  /** Resolves once `bare` holds an announcement of run `id`; its ref. */
  const announced = (bare: string, id: string): Promise<string> =>
    eventually(`run ${id} to announce`, async () => (await queueRefs(bare)).find((ref) => ref.startsWith(`refs/scaffold-queue/main/${id}--`)), 10_000);

  /**
   * beta lost its race to alpha and waits behind run-z, an authentic announcement (of gamma's cluster)
   * issued before its own; `whileWaiting` runs once beta's announcement is up,
   * and beta's push is awaited. Beta's git commands are its own remote's.
   */
  async function waitBehind(name: string, whileWaiting: (race: { bare: string; first: GitWorkspace; zetaRef: string }) => Promise<void>) {
    const race = await afterAlphaLanded(name);
    const { bare, first, gamma: zeta } = race;
    const waiter = recorder();
    const beta = await cloneFor(new CliGitRemote({ backoff: { baseMs: 5, maxMs: 50 }, logger: waiter.logger, queueAuth: AUTH }), race.repo, 'beta');
    try {
      await writeCluster(zeta, 'gamma', passTrailers('run-z', 'gamma'));
      const zetaRef = await announce(zeta, passTrailers('run-z', 'gamma'), { issuedAt: Date.now() - 1_000 });
      await writeCluster(beta, 'beta', passTrailers('run-b', 'beta'));
      const started = Date.now();
      const pushed = beta.push();
      await announced(bare, 'run-b');
      await whileWaiting({ bare, first, zetaRef });
      const landed = await pushed;
      const commands = waiter.events.filter((e) => e['message'] === 'git').map((e) => String(e['git']));
      return { landed, commands, ms: Date.now() - started, bare };
    } finally {
      await Promise.all([race.dispose(), beta.dispose()]);
    }
  }

  it('a waiting run does not fetch while its announcement stands, however the branch moves: once, when it is its turn', async () => {
    const { landed, commands, bare } = await waitBehind('quiet-wait.git', async ({ bare, first, zetaRef }) => {
      // The branch moves under it (a commit that is no scaffold pass), and the run looks several times.
      await mkdir(join(first.dir, 'clusters', 'alpha'), { recursive: true });
      await writeFile(join(first.dir, 'clusters', 'alpha', 'notes.yaml'), 'moved: true\n');
      await first.commit({ paths: ['clusters/alpha'], message: 'Unrelated change', trailers: {}, author: AUTHOR });
      await first.push();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      // zeta gives up: beta is first in line and carries itself.
      await git(bare, 'update-ref', '-d', zetaRef);
    });
    assert.equal(landed.sha, await git(bare, 'rev-parse', 'main'));
    assert.equal(await git(bare, 'log', '-1', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main'), 'run-b');
    assert.ok(commands.filter((c) => c === 'ls-remote').length >= 4, `it looked while it waited: ${commands.join(' ')}`);
    assert.deepEqual(
      commands.filter((c) => c === 'fetch'),
      ['fetch'],
      `one fetch, at its turn: ${commands.join(' ')}`,
    );
  });

  /** beta waits behind run-z; a carrier lands beta's announced commit (a copy on the same parent, its trailers kept) and deletes the announcement in one atomic push. */
  async function carriedWhileWaiting(name: string, committerDate: (announced: string, carrier: string) => Promise<string>) {
    return waitBehind(name, async ({ bare }) => {
      const ref = await announced(bare, 'run-b');
      const carrier = join(scratch, `carrier-${++counter}`);
      await runGit(['clone', '--quiet', daemon.url(basename(bare)), carrier], { cwd: scratch });
      await git(carrier, 'fetch', '--quiet', 'origin', `${ref}:refs/carry`);
      const env = { GIT_COMMITTER_NAME: AUTHOR.name, GIT_COMMITTER_EMAIL: AUTHOR.email, GIT_COMMITTER_DATE: await committerDate('refs/carry', carrier) };
      await runGit(['cherry-pick', '--allow-empty', 'refs/carry'], { cwd: carrier, env });
      await git(carrier, 'push', '--quiet', '--atomic', 'origin', 'HEAD:main', `:${ref}`);
    });
  }

  it('a waiting run that was carried fetches only the branch to find its commit there', async () => {
    const { landed, commands, bare } = await carriedWhileWaiting('carried-wait.git', async () => '2001-01-01T00:00:00Z');
    assert.equal(await git(bare, 'log', '-1', '--format=%cI %(trailers:key=Scaffold-Id,valueonly,separator=)', 'main'), '2001-01-01T00:00:00+00:00 run-b');
    assert.equal(landed.sha, await git(bare, 'rev-parse', 'main'));
    assert.deepEqual(
      commands.filter((c) => c === 'fetch'),
      ['fetch'],
      `one fetch, once its announcement was gone: ${commands.join(' ')}`,
    );
    assert.ok(!commands.includes('for-each-ref'), `the queue was not read: ${commands.join(' ')}`);
    // The refs the fetch wrote are read from their files, and the run's own commit comes with the landed ones in one log.
    assert.deepEqual(commands.slice(commands.lastIndexOf('fetch')), ['fetch', 'log', 'cat-file', 'reset'], commands.join(' '));
    assert.ok(!commands.includes('rev-parse'), `no ref asked of git: ${commands.join(' ')}`);
  });

  it('a waiting run finds its commit landed when a carrier recreated the very same commit', async () => {
    // Same parent, same committer, same second: the carried copy is the announced commit itself.
    const { landed, commands, bare } = await carriedWhileWaiting('carried-same.git', (rev, carrier) => git(carrier, 'log', '-1', '--format=%cI', rev));
    const tip = await git(bare, 'rev-parse', 'main');
    assert.equal(landed.sha, tip);
    assert.equal(
      await git(bare, 'log', '-1', '--format=%(trailers:key=Scaffold-Id,valueonly,separator=)', 'main'),
      'run-b',
      'landed once, nothing carried after it',
    );
    assert.deepEqual(
      commands.filter((c) => c === 'fetch'),
      ['fetch'],
      `one fetch: ${commands.join(' ')}`,
    );
  });

  it('planted announcements ahead of a waiting run hold it back for one carrier patience at most', async () => {
    const { landed, ms, bare } = await waitBehind('planted-ahead.git', async ({ bare, zetaRef }) => {
      // Someone without the key plants three announcements issued before beta's, then run-z gives up.
      const tip = await git(bare, 'rev-parse', 'main');
      for (let i = 0; i < 3; i++) {
        const name = { id: `run-p${i}`, pass: 'infrastructure', attempt: 1, issuedAt: Date.now() - 5_000 + i, mac: 'f'.repeat(64) };
        await git(bare, 'update-ref', queueRef('main', name), tip);
      }
      await git(bare, 'update-ref', '-d', zetaRef);
    });
    assert.equal(landed.sha, await git(bare, 'rev-parse', 'main'));
    // Counted as three places ahead, it would wait three patiences (30 s) before carrying; read once, they count for nothing.
    assert.ok(ms < 20_000, `landed after ${ms} ms`);
    assert.deepEqual(await queueRefs(bare), [], 'its landing push deleted what was planted');
  });
});
