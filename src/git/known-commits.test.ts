import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBareRepository } from '../../test/support/git-server.js';
import { gitSync } from '../../test/support/git.js';
import { CliGitRemote } from './cli-git-remote.js';
import { headFromFiles, refFromFiles } from './known-commits.js';
import { queuePollWindow } from './branch-push.js';
import type { Logger } from '../logger.js';
import { ensureSeededBareRepository } from './seed-repository.js';
import { platformDir } from '../package-paths.js';
import { readFile } from 'node:fs/promises';

const git = (cwd: string, ...args: string[]): string => gitSync(cwd, ...args).trim();
const AUTHOR = { name: 'Scaffold Bot', email: 'bot@example.invalid' };

/** A logger that keeps the git subcommands the workspace ran, in order. */
function gitLog(commands: string[]): Logger {
  const logger: Logger = {
    debug: (fields) => {
      if (typeof fields['git'] === 'string') commands.push(fields['git']);
    },
    info: () => {},
    warn: () => {},
    error: () => {},
    child: () => logger,
  };
  return logger;
}

describe('known commits', () => {
  let tmp: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'gs-known-commits-'));
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('reads HEAD from the ref files as git does, and leaves to git what it cannot read that way', async () => {
    const repo = join(tmp, 'repo');
    await mkdir(repo);
    git(repo, 'init', '--quiet', '--initial-branch=main');
    // Unborn: no answer from the files, and none from git either.
    assert.equal(await headFromFiles(repo), undefined);
    await writeFile(join(repo, 'a'), 'a\n');
    git(repo, 'add', 'a');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-m', 'one');
    assert.equal(await headFromFiles(repo), git(repo, 'rev-parse', 'HEAD'));
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '--allow-empty', '-m', 'two');
    assert.equal(await headFromFiles(repo), git(repo, 'rev-parse', 'HEAD'));
    git(repo, 'checkout', '--quiet', '--detach', 'HEAD^');
    assert.equal(await headFromFiles(repo), git(repo, 'rev-parse', 'HEAD'));
    git(repo, 'checkout', '--quiet', 'main');
    // A packed branch has no loose ref: the caller asks git.
    git(repo, 'pack-refs', '--all', '--prune');
    assert.equal(await headFromFiles(repo), undefined);
    assert.equal(await headFromFiles(join(tmp, 'no-such-dir')), undefined);
  });

  it('reads a ref as git does, loose or packed, says when there is none, and leaves to git what the files do not say', async () => {
    const repo = join(tmp, 'refs');
    await mkdir(repo);
    git(repo, 'init', '--quiet', '--initial-branch=main');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '--allow-empty', '-m', 'one');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '--allow-empty', '-m', 'two');
    const gitDir = join(repo, '.git');
    const [one, two] = [git(repo, 'rev-parse', 'HEAD^'), git(repo, 'rev-parse', 'HEAD')];
    const asGit = (ref: string) => {
      try {
        return gitSync(repo, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`).trim();
      } catch {
        return null; // --quiet: exit 1 and nothing said for a ref that does not exist
      }
    };
    git(repo, 'update-ref', 'refs/remotes/origin/main', one);
    git(repo, 'update-ref', 'refs/scaffold-queue/main/run-1--infrastructure--1--1700000000000--abc', two);
    for (const ref of ['refs/remotes/origin/main', 'refs/scaffold-queue/main/run-1--infrastructure--1--1700000000000--abc'])
      assert.equal(await refFromFiles(gitDir, ref), asGit(ref));
    // Packed, then a loose ref over the packed one (a fetch after the clone): the loose one wins, as in git.
    git(repo, 'pack-refs', '--all', '--prune');
    assert.equal(await refFromFiles(gitDir, 'refs/remotes/origin/main'), one);
    git(repo, 'update-ref', 'refs/remotes/origin/main', two);
    assert.equal(await refFromFiles(gitDir, 'refs/remotes/origin/main'), asGit('refs/remotes/origin/main'));
    assert.equal(await refFromFiles(gitDir, 'refs/remotes/origin/main'), two);
    // None: null, where git finds none either.
    assert.equal(await refFromFiles(gitDir, 'refs/remotes/origin/gone'), null);
    assert.equal(asGit('refs/remotes/origin/gone'), null);
    // A symbolic ref, a directory, a name that walks out of the git directory: git decides.
    git(repo, 'symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/main');
    assert.equal(await refFromFiles(gitDir, 'refs/remotes/origin/HEAD'), undefined);
    assert.equal(await refFromFiles(gitDir, 'refs/remotes/origin'), undefined);
    assert.equal(await refFromFiles(gitDir, 'refs/../HEAD'), undefined);
    assert.equal(await refFromFiles(join(tmp, 'no-such-dir'), 'refs/remotes/origin/main'), null);
  });

  it('commits and pushes a pass without asking git what the commit just told it', async () => {
    const served = join(tmp, 'served.git');
    await createBareRepository(served, {
      seed: async (work) => {
        await mkdir(join(work, 'base'), { recursive: true });
        await writeFile(join(work, 'base', 'kustomization.yaml'), 'resources: []\n');
      },
    });
    const commands: string[] = [];
    const remote = new CliGitRemote({ logger: gitLog(commands) });
    const ws = await remote.clone({ url: served, branch: 'main', dir: join(tmp, 'work'), sparsePaths: ['base', 'clusters/new'] });
    try {
      const trailers = { 'Scaffold-Id': 'run-1', 'Scaffold-Pass': 'infrastructure', 'Scaffold-Cluster': 'new', 'Scaffold-Reference': 'development' };
      for (const [i, pass] of ['infrastructure', 'all'].entries()) {
        await mkdir(join(ws.dir, 'clusters', 'new'), { recursive: true });
        await writeFile(join(ws.dir, 'clusters', 'new', `${pass}.yaml`), `pass: ${pass}\n`);
        commands.length = 0;
        const sha = await ws.commit({
          message: `Scaffold new: ${pass}`,
          author: AUTHOR,
          paths: ['clusters/new'],
          trailers: { ...trailers, 'Scaffold-Pass': pass },
        });
        assert.equal(sha, git(ws.dir, 'rev-parse', 'HEAD'));
        assert.equal(await ws.head(), sha);
        const pushed = await ws.push();
        assert.equal(pushed.sha, sha);
        assert.equal(git(served, 'rev-parse', 'main'), sha);
        // One read of the commit after it is made; the push asks only the remote (no rev-parse, log or merge-base).
        assert.deepEqual(commands, ['add', 'diff', 'commit', 'log', 'ls-remote', 'push'], `pass ${i + 1}`);
      }
      // Nothing to commit: no commit, as before.
      assert.equal(await ws.commit({ message: 'again', author: AUTHOR, paths: ['clusters/new'], trailers }), undefined);
    } finally {
      await ws.dispose();
    }
  });

  it("renders with git's own platform commit: listed by the clone, kept across the run's own commit, asked again after another one", async () => {
    const served = join(tmp, 'platform.git');
    await ensureSeededBareRepository(served, platformDir());
    const ws = await new CliGitRemote().clone({
      url: served,
      branch: 'main',
      dir: join(tmp, 'render'),
      sparsePaths: ['base', 'clusters/development', 'clusters/new'],
      sparseTopLevelExcept: ['clusters'],
    });
    try {
      const tops = git(ws.dir, 'ls-tree', '--name-only', 'HEAD')
        .split('\n')
        .filter((t) => t !== 'clusters');
      const expected = () => git(ws.dir, 'rev-list', '-1', 'HEAD', '--', ...tops, 'clusters/development');
      const provenance = async () => /platformCommit: (\S+)/.exec(await readFile(join(ws.dir, 'clusters/new/provenance.yaml'), 'utf8'))?.[1];
      const render = () =>
        ws.render({ cluster: { name: 'new', domain: 'new.example.net', region: 'eu-west-1' }, pass: 'infrastructure', generatorVersion: '0.0.0-test' });
      await render();
      assert.equal(await provenance(), expected());
      await ws.commit({ message: 'pass 1', author: AUTHOR, paths: ['clusters/new'], trailers: {} });
      await render();
      assert.equal(await provenance(), expected());
      // A commit that touches the platform: asked again, and the answer moves.
      await writeFile(join(ws.dir, 'base', 'extra.yaml'), 'x: 1\n');
      const touched = await ws.commit({ message: 'platform', author: AUTHOR, paths: ['base'], trailers: {} });
      await render();
      assert.equal(await provenance(), touched);
      assert.equal(expected(), touched);
    } finally {
      await ws.dispose();
    }
  });

  it('a queued run looks less often while nothing changes, never less than every 4 s, and starts over on a change', () => {
    assert.equal(queuePollWindow(0, 0), 250);
    assert.ok(queuePollWindow(0, 1) > queuePollWindow(0, 0));
    assert.ok(queuePollWindow(0, 3) > queuePollWindow(0, 2));
    assert.ok(queuePollWindow(5, 0) > queuePollWindow(0, 0));
    assert.equal(queuePollWindow(0, 50), 4_000);
    assert.equal(queuePollWindow(100, 0), 4_000);
  });
});
