/**
 * A run attempt's fence against a real git daemon on loopback: once the
 * service closed it (as it does before it records a run whose runner died),
 * nothing of the attempt lands any more: not a push that starts after the
 * fence was closed, not an announcement of a runner that moved the fence
 * before. The runner reads a fence that is not where it left it as closed.
 * And a run's place in the landing queue counts only announcements a holder
 * of the key made.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GitDaemon, createBareRepository, startGitDaemon } from '../../test/support/git-server.js';
import { git } from '../../test/support/git.js';
import type { Logger } from '../logger.js';
import type { PushingWorkspace } from './branch-push.js';
import { CliGitRemote } from './cli-git-remote.js';
import { runGit } from './git-process.js';
import { readLandedCommits } from './landed-commits.js';
import { type PassTrailers, type QueueGit, type QueuedCommit, QueueSightings } from './landing-queue.js';
import { Announcement } from './queue-announcement.js';
import type { QueueAuth } from './queue-auth.js';
import { AttemptFence, type FenceOwner, FencedError, fenceCommit, fenceRef } from './attempt-fence.js';

const AUTHOR = { name: 'Scaffold Bot', email: 'bot@example.invalid' };
/** The key the service shares with its runners in these tests. */
const KEY = Buffer.from('0123456789abcdef'.repeat(4));
const AUTH: QueueAuth = { key: KEY, shared: true, attempt: 1 };
const TRAILERS: PassTrailers = { id: 'run-b', pass: 'infrastructure', cluster: 'beta', reference: 'development' };
const OWNER: FenceOwner = { cluster: 'beta', attempt: 1, id: 'run-b' };
const FENCE = fenceRef('main', OWNER);

function recorder(): { logger: Logger; events: Record<string, unknown>[] } {
  const events: Record<string, unknown>[] = [];
  const record = (fields: Record<string, unknown>, message: string) => void events.push({ ...fields, message });
  const logger: Logger = { debug: record, info: record, warn: record, error: record, child: () => logger };
  return { logger, events };
}

describe('attempt fence', () => {
  let scratch: string;
  let served: string;
  let daemon: GitDaemon;
  let counter = 0;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gs-fence-'));
    served = join(scratch, 'served');
    await createBareRepository(join(served, 'seed.git'), {
      seed: async (work) => {
        await mkdir(join(work, 'clusters/development'), { recursive: true });
        await writeFile(join(work, 'clusters/development/kustomization.yaml'), 'resources: []\n');
      },
    });
    daemon = await startGitDaemon({ baseDir: served });
  });

  after(async () => {
    await daemon?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  async function freshRepo(name: string): Promise<{ repo: string; bare: string }> {
    await runGit(['clone', '--quiet', '--bare', join(served, 'seed.git'), join(served, name)], { cwd: served });
    return { repo: name, bare: join(served, name) };
  }

  /** A plain clone of `repo`, and its git as the queue calls it. */
  async function plainClone(repo: string): Promise<{ dir: string; queueGit: QueueGit }> {
    const dir = join(scratch, `work-${++counter}`);
    await runGit(['clone', '--quiet', daemon.url(repo), dir], { cwd: scratch });
    const queueGit: QueueGit = {
      git: (args, call) =>
        runGit(args, {
          cwd: dir,
          ...(call?.input === undefined ? {} : { input: call.input }),
          ...(call?.env ? { env: call.env } : {}),
          ...(call?.okExitCodes ? { okExitCodes: call.okExitCodes } : {}),
          ...(call?.signal ? { signal: call.signal } : {}),
        }),
    };
    return { dir, queueGit };
  }

  /** Records the run as the service does after its runner died: closes the attempt's fence and withdraws its announcements. */
  const closeAsTheService = (repo: string) =>
    readLandedCommits({ repositoryUrl: daemon.url(repo), branch: 'main', runId: 'run-b', attempt: 1, cluster: 'beta', queueKey: KEY, scratchDir: scratch });

  /** The fence's value on the remote and its commit's subject; undefined when it has none. */
  async function remoteFence(bare: string): Promise<{ sha: string; subject: string } | undefined> {
    const listed = await git(bare, 'for-each-ref', '--format=%(objectname) %(contents:subject)', FENCE);
    if (listed === '') return undefined;
    const [sha = '', ...subject] = listed.split(' ');
    return { sha, subject: subject.join(' ') };
  }

  const queueRefs = async (bare: string) => (await git(bare, 'for-each-ref', '--format=%(refname)', 'refs/scaffold-queue/')).split('\n').filter(Boolean);

  /** Commits a change of clusters/beta with run-b's pass trailers in `dir`. */
  async function passCommit(dir: string, content: string): Promise<string> {
    await mkdir(join(dir, 'clusters/beta'), { recursive: true });
    await writeFile(join(dir, 'clusters/beta/kustomization.yaml'), content);
    await git(dir, 'add', 'clusters/beta');
    const trailers = ['Scaffold-Id: run-b', 'Scaffold-Pass: infrastructure', 'Scaffold-Cluster: beta', 'Scaffold-Reference: development'];
    await git(dir, 'commit', '--quiet', '--no-verify', '-m', 'Scaffold beta', ...trailers.flatMap((trailer) => ['--trailer', trailer]));
    return git(dir, 'rev-parse', 'HEAD');
  }

  it('a push of an attempt the service fenced before the push started lands nothing, and leaves the fence closed', async () => {
    const { repo, bare } = await freshRepo('closed-first.git');
    const { logger } = recorder();
    const remote = new CliGitRemote({ backoff: { baseMs: 5, maxMs: 50 }, logger, queueAuth: AUTH });
    const ws = await remote.clone({ url: daemon.url(repo), branch: 'main', dir: join(scratch, `work-${++counter}`), sparsePaths: ['clusters/beta'] });
    try {
      await mkdir(join(ws.dir, 'clusters/beta'), { recursive: true });
      await writeFile(join(ws.dir, 'clusters/beta/kustomization.yaml'), 'resources: []\n');
      const trailers = { 'Scaffold-Id': 'run-b', 'Scaffold-Pass': 'infrastructure', 'Scaffold-Cluster': 'beta', 'Scaffold-Reference': 'development' };
      await ws.commit({ paths: ['clusters/beta'], message: 'Scaffold beta', trailers, author: AUTHOR });
      const main = await git(bare, 'rev-parse', 'main');
      await closeAsTheService(repo);
      const closed = await remoteFence(bare);
      assert.equal(closed?.subject, 'closed run-b 1');

      // The branch has not moved past the run's base: the push would land at once, but for the fence.
      await assert.rejects(ws.push(), FencedError);
      assert.equal(await git(bare, 'rev-parse', 'main'), main, 'the branch did not move');
      assert.deepEqual(await remoteFence(bare), closed, 'the fence is still closed');
      assert.deepEqual(await queueRefs(bare), []);
    } finally {
      await ws.dispose();
    }
    assert.equal((await remoteFence(bare))?.subject, 'closed run-b 1', 'the end of the run does not remove a closed fence');
  });

  it('reads a closed fence as closed and an open one as open, from its own look or from the push listing', async () => {
    const { repo, bare } = await freshRepo('start.git');
    const { dir, queueGit } = await plainClone(repo);
    const setFence = (sha: string) => git(dir, 'push', '--quiet', 'origin', `+${sha}:${FENCE}`);

    // No fence yet: the first move creates it (leased: it must not exist).
    const fresh = new AttemptFence(FENCE, OWNER);
    await fresh.startFrom(queueGit, undefined);
    assert.deepEqual((await fresh.move(queueGit)).args, [`--force-with-lease=${FENCE}:`]);

    // An open fence another process of the attempt left: taken over, so the first move is leased on it.
    const open = await fenceCommit(queueGit, 'open', OWNER, undefined);
    await setFence(open);
    const fromListing = new AttemptFence(FENCE, OWNER);
    await fromListing.startFrom(queueGit, open);
    assert.deepEqual((await fromListing.move(queueGit)).args, [`--force-with-lease=${FENCE}:${open}`]);
    const ownLook = new AttemptFence(FENCE, OWNER);
    assert.deepEqual((await ownLook.move(queueGit)).args, [`--force-with-lease=${FENCE}:${open}`]);

    // Closed by the service: no move at all.
    await closeAsTheService(repo);
    const closed = (await remoteFence(bare))!.sha;
    const closedFromListing = new AttemptFence(FENCE, OWNER);
    await closedFromListing.startFrom(queueGit, closed);
    assert.ok(closedFromListing.started);
    await assert.rejects(closedFromListing.move(queueGit), FencedError);
    await assert.rejects(new AttemptFence(FENCE, OWNER).move(queueGit), FencedError);

    // A fence of another attempt (or run) under this ref name is no open fence of this one either.
    const other = await fenceCommit(queueGit, 'open', { ...OWNER, attempt: 2 }, undefined);
    await setFence(other);
    await assert.rejects(new AttemptFence(FENCE, OWNER).move(queueGit), FencedError);
  });

  /** A run's workspace as its push sees it, on a plain clone: what an Announcement needs. */
  function pushingWorkspace(dir: string, queueGit: QueueGit, fence: AttemptFence): PushingWorkspace {
    const { logger } = recorder();
    return {
      ...queueGit,
      dir,
      branch: 'main',
      logger,
      backoff: { baseMs: 5, maxMs: 50 },
      committer: () => AUTHOR,
      head: async () => git(dir, 'rev-parse', 'HEAD'),
      fail: (args) => new Error(`git ${args.join(' ')} failed`),
      auth: AUTH,
      sightings: new QueueSightings(),
      attemptFence: () => fence,
    };
  }

  /**
   * A runner announced its commit (moving the fence), then `interfere` moved
   * its fence on the remote; its announcement gone, it announces a new head.
   */
  async function announceAfter(name: string, interfere: (repo: string, bare: string) => Promise<void>) {
    const { repo, bare } = await freshRepo(name);
    const { dir, queueGit } = await plainClone(repo);
    const fence = new AttemptFence(FENCE, OWNER);
    const own = new Announcement(pushingWorkspace(dir, queueGit, fence), TRAILERS, fence);
    await passCommit(dir, 'resources: [first]\n');
    await own.announce(await git(dir, 'rev-parse', 'HEAD'), undefined);
    const first = own.ref;
    assert.ok(first !== undefined);
    assert.deepEqual(await queueRefs(bare), [first], 'announced');
    assert.equal((await remoteFence(bare))?.subject, 'open run-b 1', 'the announcing push opened the fence');
    await interfere(repo, bare);
    const fenceBefore = await remoteFence(bare);
    const queueBefore = await queueRefs(bare);
    // As the run does when its announcement disappeared: forgotten, then announced again with its next head.
    own.gone();
    await passCommit(dir, 'resources: [second]\n');
    const error = await own.announce(await git(dir, 'rev-parse', 'HEAD'), undefined).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    return { error, fenceBefore, fenceAfter: await remoteFence(bare), queueBefore, queueAfter: await queueRefs(bare), own };
  }

  it('an announcement after the service closed the fence fails fenced, announces nothing and leaves the fence closed', async () => {
    const outcome = await announceAfter('announce-closed.git', (repo) => closeAsTheService(repo).then(() => undefined));
    assert.ok(outcome.error instanceof FencedError, `fenced, not ${String(outcome.error)}`);
    assert.equal(outcome.fenceBefore?.subject, 'closed run-b 1');
    assert.deepEqual(outcome.fenceAfter, outcome.fenceBefore, 'the fence is still closed');
    assert.deepEqual(outcome.queueBefore, [], 'the service withdrew the announcement');
    assert.deepEqual(outcome.queueAfter, [], 'no new queue ref');
    assert.equal(outcome.own.ref, undefined);
  });

  it('an announcement after its fence disappeared fails fenced and does not make the fence again', async () => {
    const outcome = await announceAfter('announce-gone.git', (_, bare) => git(bare, 'update-ref', '-d', FENCE).then(() => undefined));
    assert.ok(outcome.error instanceof FencedError, `fenced, not ${String(outcome.error)}`);
    assert.equal(outcome.fenceBefore, undefined);
    assert.equal(outcome.fenceAfter, undefined, 'no fence was made under no lease');
    assert.equal(outcome.queueBefore.length, 1);
    assert.deepEqual(outcome.queueAfter, outcome.queueBefore, 'no new queue ref');
  });

  it("a run's place in the queue counts only authenticated announcements ahead of it", async () => {
    const { repo } = await freshRepo('place.git');
    const { dir, queueGit } = await plainClone(repo);
    const fence = new AttemptFence(FENCE, OWNER);
    const own = new Announcement(pushingWorkspace(dir, queueGit, fence), TRAILERS, fence);
    const head = await passCommit(dir, 'resources: []\n');
    await own.announce(head, undefined);
    const now = Date.now();
    const entry = (ref: string, issuedAt: number, authentic: boolean): QueuedCommit => ({
      ...TRAILERS,
      ref,
      sha: head,
      parents: [],
      tree: '',
      attempt: 1,
      issuedAt,
      authentic,
      author: AUTHOR,
      authorDate: '0 +0000',
      message: '',
    });
    const mine = entry(own.ref!, now, true);
    // Planted ahead of it by someone who may push refs but holds no key.
    const planted = Array.from({ length: 5 }, (_, i) => entry(`refs/scaffold-queue/main/planted-${i}`, now - 10_000 + i, false));
    assert.equal(own.place([...planted, mine]), 0, 'planted announcements hold no place ahead of it');
    assert.equal(own.mayCarry([...planted, mine], { movedAt: now, moves: 0 }), true, 'first in line, it carries at once');
    const authentic = Array.from({ length: 2 }, (_, i) => entry(`refs/scaffold-queue/main/authentic-${i}`, now - 5_000 + i, true));
    assert.equal(own.place([...planted, ...authentic, mine]), 2, 'authenticated ones ahead of it count');
    assert.equal(own.place(planted), -1, 'not in the queue');
    await own.withdraw();
  });
});
