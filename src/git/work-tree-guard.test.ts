/**
 * The work-tree guard resolves links as the kernel does: a chain that stays
 * inside as text and climbs out through the file system is refused, FIFOs are
 * refused (a kustomization linked to one does not block the walk), links that
 * stay inside are kept.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { assertConfinedWorkTree } from './work-tree-guard.js';

describe('assertConfinedWorkTree', () => {
  let scratch: string;
  let n = 0;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'work-tree-guard-'));
    await mkdir(join(scratch, 'host'));
    await writeFile(join(scratch, 'host', 'kustomization.yaml'), 'resources: []\n');
    execFileSync('mkfifo', [join(scratch, 'host', 'pipe')]);
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  /** A fresh tree two levels below the scratch directory, so `../..` from it reaches `host/`. */
  async function tree(build: (repo: string) => Promise<void>): Promise<string> {
    const repo = join(scratch, `t${n++}`, 'repo');
    await mkdir(join(repo, 'clusters', 'eu'), { recursive: true });
    await writeFile(join(repo, 'clusters', 'eu', 'kustomization.yaml'), 'resources: []\n');
    await build(repo);
    return repo;
  }
  const refusedWith = (message: RegExp) => (error: unknown) =>
    error instanceof ValidationError && error.issues[0]?.field === 'repository' && message.test(error.message) && !error.message.includes(scratch);

  it('refuses `clusters/u -> .` plus a link through u/u/../../.. that the kernel resolves outside', async () => {
    const repo = await tree(async (r) => {
      await symlink('.', join(r, 'clusters', 'u'));
      await symlink('u/u/u/../../../host', join(r, 'clusters', 'x'));
    });
    await assert.rejects(assertConfinedWorkTree(repo), refusedWith(/clusters\/x is a symbolic link \(or lies below one\) that leaves the work tree/));
  });

  it('refuses a kustomization linked to a host FIFO through a chain without blocking, and a FIFO in the tree', async () => {
    const linked = await tree(async (r) => {
      await symlink('.', join(r, 'clusters', 'eu', 'u'));
      await rm(join(r, 'clusters', 'eu', 'kustomization.yaml'));
      await symlink('u/u/u/u/../../../../host/pipe', join(r, 'clusters', 'eu', 'kustomization.yaml'));
    });
    await assert.rejects(assertConfinedWorkTree(linked), refusedWith(/clusters\/eu\/kustomization\.yaml is a symbolic link/));
    const piped = await tree(async (r) => {
      execFileSync('mkfifo', [join(r, 'clusters', 'eu', 'values.yaml')]);
    });
    await assert.rejects(assertConfinedWorkTree(piped), refusedWith(/clusters\/eu\/values\.yaml is not a regular file/));
  });

  it('refuses link loops and kustomizations that name paths outside, and keeps links that stay inside', async () => {
    const loop = await tree(async (r) => {
      await symlink('b', join(r, 'clusters', 'a'));
      await symlink('a', join(r, 'clusters', 'b'));
    });
    await assert.rejects(assertConfinedWorkTree(loop), refusedWith(/loop of symbolic links/));
    const escape = await tree((r) => writeFile(join(r, 'clusters', 'eu', 'kustomization.yaml'), 'resources: [../../../host]\n'));
    await assert.rejects(assertConfinedWorkTree(escape), refusedWith(/clusters\/eu\/kustomization\.yaml names a path outside the repository/));
    const fine = await tree(async (r) => {
      await symlink('.', join(r, 'clusters', 'u'));
      await symlink('u/u/eu', join(r, 'clusters', 'alias'));
    });
    await assertConfinedWorkTree(fine);
  });

  it('checks every kustomization kustomize reads: under each of its names, through a link, and entries that look like URLs', async () => {
    // kustomize reads `Kustomization` too, and a linked kustomization through its link, relative to the link's directory.
    const capital = await tree((r) => writeFile(join(r, 'clusters', 'eu', 'Kustomization'), 'resources: [../../../host]\n'));
    await assert.rejects(assertConfinedWorkTree(capital), refusedWith(/clusters\/eu\/Kustomization names a path outside/));
    const linked = await tree(async (r) => {
      await mkdir(join(r, 'lib'));
      // k.yaml is no kustomization by its name: only the link makes it one, and kustomize resolves it from clusters/eu/.
      await writeFile(join(r, 'lib', 'k.yaml'), 'resources: [../../../host]\n');
      await rm(join(r, 'clusters', 'eu', 'kustomization.yaml'));
      await symlink('../../lib/k.yaml', join(r, 'clusters', 'eu', 'kustomization.yaml'));
    });
    await assert.rejects(assertConfinedWorkTree(linked), refusedWith(/clusters\/eu\/kustomization\.yaml names a path outside/));
    for (const entry of ['github.com/../../../../host', 'a://../../../../host', 'file:///srv/repo.git']) {
      const disguised = await tree((r) => writeFile(join(r, 'clusters', 'eu', 'kustomization.yaml'), `components: ['${entry}']\n`));
      await assert.rejects(assertConfinedWorkTree(disguised), refusedWith(/clusters\/eu\/kustomization\.yaml names/), entry);
    }
  });
});
