import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { writeTree } from './write-tree.js';

describe('writeTree', () => {
  let scratch: string;
  let root: string;
  let outside: string;

  beforeEach(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gs-write-tree-'));
    root = join(scratch, 'repo');
    outside = join(scratch, 'outside');
    await mkdir(root);
    await mkdir(outside);
    await writeFile(join(outside, 'victim.txt'), 'original\n');
  });
  afterEach(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('creates files and directories and reports them', async () => {
    const result = await writeTree(
      root,
      new Map([
        ['clusters/a/flux/b.yaml', 'b\n'],
        ['clusters/a/kustomization.yaml', 'k\n'],
      ]),
    );
    assert.deepEqual(result, { written: ['clusters/a/flux/b.yaml', 'clusters/a/kustomization.yaml'], removed: [], unchanged: [] });
    assert.equal(await readFile(join(root, 'clusters/a/flux/b.yaml'), 'utf8'), 'b\n');
  });

  it('leaves identical files untouched (mtime kept) and rewrites changed ones', async () => {
    await writeTree(
      root,
      new Map([
        ['a/same.yaml', 'same\n'],
        ['a/changed.yaml', 'old\n'],
      ]),
    );
    const past = new Date('2020-01-01T00:00:00Z');
    await utimes(join(root, 'a/same.yaml'), past, past);
    const result = await writeTree(
      root,
      new Map([
        ['a/same.yaml', 'same\n'],
        ['a/changed.yaml', 'new\n'],
      ]),
    );
    assert.deepEqual(result, { written: ['a/changed.yaml'], removed: [], unchanged: ['a/same.yaml'] });
    assert.equal((await stat(join(root, 'a/same.yaml'))).mtime.getTime(), past.getTime());
    assert.equal(await readFile(join(root, 'a/changed.yaml'), 'utf8'), 'new\n');
  });

  it('removes stale files and emptied directories below removeBelow only', async () => {
    await writeTree(
      root,
      new Map([
        ['clusters/a/keep.yaml', 'k\n'],
        ['clusters/a/old/stale.yaml', 's\n'],
        ['clusters/a/stale.yaml', 's\n'],
        ['clusters/b/other.yaml', 'o\n'],
      ]),
    );
    const result = await writeTree(
      root,
      new Map([
        ['clusters/a/keep.yaml', 'k\n'],
        ['clusters/a/new.yaml', 'n\n'],
      ]),
      { removeBelow: ['clusters/a'] },
    );
    assert.deepEqual(result, {
      written: ['clusters/a/new.yaml'],
      removed: ['clusters/a/old/stale.yaml', 'clusters/a/stale.yaml'],
      unchanged: ['clusters/a/keep.yaml'],
    });
    assert.deepEqual((await readdir(join(root, 'clusters/a'))).sort(), ['keep.yaml', 'new.yaml']);
    assert.equal(await readFile(join(root, 'clusters/b/other.yaml'), 'utf8'), 'o\n');
    // A removeBelow directory that does not exist yet is fine.
    await writeTree(root, new Map([['clusters/c/x.yaml', 'x\n']]), { removeBelow: ['clusters/c'] });
  });

  it('removes exactly the files named by remove, and the directories that leaves empty, nothing else', async () => {
    await writeTree(
      root,
      new Map([
        ['c/a/flux/old.yaml', 'o\n'],
        ['c/a/gone/deep/x.yaml', 'x\n'],
        ['c/a/flux-system/gotk-sync.yaml', 'g\n'],
        ['c/a/kept.yaml', 'k\n'],
      ]),
    );
    const result = await writeTree(root, new Map([['c/a/flux/new.yaml', 'n\n']]), {
      remove: ['c/a/flux/old.yaml', 'c/a/gone/deep/x.yaml', 'c/a/never-there.yaml', 'c/a/flux/new.yaml'],
    });
    assert.deepEqual(result, { written: ['c/a/flux/new.yaml'], removed: ['c/a/flux/old.yaml', 'c/a/gone/deep/x.yaml'], unchanged: [] });
    assert.deepEqual((await readdir(join(root, 'c/a'))).sort(), ['flux', 'flux-system', 'kept.yaml']);
    assert.equal(await readFile(join(root, 'c/a/flux-system/gotk-sync.yaml'), 'utf8'), 'g\n');
    for (const bad of ['../outside/victim.txt', '/etc/passwd', 'c/', '.']) {
      await assert.rejects(writeTree(root, new Map(), { remove: [bad] }), ValidationError, bad);
    }
    await symlink(outside, join(root, 'escape'));
    await assert.rejects(writeTree(root, new Map(), { remove: ['escape/victim.txt'] }), ValidationError);
    assert.equal(await readFile(join(outside, 'victim.txt'), 'utf8'), 'original\n');
  });

  it('lets a stale file give way to a directory of the same name', async () => {
    await writeTree(root, new Map([['c/a/thing', 'file\n']]));
    const result = await writeTree(root, new Map([['c/a/thing/inner.yaml', 'i\n']]), { removeBelow: ['c/a'] });
    assert.deepEqual(result.removed, ['c/a/thing']);
    assert.equal(await readFile(join(root, 'c/a/thing/inner.yaml'), 'utf8'), 'i\n');
  });

  it('refuses paths that escape the root, and writes nothing when one does', async () => {
    for (const bad of ['../x', '/etc/passwd', 'a/../../x', 'a/./b', '.git/config', 'a\\b', 'dir/']) {
      await assert.rejects(
        writeTree(
          root,
          new Map([
            ['fine.yaml', 'f\n'],
            [bad, 'x\n'],
          ]),
        ),
        ValidationError,
        bad,
      );
    }
    assert.deepEqual(await readdir(root), []);
    await assert.rejects(writeTree(root, new Map(), { removeBelow: ['../outside'] }), ValidationError);
    await assert.rejects(writeTree(root, new Map(), { removeBelow: ['.'] }), ValidationError);
  });

  it('refuses to write or remove through a symlink that points outside', async () => {
    await symlink(outside, join(root, 'escape'));
    await assert.rejects(writeTree(root, new Map([['escape/victim.txt', 'pwned\n']])), ValidationError);
    await assert.rejects(writeTree(root, new Map([['escape/deeper/new.txt', 'pwned\n']])), ValidationError);
    await assert.rejects(writeTree(root, new Map(), { removeBelow: ['escape'] }), ValidationError);
    assert.deepEqual(await readdir(outside), ['victim.txt']);
    assert.equal(await readFile(join(outside, 'victim.txt'), 'utf8'), 'original\n');
  });

  it('replaces a symlink at a file path with a regular file instead of writing through it', async () => {
    await mkdir(join(root, 'a'));
    await symlink(join(outside, 'victim.txt'), join(root, 'a/file.yaml'));
    const result = await writeTree(root, new Map([['a/file.yaml', 'mine\n']]));
    assert.deepEqual(result.written, ['a/file.yaml']);
    assert.ok((await lstat(join(root, 'a/file.yaml'))).isFile());
    assert.equal(await readFile(join(outside, 'victim.txt'), 'utf8'), 'original\n');
  });

  it('removes a stale symlink below removeBelow without following it', async () => {
    await mkdir(join(root, 'c'));
    await symlink(outside, join(root, 'c/link'));
    const result = await writeTree(root, new Map(), { removeBelow: ['c'] });
    assert.deepEqual(result.removed, ['c/link']);
    assert.deepEqual(await readdir(outside), ['victim.txt']);
  });

  it("refuses a .git component at any depth, not only the first: a nested repository is not the render's to write", async () => {
    for (const bad of ['a/.git/config', 'clusters/x/.git/hooks/post-checkout', 'clusters/x/.git']) {
      await assert.rejects(writeTree(root, new Map([[bad, 'x\n']])), (e: unknown) => e instanceof ValidationError && /points into \.git/.test(e.message), bad);
    }
    await assert.rejects(writeTree(root, new Map(), { remove: ['c/.git/HEAD'] }), ValidationError);
    await assert.rejects(writeTree(root, new Map(), { removeBelow: ['c/.git'] }), ValidationError);
    assert.deepEqual(await readdir(root), []);
  });

  it('keeps a nested .git below removeBelow: neither deleted nor reported as removed', async () => {
    await mkdir(join(root, 'c/.git/refs'), { recursive: true });
    await writeFile(join(root, 'c/.git/HEAD'), 'ref: refs/heads/main\n');
    await writeFile(join(root, 'c/.git/refs/keep'), 'k\n');
    await writeFile(join(root, 'c/stale.yaml'), 's\n');
    const result = await writeTree(root, new Map([['c/new.yaml', 'n\n']]), { removeBelow: ['c'] });
    assert.deepEqual(result, { written: ['c/new.yaml'], removed: ['c/stale.yaml'], unchanged: [] });
    assert.equal(await readFile(join(root, 'c/.git/HEAD'), 'utf8'), 'ref: refs/heads/main\n');
    assert.equal(await readFile(join(root, 'c/.git/refs/keep'), 'utf8'), 'k\n');
    // Only a nested .git left: the directory stays, the .git in it too.
    const again = await writeTree(root, new Map(), { removeBelow: ['c'] });
    assert.deepEqual(again.removed, ['c/new.yaml']);
    assert.deepEqual((await readdir(join(root, 'c'))).sort(), ['.git']);
    assert.equal(await readFile(join(root, 'c/.git/HEAD'), 'utf8'), 'ref: refs/heads/main\n');
  });

  it('refuses a link to the folder above the root (`up -> ..`): nothing written there, nothing deleted there', async () => {
    await symlink('..', join(root, 'up'));
    await assert.rejects(writeTree(root, new Map([['up/v.txt', 'pwned\n']])), ValidationError);
    await assert.rejects(writeTree(root, new Map([['up/outside/victim.txt', 'pwned\n']])), ValidationError);
    await assert.rejects(writeTree(root, new Map(), { removeBelow: ['up'] }), ValidationError);
    await assert.rejects(writeTree(root, new Map(), { removeBelow: ['up/outside'] }), ValidationError);
    await assert.rejects(writeTree(root, new Map(), { remove: ['up/outside/victim.txt'] }), ValidationError);
    assert.deepEqual((await readdir(scratch)).sort(), ['outside', 'repo']);
    assert.deepEqual(await readdir(outside), ['victim.txt']);
    assert.equal(await readFile(join(outside, 'victim.txt'), 'utf8'), 'original\n');
    assert.deepEqual(await readdir(root), ['up']);
  });

  it("refuses to write or remove through a link into the work tree's .git (or a nested one): a hook written there runs, a removeBelow there deletes the repository", async () => {
    await mkdir(join(root, '.git/hooks'), { recursive: true });
    await writeFile(join(root, '.git/HEAD'), 'ref: refs/heads/main\n');
    await mkdir(join(root, 'sub/.git'), { recursive: true });
    await writeFile(join(root, 'sub/.git/HEAD'), 'ref: refs/heads/main\n');
    await mkdir(join(root, 'c'));
    await symlink('../.git/hooks', join(root, 'c/hooks'));
    await symlink('.git', join(root, 'git'));
    await symlink('sub/.git', join(root, 'nested'));
    const into = (e: unknown) => e instanceof ValidationError && /points into \.git/.test(e.message);
    await assert.rejects(writeTree(root, new Map([['c/hooks/post-checkout', '#!/bin/sh\n']])), into);
    await assert.rejects(writeTree(root, new Map([['git/config', '[core]\n']])), into);
    await assert.rejects(writeTree(root, new Map([['nested/config', '[core]\n']])), into);
    await assert.rejects(writeTree(root, new Map(), { removeBelow: ['git'] }), into);
    await assert.rejects(writeTree(root, new Map(), { removeBelow: ['nested'] }), into);
    await assert.rejects(writeTree(root, new Map(), { remove: ['git/HEAD'] }), into);
    assert.deepEqual(await readdir(join(root, '.git/hooks')), []);
    assert.deepEqual((await readdir(join(root, '.git'))).sort(), ['HEAD', 'hooks']);
    assert.deepEqual(await readdir(join(root, 'sub/.git')), ['HEAD']);
  });

  it('follows a symlinked directory that stays inside the root', async () => {
    await mkdir(join(root, 'real'));
    await symlink(join(root, 'real'), join(root, 'alias'));
    await writeTree(root, new Map([['alias/x.yaml', 'x\n']]));
    assert.equal(await readFile(join(root, 'real/x.yaml'), 'utf8'), 'x\n');
  });
});
