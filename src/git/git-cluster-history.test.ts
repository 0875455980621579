import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitClusterHistory } from './git-cluster-history.js';
import { gitSync } from '../../test/support/git.js';

const git = (cwd: string, ...args: string[]): string => gitSync(cwd, ...args).trim();

describe('GitClusterHistory', () => {
  let tmp: string;
  let repo: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'gs-cluster-history-'));
    repo = join(tmp, 'repo');
    await mkdir(join(repo, 'clusters/a/flux-system'), { recursive: true });
    git(repo, 'init', '--quiet', '--initial-branch=main');
    await writeFile(join(repo, 'clusters/a/flux-system/gotk-sync.yaml'), 'sync\n');
    await writeFile(join(repo, 'clusters/a/kustomization.yaml'), 'k\n');
    await writeFile(join(repo, 'README.md'), 'r\n');
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'first');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('knows no previous commit for a clean first commit, nor for a directory that is no repository', async () => {
    assert.equal(await new GitClusterHistory(repo).previous('clusters/a'), undefined);
    assert.equal(await new GitClusterHistory(tmp).previous('clusters/a'), undefined);
  });

  it('gives HEAD while the cluster path has changes, and HEAD^ once they are committed', async () => {
    const first = git(repo, 'rev-parse', 'HEAD');
    await rm(join(repo, 'clusters/a/flux-system'), { recursive: true });
    const dirty = await new GitClusterHistory(repo).previous('clusters/a');
    assert.deepEqual(dirty, { commit: first, files: ['clusters/a/flux-system/gotk-sync.yaml', 'clusters/a/kustomization.yaml'] });
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'drop flux-system');
    assert.deepEqual(await new GitClusterHistory(repo).previous('clusters/a'), dirty);
    // Changes elsewhere do not count as changes of the cluster path.
    await writeFile(join(repo, 'README.md'), 'changed\n');
    assert.deepEqual(await new GitClusterHistory(repo).previous('clusters/a'), dirty);
    assert.deepEqual(await new GitClusterHistory(repo).previous('clusters/b'), { commit: first, files: [] });
  });
});
