/**
 * How long a fleet answer is reused, over a real repository (file://), real
 * clones and a real `git ls-remote`: a landed run shows in the next read, and
 * an unchanged branch costs no clone.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ValidationError } from '../errors.js';
import { readBranchHead, type BranchHeadReader } from '../git/branch-head.js';
import { CliGitRemote } from '../git/cli-git-remote.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { renderWorkTree } from '../git/render-work-tree.js';
import { platformDir } from '../package-paths.js';
import type { GitRemote } from '../run/ports.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createBareRepository } from '../../test/support/git-server.js';
import { git } from '../../test/support/git.js';
import { GitFleetSource } from './git-fleet-source.js';

const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid'];

/** A bare repository (file://) and its work tree: the reference platform committed, cluster eu-1 rendered and not yet. */
async function fleetRepository(prefix: string, certificate = parseSealingCertificate(createTestCertificate().certificatePem)) {
  const tmp = await mkdtemp(join(tmpdir(), prefix));
  const work = join(tmp, 'work');
  const bare = join(tmp, 'gitops.git');
  await createBareRepository(bare);
  await initPlatformRepository(work, platformDir());
  await renderWorkTree(work, {
    cluster: { name: 'eu-1', domain: 'eu-1.example.net', region: 'eu-west-1' },
    pass: 'all',
    certificate,
    generatorVersion: 'test',
  });
  return { tmp, work, bare, url: pathToFileURL(bare).href };
}

describe('GitFleetSource: reusing a fleet read', () => {
  let tmp: string;
  let work: string;
  let bare: string;
  let url: string;
  const certificate = parseSealingCertificate(createTestCertificate().certificatePem);

  const commitAndPush = async (message: string) => {
    await git(work, 'add', '--all');
    await git(work, ...IDENTITY, 'commit', '--quiet', '-m', message);
    await git(work, 'push', '--quiet', bare, 'main:main');
  };

  /** A source whose clones and head reads are counted, on a clock the test moves. */
  const counted = () => {
    const real = new CliGitRemote({});
    const counts = { clones: 0, heads: 0 };
    const clock = { now: 1_000_000 };
    const gitRemote: GitRemote = {
      clone: (options) => {
        counts.clones++;
        return real.clone(options);
      },
    };
    const branchHead: BranchHeadReader = (query) => {
      counts.heads++;
      return readBranchHead(query);
    };
    const source = new GitFleetSource({ git: gitRemote, branchHead, reference: 'development', workRoot: tmp, ttlMs: 2000, now: () => clock.now });
    return { source, counts, clock };
  };

  before(async () => {
    ({ tmp, work, bare, url } = await fleetRepository('fleet-source-', certificate));
    await commitAndPush('One cluster');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('answers a burst from one clone, and an unchanged branch from one ls-remote instead of a clone', async () => {
    const { source, counts, clock } = counted();
    const target = { repositoryUrl: url, branch: 'main' };
    const [first, second] = await Promise.all([source.fleet(target), source.fleet(target)]);
    assert.equal(first, second);
    assert.equal(await source.fleet(target), first, 'within the reuse window: the same answer');
    assert.deepEqual(counts, { clones: 1, heads: 0 });
    clock.now += 60_000;
    assert.equal(await source.fleet(target), first, 'the branch did not move: the same answer');
    assert.deepEqual(counts, { clones: 1, heads: 1 });
  });

  it('reads again as soon as the branch moved: a landed run shows in the next read, not after a cache expires', async () => {
    const { source, counts, clock } = counted();
    const target = { repositoryUrl: url, branch: 'main' };
    const before = await source.fleet(target);
    assert.deepEqual(
      before.clusters.filter((c) => c.kind === 'generated').map((c) => c.name),
      ['eu-1'],
    );

    await renderWorkTree(work, {
      cluster: { name: 'eu-2', domain: 'eu-2.example.net', region: 'eu-west-1' },
      pass: 'all',
      certificate,
      generatorVersion: 'test',
    });
    await commitAndPush('A second cluster lands');
    clock.now += 2001;
    const after = await source.fleet(target);
    assert.notEqual(after.commit, before.commit);
    assert.equal(after.commit, await git(bare, 'rev-parse', 'main'));
    assert.deepEqual(
      after.clusters.filter((c) => c.kind === 'generated').map((c) => c.name),
      ['eu-1', 'eu-2'],
    );
    assert.deepEqual(counts, { clones: 2, heads: 1 });
  });
});

describe('readBranchHead', () => {
  let tmp: string;
  let bare: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'branch-head-'));
    bare = join(tmp, 'repo.git');
    await createBareRepository(bare);
    const work = join(tmp, 'work');
    await mkdir(work);
    await git(work, 'init', '--quiet', '--initial-branch', 'main');
    await writeFile(join(work, 'README.md'), 'x\n');
    await git(work, 'add', '--all');
    await git(work, ...IDENTITY, 'commit', '--quiet', '-m', 'first');
    await git(work, 'push', '--quiet', bare, 'main:main');
    // A branch whose name ends like main's ref, at another commit: ls-remote lists it too, and first.
    await git(work, ...IDENTITY, 'commit', '--quiet', '--allow-empty', '-m', 'second');
    await git(work, 'push', '--quiet', bare, 'main:refs/heads/feature/refs/heads/main');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('names the exact branch head, not a branch that only ends like it, and undefined for a branch that does not exist', async () => {
    const repositoryUrl = pathToFileURL(bare).href;
    const main = await git(bare, 'rev-parse', 'main');
    assert.notEqual(main, await git(bare, 'rev-parse', 'refs/heads/feature/refs/heads/main'));
    assert.equal(await readBranchHead({ repositoryUrl, branch: 'main' }), main);
    assert.equal(await readBranchHead({ repositoryUrl, branch: 'nope' }), undefined);
  });

  it('refuses a URL the repository policy refuses, before running git', async () => {
    const marker = join(tmp, 'ext-ran');
    await assert.rejects(readBranchHead({ repositoryUrl: `ext::sh -c touch% ${marker}`, branch: 'main' }), ValidationError);
    await assert.rejects(access(marker), 'the ext command never ran');
  });
});

describe('GitFleetSource: what a fleet read fetches, writes and refuses', () => {
  let tmp: string;
  let work: string;
  let bare: string;
  let url: string;
  /** Files each clone held when the read ran, repository-relative, and the files of HEAD whose blobs it had fetched. */
  const cloned: { onDisk: string[]; fetched: string[] }[] = [];
  let source: GitFleetSource;

  const filesBelow = async (dir: string, prefix = ''): Promise<string[]> => {
    const files: string[] = [];
    for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (path === '.git') continue;
      if (entry.isDirectory()) files.push(...(await filesBelow(dir, path)));
      else files.push(path);
    }
    return files.sort();
  };

  /** HEAD's files whose blobs the partial clone at `dir` holds (--missing=print lists the others without fetching them). */
  const fetchedFiles = async (dir: string): Promise<string[]> => {
    const missing = new Set(
      (await git(dir, 'rev-list', '--objects', '--all', '--missing=print'))
        .split('\n')
        .filter((line) => line.startsWith('?'))
        .map((line) => line.slice(1)),
    );
    return (await git(dir, 'ls-tree', '-r', 'HEAD'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split('\t') as [string, string])
      .filter(([meta]) => meta.split(' ')[1] === 'blob' && !missing.has(meta.split(' ')[2]!))
      .map(([, path]) => path)
      .sort();
  };

  /** A branch off main with `change` committed; `change` stages what it does. */
  const branchWith = async (branch: string, change: () => Promise<unknown>) => {
    await git(work, 'checkout', '--quiet', '-b', branch, 'main');
    await change();
    await git(work, ...IDENTITY, 'commit', '--quiet', '-m', branch);
    await git(work, 'push', '--quiet', bare, `${branch}:${branch}`);
    await git(work, 'checkout', '--quiet', 'main');
  };

  before(async () => {
    ({ tmp, work, bare, url } = await fleetRepository('fleet-read-'));
    await mkdir(join(work, 'clusters/by-hand'), { recursive: true });
    await writeFile(join(work, 'clusters/by-hand/kustomization.yaml'), 'resources: []\n');
    await git(work, 'add', '--all');
    await git(work, ...IDENTITY, 'commit', '--quiet', '-m', 'A generated cluster and one written by hand');
    await git(work, 'push', '--quiet', bare, 'main:main');
    await branchWith('cluster-link', async () => {
      await symlink('/etc', join(work, 'clusters/eu-9'));
      await git(work, 'add', '--all');
    });
    await branchWith('clusters-link', async () => {
      await rm(join(work, 'clusters'), { recursive: true, force: true });
      await symlink('/etc', join(work, 'clusters'));
      await git(work, 'add', '--all');
    });
    // A gitlink has no directory in the work tree: staged in the index alone.
    await branchWith('cluster-submodule', async () =>
      git(work, 'update-index', '--add', '--cacheinfo', `160000,${await git(work, 'rev-parse', 'HEAD')},clusters/eu-8`),
    );

    const real = new CliGitRemote({});
    const gitRemote: GitRemote = {
      clone: async (options) => {
        const workspace = await real.clone(options);
        cloned.push({ onDisk: await filesBelow(workspace.dir), fetched: await fetchedFiles(workspace.dir) });
        return workspace;
      },
    };
    source = new GitFleetSource({ git: gitRemote, branchHead: readBranchHead, reference: 'development', workRoot: tmp });
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('fetches only the provenance files and writes none, and still lists the reference and the clusters without provenance', async () => {
    const fleet = await source.fleet({ repositoryUrl: url, branch: 'main' });
    assert.deepEqual(
      fleet.clusters.map((c) => [c.name, c.kind]),
      [
        ['by-hand', 'unmanaged'],
        ['development', 'reference'],
        ['eu-1', 'generated'],
      ],
    );
    assert.deepEqual(cloned.at(-1), { onDisk: [], fetched: ['clusters/eu-1/provenance.yaml'] });
  });

  for (const [branch, path] of [
    ['cluster-link', 'clusters/eu-9'],
    ['clusters-link', 'clusters'],
    ['cluster-submodule', 'clusters/eu-8'],
  ] as const) {
    it(`refuses a fleet whose ${path} is a link or submodule (${branch}), naming it`, async () => {
      await assert.rejects(source.fleet({ repositoryUrl: url, branch }), (error: unknown) => {
        assert.ok(error instanceof ValidationError, String(error));
        assert.match(JSON.stringify(error.issues), new RegExp(`${path} is a (symbolic link|submodule)`));
        return true;
      });
    });
  }
});
