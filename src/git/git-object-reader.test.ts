/**
 * The reader of a clone's git objects: a link is a blob of mode 120000 and a
 * submodule a gitlink, both refused by their repository path; only the sparse
 * cone git checked out is seen; bytes come back exactly as committed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ValidationError } from '../errors.js';
import { gitSync as git } from '../../test/support/git.js';
import { GitObjectRepoReader } from './git-object-reader.js';

describe('GitObjectRepoReader', () => {
  let scratch: string;
  let repo: string;
  let reader: GitObjectRepoReader;
  const binary = Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 13, 0xc3]);

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'git-object-reader-'));
    repo = join(scratch, 'repo');
    await mkdir(join(repo, 'clusters', 'eu'), { recursive: true });
    await mkdir(join(repo, 'base'), { recursive: true });
    await writeFile(join(repo, 'scaffold.yaml'), 'attributes: {}\n');
    await writeFile(join(repo, 'clusters', 'eu', 'kustomization.yaml'), 'resources: []\n');
    await writeFile(join(repo, 'clusters', 'eu', 'blob.bin'), binary);
    await writeFile(join(repo, 'base', 'a.yaml'), 'a: 1\n');
    await symlink('.', join(repo, 'clusters', 'u'));
    await symlink('u/u/../../../etc/passwd', join(repo, 'clusters', 'x'));
    git(repo, 'init', '--quiet', '--initial-branch', 'main');
    git(repo, 'add', '--all');
    // A submodule: a gitlink entry, never a directory of files here.
    git(repo, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/lib`);
    git(repo, 'commit', '--quiet', '-m', 'tree');
    reader = new GitObjectRepoReader(repo);
  });

  after(async () => {
    reader.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it('refuses links and gitlinks by their path, in a read, a listing and below them', async () => {
    const refused = (path: string, what: RegExp) => (error: unknown) =>
      error instanceof ValidationError && error.issues[0]?.field === 'repository' && error.message.includes(`${path} is a`) && what.test(error.message);
    await assert.rejects(reader.read('clusters/x'), refused('clusters/x', /symbolic link/));
    await assert.rejects(reader.read('clusters/u/eu/kustomization.yaml'), refused('clusters/u', /symbolic link/));
    await assert.rejects(reader.list('clusters'), refused('clusters/u', /symbolic link/));
    await assert.rejects(reader.isDirectory('clusters/u'), refused('clusters/u', /symbolic link/));
    await assert.rejects(reader.read('vendor/lib/x'), refused('vendor/lib', /submodule/));
  });

  it('reads files as committed, byte for byte, and answers undefined for what the commit does not hold', async () => {
    assert.equal(await reader.read('scaffold.yaml'), 'attributes: {}\n');
    assert.deepEqual(await reader.readBytes('clusters/eu/blob.bin'), binary);
    assert.deepEqual(await Promise.all([reader.read('clusters/eu/kustomization.yaml'), reader.read('base/a.yaml'), reader.read('nope.yaml')]), [
      'resources: []\n',
      'a: 1\n',
      undefined,
    ]);
    assert.deepEqual(await reader.list('clusters/eu'), ['clusters/eu/blob.bin', 'clusters/eu/kustomization.yaml']);
    assert.equal(await reader.isDirectory('clusters/eu'), true);
    assert.equal(await reader.isDirectory('clusters/eu/blob.bin'), false);
  });

  it('sees only the sparse cone a clone checked out', async () => {
    const clone = join(scratch, 'clone');
    git(scratch, 'clone', '--quiet', '--no-checkout', pathToFileURL(repo).href, clone);
    git(clone, 'sparse-checkout', 'set', '--cone', '--sparse-index', 'base');
    git(clone, 'checkout', '--quiet', 'main');
    const sparse = new GitObjectRepoReader(clone);
    try {
      assert.deepEqual(await sparse.list(''), ['base/a.yaml', 'scaffold.yaml']);
      assert.equal(await sparse.read('clusters/eu/kustomization.yaml'), undefined);
    } finally {
      sparse.close();
    }
  });
});
