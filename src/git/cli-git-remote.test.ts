import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { AuthenticationError, ConflictError, NotFoundError, UnavailableError, ValidationError, failureOf } from '../errors.js';
import type { GitCredentials, GitWorkspace, PushResult } from '../run/ports.js';
import { type GitDaemon, type GitHttpServer, createBareRepository, startGitDaemon, startGitHttpServer } from '../../test/support/git-server.js';
import { CliGitRemote } from './cli-git-remote.js';
import { runGit } from './git-process.js';
import { withGitObjectReader } from './git-object-reader.js';
import { git } from '../../test/support/git.js';
import { closedPort } from '../../test/support/net.js';

const USER = 'scaffolder';
const PASSWORD = 'pa55-Secret-9f8e7d';
const TOKEN = 'tok-Secret-1a2b3c4d5e';
const BASIC_B64 = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
const TOKEN_B64 = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
const SECRETS = [PASSWORD, TOKEN, BASIC_B64, TOKEN_B64];
const OTHER_CLUSTERS = Array.from({ length: 10 }, (_, i) => `c${String(i + 1).padStart(2, '0')}`);
const SPARSE = ['base', 'clusters/development', 'clusters/new'];
const AUTHOR = { name: 'Scaffold Bot', email: 'bot@example.invalid' };

/** Every file below .git except objects, as text: where a leaked credential would sit. */
async function gitMetadata(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(join(dir, '.git'), { recursive: true, withFileTypes: true })) {
    const full = join(entry.parentPath, entry.name);
    if (!entry.isFile() || relative(join(dir, '.git'), full).startsWith('objects')) continue;
    parts.push(await readFile(full, 'latin1'));
  }
  return parts.join('\n');
}

function assertNoSecret(text: string, where: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `a credential leaked into ${where}`);
}

describe('CliGitRemote', () => {
  let scratch: string;
  let served: string;
  let daemon: GitDaemon;
  let basicServer: GitHttpServer;
  let tokenServer: GitHttpServer;
  /** Blob ids of the other clusters' files, which a sparse partial clone must not download. */
  const otherClusterBlobs = new Set<string>();
  const remote = new CliGitRemote({ backoff: { baseMs: 5, maxMs: 50 } });
  let counter = 0;
  const workdir = () => join(scratch, `work-${++counter}`);

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gs-cli-git-'));
    served = join(scratch, 'served');
    await createBareRepository(join(served, 'platform.git'), {
      seed: async (work) => {
        const files: Record<string, string> = {
          'README.md': 'platform\n',
          'base/infrastructure/kustomization.yaml': 'resources: []\n',
          'base/apps/kustomization.yaml': 'resources: []\n',
          'clusters/development/kustomization.yaml': 'resources: [flux]\n',
          'clusters/development/flux/cluster-config.yaml': 'cluster_name: development\n',
        };
        for (const name of OTHER_CLUSTERS) {
          files[`clusters/${name}/kustomization.yaml`] = `resources: [flux] # ${name}\n`;
          files[`clusters/${name}/flux/cluster-config.yaml`] = `cluster_name: ${name}\n`;
        }
        for (const [path, content] of Object.entries(files)) {
          await mkdir(join(work, path, '..'), { recursive: true });
          await writeFile(join(work, path), content);
        }
      },
    });
    for (const line of (await git(join(served, 'platform.git'), 'ls-tree', '-r', 'main')).split('\n')) {
      const [meta, path] = line.split('\t') as [string, string];
      if (/^clusters\/c\d\d\//.test(path)) otherClusterBlobs.add(meta.split(' ')[2] as string);
    }
    daemon = await startGitDaemon({ baseDir: served });
    basicServer = await startGitHttpServer({ baseDir: served, username: USER, password: PASSWORD });
    tokenServer = await startGitHttpServer({ baseDir: served, username: 'x-access-token', password: TOKEN });
  });

  after(async () => {
    await Promise.all([daemon?.stop(), basicServer?.stop(), tokenServer?.stop()]);
    await rm(scratch, { recursive: true, force: true });
  });

  /** Fresh bare repository copied from the seeded one, so tests that push do not disturb each other. */
  async function freshRepo(name: string): Promise<string> {
    await runGit(['clone', '--quiet', '--bare', join(served, 'platform.git'), join(served, name)], { cwd: served });
    await runGit(['config', 'uploadpack.allowFilter', 'true'], { cwd: join(served, name) });
    await runGit(['config', 'http.receivepack', 'true'], { cwd: join(served, name) });
    return name;
  }

  /** Each workspace commits a file of its own cluster, then both push at once: one lands, the other rebases and lands second. */
  async function commitAndRace(...racers: [GitWorkspace, string][]): Promise<PushResult[]> {
    for (const [ws, name] of racers) {
      await mkdir(join(ws.dir, `clusters/${name}`), { recursive: true });
      await writeFile(join(ws.dir, `clusters/${name}/kustomization.yaml`), `# ${name}\n`);
      assert.ok(await ws.commit({ paths: [`clusters/${name}`], message: `Scaffold ${name}`, trailers: { 'Scaffold-Id': name }, author: AUTHOR }));
    }
    const results = await Promise.all(racers.map(([ws]) => ws.push()));
    assert.deepEqual(
      results.map((r) => r.attempts).sort(),
      racers.map((_, i) => i + 1),
    );
    return results;
  }

  async function assertSparseAndPartial(ws: GitWorkspace): Promise<void> {
    assert.deepEqual((await readdir(join(ws.dir, 'clusters'))).sort(), ['development']);
    assert.deepEqual((await readdir(ws.dir)).sort(), ['.git', 'README.md', 'base', 'clusters']);
    assert.equal(await readFile(join(ws.dir, 'base/apps/kustomization.yaml'), 'utf8'), 'resources: []\n');
    // --missing=print lists what the partial clone never fetched, without fetching it.
    const objects = await git(ws.dir, 'rev-list', '--objects', '--all', '--missing=print');
    const missing = new Set(
      objects
        .split('\n')
        .filter((line) => line.startsWith('?'))
        .map((line) => line.slice(1)),
    );
    assert.deepEqual([...missing].sort(), [...otherClusterBlobs].sort());
  }

  it('clones sparse and partial through git daemon: other clusters are neither on disk nor downloaded', async () => {
    const ws = await remote.clone({ url: daemon.url('platform.git'), branch: 'main', dir: workdir(), sparsePaths: SPARSE });
    try {
      await assertSparseAndPartial(ws);
      assert.equal(await ws.head(), await git(join(served, 'platform.git'), 'rev-parse', 'main'));
      // History is whole (no --depth), and log with a pathspec works on a partial clone.
      assert.equal(await ws.lastCommitTouching(['clusters/c01']), await ws.head());
      assert.equal(await ws.lastCommitTouching(['clusters/never-existed']), undefined);
    } finally {
      await ws.dispose();
    }
    await assert.rejects(access(ws.dir));
  });

  it("turns off git's automatic maintenance in a work clone: no `git maintenance run --auto` after each fetch and commit", async () => {
    const ws = await remote.clone({ url: daemon.url('platform.git'), branch: 'main', dir: workdir(), sparsePaths: SPARSE });
    try {
      // What git reads before it starts the process (run_auto_maintenance), and what gc --auto would read after it.
      assert.equal(await git(ws.dir, 'config', '--get', 'maintenance.auto'), 'false');
      assert.equal(await git(ws.dir, 'config', '--get', 'gc.auto'), '0');
    } finally {
      await ws.dispose();
    }
  });

  it('fetches only the blobs of the files fetchFiles names, writes no file, and refuses patterns beyond names and *', async () => {
    const fetching = (fetchFiles: string[], url = daemon.url('platform.git')) =>
      remote.clone({ url, branch: 'main', dir: workdir(), sparsePaths: [], fetchFiles });
    const fetchedOf = async (ws: GitWorkspace): Promise<string[]> => {
      // --missing=print lists what the partial clone never fetched, without fetching it.
      const missing = new Set(
        (await git(ws.dir, 'rev-list', '--objects', '--all', '--missing=print'))
          .split('\n')
          .filter((line) => line.startsWith('?'))
          .map((line) => line.slice(1)),
      );
      return (await git(ws.dir, 'ls-tree', '-r', 'HEAD'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => line.split('\t') as [string, string])
        .filter(([meta]) => !missing.has(meta.split(' ')[2]!))
        .map(([, path]) => path)
        .sort();
    };
    const kustomizations = ['clusters/development/kustomization.yaml', ...OTHER_CLUSTERS.map((name) => `clusters/${name}/kustomization.yaml`)].sort();
    for (const [globs, expected, url] of [
      [['clusters/*/kustomization.yaml'], kustomizations, daemon.url('platform.git')],
      // A local repository goes through upload-pack as well.
      [['clusters/*/kustomization.yaml'], kustomizations, join(served, 'platform.git')],
      [
        ['README.md', 'clusters/development/flux/cluster-config.yaml'],
        ['README.md', 'clusters/development/flux/cluster-config.yaml'],
        daemon.url('platform.git'),
      ],
      [
        ['*/*/kustomization.yaml'],
        [...kustomizations, 'base/apps/kustomization.yaml', 'base/infrastructure/kustomization.yaml'].sort(),
        daemon.url('platform.git'),
      ],
      [['clusters/*/no-such-file'], [], daemon.url('platform.git')],
    ] as const) {
      const ws = await fetching([...globs], url);
      try {
        assert.deepEqual(await readdir(ws.dir), ['.git'], 'no file written');
        assert.deepEqual(await fetchedOf(ws), expected, `only the named files were downloaded: ${globs.join(' ')}`);
        // Staged, for a reader of the objects, which lists the index.
        assert.deepEqual((await git(ws.dir, 'ls-files')).split('\n').filter(Boolean).sort(), expected);
        assert.equal(
          await withGitObjectReader(ws.dir, (reader) => reader.read(expected[0] ?? 'README.md')),
          expected[0] === undefined ? undefined : await git(ws.dir, 'show', `HEAD:${expected[0]}`).then((text) => `${text}\n`),
        );
        assert.equal(await ws.head(), await git(join(served, 'platform.git'), 'rev-parse', 'main'));
      } finally {
        await ws.dispose();
      }
    }
    for (const pattern of [
      '!clusters/x',
      'clusters/**/kustomization.yaml',
      'clusters/[a-z]*/x',
      '../x',
      '/clusters/x',
      'clusters//x',
      'clusters/x\\y',
      'clusters/a*/x',
    ]) {
      await assert.rejects(fetching([pattern]), ValidationError, pattern);
    }
    await assert.rejects(
      remote.clone({ url: daemon.url('platform.git'), branch: 'main', dir: workdir(), sparsePaths: ['base'], fetchFiles: ['clusters/*/x'] }),
      ValidationError,
    );
  });

  it('clones a local bare repository partially too', async () => {
    const ws = await remote.clone({ url: join(served, 'platform.git'), branch: 'main', dir: workdir(), sparsePaths: SPARSE });
    try {
      await assertSparseAndPartial(ws);
    } finally {
      await ws.dispose();
    }
  });

  it('clones through smart HTTP with basic auth, keeping the credential out of .git, URLs and request paths', async () => {
    const ws = await remote.clone({
      url: basicServer.url('platform.git'),
      branch: 'main',
      dir: workdir(),
      sparsePaths: SPARSE,
      credentials: { kind: 'basic', username: USER, password: PASSWORD },
    });
    try {
      await assertSparseAndPartial(ws);
      const metadata = await gitMetadata(ws.dir);
      assertNoSecret(metadata, '.git');
      assert.doesNotMatch(metadata, /extraheader|authorization/i);
      assert.ok(basicServer.requests.length > 0);
      for (const request of basicServer.requests) {
        assertNoSecret(request.path, 'a request path');
        assert.equal(request.authorization, `Basic ${BASIC_B64}`);
      }
    } finally {
      await ws.dispose();
    }
  });

  it(
    'never puts a credential on a command line (the process list), checked by watching /proc during a clone and a push',
    { skip: process.platform !== 'linux' },
    async () => {
      const repo = await freshRepo('proc.git');
      const seen = new Set<string>();
      const read = new Set<string>();
      let watching = true;
      const watch = (async () => {
        while (watching) {
          // Only processes not read before, so a pass is quick enough to catch short-lived git children.
          const fresh = (await readdir('/proc').catch(() => [] as string[])).filter((pid) => /^\d+$/.test(pid) && !read.has(pid));
          await Promise.all(
            fresh.map(async (pid) => {
              read.add(pid);
              const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
              if (cmdline.includes('git')) seen.add(cmdline.split('\0').join(' '));
            }),
          );
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const credentials = { kind: 'basic', username: USER, password: PASSWORD } as const;
      const ws = await remote.clone({ url: basicServer.url(repo), branch: 'main', dir: workdir(), sparsePaths: SPARSE, credentials });
      try {
        await mkdir(join(ws.dir, 'clusters/new'), { recursive: true });
        await writeFile(join(ws.dir, 'clusters/new/x.yaml'), 'x\n');
        await ws.commit({ paths: ['clusters/new'], message: 'x', trailers: {}, author: AUTHOR });
        await ws.push();
      } finally {
        watching = false;
        await watch;
        await ws.dispose();
      }
      // git-remote-http lives as long as each network operation, so the watcher cannot miss all of them.
      assert.ok(
        [...seen].some((line) => line.includes(repo)),
        `the watcher saw no git process of the test:\n${[...seen].join('\n')}`,
      );
      for (const line of seen) assertNoSecret(line, `the command line ${line}`);
    },
  );

  it('clones through smart HTTP with a token (user name x-access-token unless given)', async () => {
    for (const [server, credentials] of [
      [tokenServer, { kind: 'token', token: TOKEN }],
      [basicServer, { kind: 'token', token: PASSWORD, username: USER }],
    ] as const) {
      const ws = await remote.clone({ url: server.url('platform.git'), branch: 'main', dir: workdir(), sparsePaths: SPARSE, credentials });
      try {
        await assertSparseAndPartial(ws);
        assertNoSecret(await gitMetadata(ws.dir), '.git');
      } finally {
        await ws.dispose();
      }
    }
    for (const request of tokenServer.requests) assertNoSecret(request.path, 'a request path');
  });

  it('fails with AuthenticationError, without the password, when the server refuses the credentials', async () => {
    const wrong = 'wrong-Password-5566';
    const cases: (GitCredentials | undefined)[] = [{ kind: 'basic', username: USER, password: wrong }, undefined];
    for (const credentials of cases) {
      const dir = workdir();
      await assert.rejects(
        remote.clone({ url: basicServer.url('platform.git'), branch: 'main', dir, sparsePaths: SPARSE, ...(credentials ? { credentials } : {}) }),
        (error: unknown) => {
          assert.ok(error instanceof AuthenticationError, String(error));
          assert.ok(!error.message.includes(wrong) && !error.message.includes(Buffer.from(`${USER}:${wrong}`).toString('base64')), error.message);
          assertNoSecret(error.message, 'the error message');
          return true;
        },
      );
      // Nothing is left behind on failure.
      assert.deepEqual(await readdir(dir).catch(() => []), []);
    }
  });

  it('fails with UnavailableError when the remote cannot be reached', async () => {
    const port = await closedPort();
    for (const url of [`git://127.0.0.1:${port}/platform.git`, `http://127.0.0.1:${port}/platform.git`]) {
      await assert.rejects(
        remote.clone({
          url,
          branch: 'main',
          dir: workdir(),
          sparsePaths: SPARSE,
          credentials: url.startsWith('http') ? { kind: 'token', token: TOKEN } : undefined,
        }),
        (error: unknown) => {
          assert.ok(error instanceof UnavailableError, `${url}: ${String(error)}`);
          assertNoSecret(error.message, 'the error message');
          return true;
        },
      );
    }
  });

  it('rejects bad input before touching the network, without echoing credentials', async () => {
    const base = { branch: 'main', sparsePaths: SPARSE };
    await assert.rejects(remote.clone({ ...base, url: `http://${USER}:${PASSWORD}@127.0.0.1:1/platform.git`, dir: workdir() }), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assertNoSecret(error.message, 'the error message');
      return true;
    });
    await assert.rejects(remote.clone({ ...base, url: daemon.url('platform.git'), branch: 'bad..branch', dir: workdir() }), ValidationError);
    await assert.rejects(remote.clone({ ...base, url: daemon.url('platform.git'), branch: '-x', dir: workdir() }), ValidationError);
    await assert.rejects(remote.clone({ ...base, url: daemon.url('platform.git'), sparsePaths: ['../up'], dir: workdir() }), ValidationError);
    const full = workdir();
    await mkdir(full);
    await writeFile(join(full, 'occupied'), '');
    await assert.rejects(remote.clone({ ...base, url: daemon.url('platform.git'), dir: full }), ValidationError);
    assert.deepEqual(await readdir(full), ['occupied']);
    await assert.rejects(remote.clone({ ...base, url: daemon.url('missing.git'), dir: workdir() }), NotFoundError);
  });

  it('commits staged additions and deletions with trailers; a second commit with nothing new returns undefined', async () => {
    const repo = await freshRepo('commit.git');
    const ws = await remote.clone({ url: daemon.url(repo), branch: 'main', dir: workdir(), sparsePaths: SPARSE });
    try {
      const base = await ws.head();
      await mkdir(join(ws.dir, 'clusters/new/flux'), { recursive: true });
      await writeFile(join(ws.dir, 'clusters/new/kustomization.yaml'), 'resources: [flux]\n');
      await writeFile(join(ws.dir, 'clusters/new/flux/cluster-config.yaml'), 'cluster_name: new\n');
      const options = {
        paths: ['clusters/new'],
        message: 'Scaffold cluster new\n\nInfrastructure layer.',
        trailers: { 'Scaffold-Id': 'run-42', 'Scaffold-Pass': 'infrastructure' },
        author: AUTHOR,
      };
      const sha = await ws.commit(options);
      assert.ok(sha && /^[0-9a-f]{40}$/.test(sha));
      assert.equal(await ws.head(), sha);
      assert.equal(await git(ws.dir, 'rev-parse', `${sha}^`), base);
      const body = await git(ws.dir, 'log', '-1', '--format=%B', sha);
      const trailers = (await runGit(['interpret-trailers', '--parse'], { cwd: ws.dir, input: body })).stdout;
      assert.equal(trailers, 'Scaffold-Id: run-42\nScaffold-Pass: infrastructure\n');
      assert.match(body, /^Scaffold cluster new\n\nInfrastructure layer\./);
      assert.equal(
        await git(ws.dir, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', sha),
        'Scaffold Bot <bot@example.invalid>|Scaffold Bot <bot@example.invalid>',
      );
      assert.equal(await ws.lastCommitTouching(['clusters/new']), sha);
      assert.equal(await ws.lastCommitTouching(['clusters/development', 'base']), base);

      assert.equal(await ws.commit(options), undefined);
      // A path that exists neither on disk nor in the index has nothing to stage.
      assert.equal(await ws.commit({ ...options, paths: ['clusters/new', 'clusters/ghost'] }), undefined);

      await unlink(join(ws.dir, 'clusters/new/flux/cluster-config.yaml'));
      const deletion = await ws.commit({ ...options, trailers: {} });
      assert.ok(deletion);
      assert.equal(await git(ws.dir, 'ls-tree', '-r', '--name-only', deletion, '--', 'clusters/new'), 'clusters/new/kustomization.yaml');
      await rm(join(ws.dir, 'clusters/new'), { recursive: true });
      assert.ok(await ws.commit({ ...options, trailers: {} }), 'removing a whole directory is a change');

      const pushed = await ws.push();
      assert.deepEqual(pushed, { sha: await ws.head(), attempts: 1 });
      assert.equal(await git(join(served, repo), 'rev-parse', 'main'), pushed.sha);

      await assert.rejects(ws.commit({ ...options, trailers: { 'Bad Key': 'x' } }), ValidationError);
      await assert.rejects(ws.commit({ ...options, trailers: { 'Scaffold-Id': 'a\nInjected: b' } }), ValidationError);
      await assert.rejects(ws.commit({ ...options, author: { name: 'x <y>', email: 'e@x' } }), ValidationError);
    } finally {
      await ws.dispose();
    }
  });

  it('lands two racing pushes of disjoint changes through fetch + rebase, keeping history linear', async () => {
    const repo = await freshRepo('race.git');
    const [a, b] = (await Promise.all(
      ['alpha', 'beta'].map((name) =>
        remote.clone({ url: daemon.url(repo), branch: 'main', dir: workdir(), sparsePaths: ['base', 'clusters/development', `clusters/${name}`] }),
      ),
    )) as [GitWorkspace, GitWorkspace];
    try {
      const results = await commitAndRace([a, 'alpha'], [b, 'beta']);
      const served_ = join(served, repo);
      const tip = await git(served_, 'rev-parse', 'main');
      assert.ok(results.some((r) => r.sha === tip));
      assert.equal(await git(served_, 'rev-list', '--merges', 'main'), '');
      assert.equal(await git(served_, 'rev-list', '--count', 'main'), '3');
      const files = await git(served_, 'ls-tree', '-r', '--name-only', 'main', '--', 'clusters/alpha', 'clusters/beta');
      assert.deepEqual(files.split('\n'), ['clusters/alpha/kustomization.yaml', 'clusters/beta/kustomization.yaml']);
      // The rebased workspace still shows only its own cluster.
      const loser = results[0]?.attempts === 2 ? a : b;
      assert.deepEqual((await readdir(join(loser.dir, 'clusters'))).sort().length, 2);
    } finally {
      await Promise.all([a.dispose(), b.dispose()]);
    }
  });

  it('keeps the repository in gitDir apart from the work tree: commits, a lost race rebased and pushed, head, orphan branches, and dispose removes both', async () => {
    const repo = await freshRepo('separate.git');
    const separate = (name: string) => ({ dir: workdir(), gitDir: join(scratch, `${name}-${++counter}.git`) });
    const places = [separate('alpha'), separate('beta')];
    const [a, b] = (await Promise.all(
      ['alpha', 'beta'].map((name, i) =>
        remote.clone({ url: daemon.url(repo), branch: 'main', ...places[i]!, sparsePaths: ['base', 'clusters/development', `clusters/${name}`] }),
      ),
    )) as [GitWorkspace, GitWorkspace];
    try {
      // The work tree holds the files and a .git file naming the repository, whose objects are all in gitDir.
      assert.deepEqual((await readdir(a.dir)).sort(), ['.git', 'README.md', 'base', 'clusters']);
      assert.equal(await readFile(join(a.dir, '.git'), 'utf8'), `gitdir: ${places[0]!.gitDir}\n`);
      assert.ok((await readdir(join(places[0]!.gitDir, 'objects'))).includes('pack'));
      const results = await commitAndRace([a, 'alpha'], [b, 'beta']);
      const tip = await git(join(served, repo), 'rev-parse', 'main');
      assert.equal(await git(join(served, repo), 'rev-list', '--count', 'main'), '3');
      const loser = results[0]?.attempts === 2 ? a : b;
      assert.equal(await loser.head(), tip);
      // Rebased onto the other cluster's commit, the work tree still shows only its own cluster and the reference.
      assert.equal((await readdir(join(loser.dir, 'clusters'))).length, 2);
    } finally {
      await Promise.all([a.dispose(), b.dispose()]);
    }
    for (const place of places) {
      await assert.rejects(access(place.dir));
      await assert.rejects(access(place.gitDir));
    }

    await createBareRepository(join(served, 'empty-separate.git'));
    const orphan = separate('orphan');
    const ws = await remote.clone({ url: daemon.url('empty-separate.git'), branch: 'main', ...orphan, sparsePaths: ['clusters/first'] });
    try {
      assert.equal(await readFile(join(ws.dir, '.git'), 'utf8'), `gitdir: ${orphan.gitDir}\n`);
      await mkdir(join(ws.dir, 'clusters/first'), { recursive: true });
      await writeFile(join(ws.dir, 'clusters/first/kustomization.yaml'), 'resources: []\n');
      const sha = await ws.commit({ paths: ['clusters/first'], message: 'first', trailers: { 'Scaffold-Id': '1' }, author: AUTHOR });
      assert.deepEqual(await ws.push(), { sha, attempts: 1 });
      assert.equal(await git(orphan.gitDir, 'rev-parse', 'main'), sha);
    } finally {
      await ws.dispose();
    }
    await assert.rejects(access(orphan.gitDir));
  });

  it('refuses a gitDir inside the work tree, a work tree inside it, or one that is not empty, before cloning', async () => {
    const dir = workdir();
    for (const gitDir of [join(dir, 'nested.git'), dir]) {
      await assert.rejects(remote.clone({ url: daemon.url('platform.git'), branch: 'main', dir, gitDir, sparsePaths: [] }), ValidationError);
    }
    await assert.rejects(
      remote.clone({ url: daemon.url('platform.git'), branch: 'main', dir: join(scratch, 'outer', 'tree'), gitDir: join(scratch, 'outer'), sparsePaths: [] }),
      ValidationError,
    );
    const full = join(scratch, `full-${++counter}.git`);
    await mkdir(full);
    await writeFile(join(full, 'HEAD'), 'ref: refs/heads/main\n');
    await assert.rejects(remote.clone({ url: daemon.url('platform.git'), branch: 'main', dir: workdir(), gitDir: full, sparsePaths: [] }), /gitDir.*not empty/);
    assert.equal(await readFile(join(full, 'HEAD'), 'utf8'), 'ref: refs/heads/main\n');
  });

  it('throws ConflictError and aborts the rebase when a concurrent push changed the same file', async () => {
    const repo = await freshRepo('conflict.git');
    const [a, b] = (await Promise.all([1, 2].map(() => remote.clone({ url: daemon.url(repo), branch: 'main', dir: workdir(), sparsePaths: SPARSE })))) as [
      GitWorkspace,
      GitWorkspace,
    ];
    try {
      for (const [ws, text] of [
        [a, 'first\n'],
        [b, 'second\n'],
      ] as const) {
        await writeFile(join(ws.dir, 'clusters/development/kustomization.yaml'), text);
        await ws.commit({ paths: ['clusters/development'], message: 'edit', trailers: {}, author: AUTHOR });
      }
      await a.push();
      const before = await b.head();
      await assert.rejects(b.push(), (error: unknown) => {
        assert.ok(error instanceof ConflictError, String(error));
        assert.match(error.message, /clusters\/development\/kustomization\.yaml/);
        // A lost race, unlike other conflicts: the run that hits it may be retried.
        assert.deepEqual(failureOf(error), { code: 'conflict', transient: true });
        return true;
      });
      assert.equal(await b.head(), before);
      await assert.rejects(access(join(b.dir, '.git/rebase-merge')));
      assert.equal(await readFile(join(b.dir, 'clusters/development/kustomization.yaml'), 'utf8'), 'second\n');
    } finally {
      await Promise.all([a.dispose(), b.dispose()]);
    }
  });

  it('gives up with UnavailableError after maxAttempts rejected pushes', async () => {
    const repo = await freshRepo('attempts.git');
    const [a, b] = (await Promise.all([1, 2].map(() => remote.clone({ url: daemon.url(repo), branch: 'main', dir: workdir(), sparsePaths: SPARSE })))) as [
      GitWorkspace,
      GitWorkspace,
    ];
    try {
      for (const [ws, name] of [
        [a, 'one'],
        [b, 'two'],
      ] as const) {
        await mkdir(join(ws.dir, `clusters/new`), { recursive: true });
        await writeFile(join(ws.dir, `clusters/new/${name}.yaml`), `${name}\n`);
        await ws.commit({ paths: ['clusters/new'], message: name, trailers: {}, author: AUTHOR });
      }
      await a.push();
      await assert.rejects(b.push({ maxAttempts: 1 }), UnavailableError);
      await assert.rejects(b.push({ signal: AbortSignal.abort() }), { name: 'AbortError' });
      assert.deepEqual(await b.push(), { sha: await b.head(), attempts: 2 });
    } finally {
      await Promise.all([a.dispose(), b.dispose()]);
    }
  });

  it('starts an orphan branch in an empty repository; the first push creates it', async () => {
    await createBareRepository(join(served, 'empty.git'));
    const ws = await remote.clone({
      url: basicServer.url('empty.git'),
      branch: 'main',
      dir: workdir(),
      sparsePaths: ['clusters/first'],
      credentials: { kind: 'basic', username: USER, password: PASSWORD },
    });
    try {
      // Started with git init, not clone: the same config as every work clone.
      assert.equal(await git(ws.dir, 'config', '--get', 'maintenance.auto'), 'false');
      assert.equal(await git(ws.dir, 'config', '--get', 'gc.auto'), '0');
      await assert.rejects(ws.head(), NotFoundError);
      assert.equal(await ws.lastCommitTouching(['clusters/first']), undefined);
      await assert.rejects(ws.push(), ValidationError);
      await mkdir(join(ws.dir, 'clusters/first'), { recursive: true });
      await writeFile(join(ws.dir, 'clusters/first/kustomization.yaml'), 'resources: []\n');
      const sha = await ws.commit({ paths: ['clusters/first'], message: 'first', trailers: { 'Scaffold-Id': '1' }, author: AUTHOR });
      assert.ok(sha);
      assert.deepEqual(await ws.push(), { sha, attempts: 1 });
      assertNoSecret(await gitMetadata(ws.dir), '.git');
    } finally {
      await ws.dispose();
    }
    const again = await remote.clone({ url: daemon.url('empty.git'), branch: 'main', dir: workdir(), sparsePaths: ['clusters/first'] });
    try {
      assert.equal(await readFile(join(again.dir, 'clusters/first/kustomization.yaml'), 'utf8'), 'resources: []\n');
    } finally {
      await again.dispose();
    }
  });

  it('pushes over HTTP with credentials that never reach the server-side request paths', async () => {
    const repo = await freshRepo('http-push.git');
    const ws = await remote.clone({
      url: tokenServer.url(repo),
      branch: 'main',
      dir: workdir(),
      sparsePaths: SPARSE,
      credentials: { kind: 'token', token: TOKEN },
    });
    try {
      await mkdir(join(ws.dir, 'clusters/new'), { recursive: true });
      await writeFile(join(ws.dir, 'clusters/new/kustomization.yaml'), 'resources: []\n');
      await ws.commit({ paths: ['clusters/new'], message: 'new', trailers: {}, author: AUTHOR });
      const { sha } = await ws.push();
      assert.equal(await git(join(served, repo), 'rev-parse', 'main'), sha);
      assert.ok(tokenServer.requests.some((request) => request.path.includes('git-receive-pack')));
      for (const request of tokenServer.requests) assertNoSecret(request.path, 'a request path');
      assertNoSecret(await gitMetadata(ws.dir), '.git');
    } finally {
      await ws.dispose();
    }
  });
});
