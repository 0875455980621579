/**
 * The confined reader of a work tree on disk: links resolved the way the
 * kernel does, refused by their repository path when they leave the tree
 * (the same answer whether or not the host file exists), FIFOs refused
 * without blocking, loops ending in an error.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { FsRepoReader, readRegularFile } from './fs-repo-reader.js';

describe('FsRepoReader', () => {
  let scratch: string;
  let repo: string;
  let reader: FsRepoReader;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'fs-repo-reader-'));
    repo = join(scratch, 'repo');
    await mkdir(join(repo, 'clusters', 'eu'), { recursive: true });
    await writeFile(join(scratch, 'host.yaml'), 'HOST-BYTES\n');
    await writeFile(join(repo, 'clusters', 'eu', 'kustomization.yaml'), 'resources: []\n');
    await symlink('.', join(repo, 'clusters', 'u'));
    // Inside as text (clusters/u/u/../../host.yaml), two levels out through the kernel.
    await symlink('u/u/../../host.yaml', join(repo, 'clusters', 'existing'));
    await symlink('u/u/../../no-such-file', join(repo, 'clusters', 'missing'));
    await symlink('loop-b', join(repo, 'clusters', 'loop-a'));
    await symlink('loop-a', join(repo, 'clusters', 'loop-b'));
    await symlink(join(scratch, 'host.yaml'), join(repo, 'clusters', 'absolute'));
    await symlink('eu/kustomization.yaml', join(repo, 'clusters', 'inside'));
    await symlink('../.git', join(repo, 'clusters', 'git'));
    // A nested repository's own files: never the tree's to read.
    await mkdir(join(repo, 'sub', '.git'), { recursive: true });
    await writeFile(join(repo, 'sub', '.git', 'config'), '[core]\n');
    execFileSync('mkfifo', [join(repo, 'clusters', 'eu', 'pipe.yaml')]);
    reader = new FsRepoReader(repo);
  });

  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  const refusal = async (path: string): Promise<string> => {
    let message = '';
    await assert.rejects(reader.read(path), (error: unknown) => error instanceof ValidationError && ((message = error.message), true));
    return message;
  };

  it('refuses a chain of links that stays inside as text and leaves through the kernel, the same whether the host file exists or not', async () => {
    const existing = await refusal('clusters/existing');
    assert.equal(existing, 'repository: clusters/existing is a symbolic link (or lies below one) that leaves the work tree');
    assert.equal((await refusal('clusters/missing')).replace('missing', 'existing'), existing);
    assert.ok(!existing.includes(scratch));
    await assert.rejects(reader.list('clusters'), /clusters\/[a-z]+ is a symbolic link \(or lies below one\) that leaves the work tree/);
  });

  it('refuses absolute targets and links into .git, and ends a loop with an error', async () => {
    assert.match(await refusal('clusters/absolute'), /clusters\/absolute is a symbolic link/);
    assert.match(await refusal('clusters/git/config'), /clusters\/git\/config is a symbolic link/);
    assert.match(await refusal('clusters/loop-a'), /loop of symbolic links/);
  });

  it('refuses a .git component at any depth, not only the first', async () => {
    for (const path of ['sub/.git/config', 'clusters/eu/.git/config', '.git/config']) assert.match(await refusal(path), /points into \.git/, path);
    await assert.rejects(reader.list('sub/.git'), /points into \.git/);
    assert.deepEqual(await reader.list('sub'), []);
  });

  it('refuses a FIFO at once instead of blocking on it', async () => {
    const started = Date.now();
    assert.match(await refusal('clusters/eu/pipe.yaml'), /clusters\/eu\/pipe\.yaml is not a regular file/);
    assert.ok(Date.now() - started < 2_000);
  });

  // What was resolved as a regular file may be swapped before it is opened: the
  // open itself must refuse what the resolution would have (reading it directly
  // is the swap, without a race to win).
  it('refuses a link swapped in after resolution instead of following it out of the tree', () => {
    assert.throws(
      () => readRegularFile(join(repo, 'clusters', 'absolute'), 'clusters/swapped'),
      (error: unknown) => error instanceof ValidationError && /clusters\/swapped is a symbolic link/.test(error.message),
    );
  });

  it('refuses a FIFO swapped in after resolution without blocking on it (in a process of its own, killed if it blocks)', () => {
    const fifo = join(repo, 'clusters', 'eu', 'pipe.yaml');
    const child = spawnSync(
      process.execPath,
      [
        ...process.execArgv,
        '--input-type=module',
        '-e',
        `import { readRegularFile } from ${JSON.stringify(new URL('./fs-repo-reader.ts', import.meta.url).href)};
         try { readRegularFile(${JSON.stringify(fifo)}, 'clusters/eu/pipe.yaml'); console.log('read'); } catch (error) { console.log(error.message); }`,
      ],
      { encoding: 'utf8', timeout: 20_000 },
    );
    assert.equal(child.signal, null, 'the read blocked on the FIFO');
    assert.match(child.stdout, /clusters\/eu\/pipe\.yaml is not a regular file/);
  });

  it('reads files and links that stay inside the tree, and lists regular files only', async () => {
    assert.equal(await reader.read('clusters/inside'), 'resources: []\n');
    assert.equal(await reader.read('clusters/u/u/eu/kustomization.yaml'), 'resources: []\n');
    assert.equal(await reader.read('clusters/nothing'), undefined);
    assert.equal(await reader.read('clusters/eu'), undefined);
    assert.equal(await reader.isDirectory('clusters/u'), true);
    assert.deepEqual(await reader.list('clusters/eu'), ['clusters/eu/kustomization.yaml']);
  });
});
