/**
 * The confinement primitives: isWithin (by text, for paths already free of
 * links) and resolveConfined's end to a chain of links, which must come as an
 * error after the kernel's 40 links, not as a hang. resolveConfined never
 * yields while it walks (blocking lstat and readlink), so a runaway walk would
 * block the event loop and no test timeout could end it: the loop is resolved
 * in a process of its own, killed if it does not answer in time.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { isWithin, resolveConfined } from './confined-path.js';

describe('isWithin', () => {
  it('holds for the directory itself and what lies below it', () => {
    assert.equal(isWithin('/r/repo', '/r/repo'), true);
    assert.equal(isWithin('/r/repo/a', '/r/repo'), true);
    assert.equal(isWithin('/r/repo/a/b', '/r/repo/'), true);
    assert.equal(isWithin('/r/repo/..x', '/r/repo'), true, 'a name starting with two dots is still below');
  });

  it('fails for the parent, a sibling sharing the prefix, and anything above', () => {
    assert.equal(isWithin('/r', '/r/repo'), false, 'the folder above the tree (a link `up -> ..`)');
    assert.equal(isWithin('/r/', '/r/repo'), false);
    assert.equal(isWithin('/', '/r/repo'), false);
    assert.equal(isWithin('/r/other', '/r/repo'), false);
    assert.equal(isWithin('/r/repo-2', '/r/repo'), false);
    assert.equal(isWithin('/r/repo/../other', '/r/repo'), false);
  });
});

describe('resolveConfined', () => {
  let scratch: string;
  let root: string;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'confined-path-'));
    // resolveConfined wants a root free of links (tmpdir() may be one).
    root = await realpath(scratch).then((real) => join(real, 'repo'));
    await mkdir(join(root, 'links'), { recursive: true });
    await writeFile(join(root, 'links', 'target.yaml'), 'target\n');
    await symlink('b', join(root, 'links', 'a'));
    await symlink('a', join(root, 'links', 'b'));
    await symlink('self', join(root, 'links', 'self'));
    // chain-N: N links one after the other, ending at target.yaml (chain-N-0 -> chain-N-1 -> … -> target.yaml).
    for (const n of [40, 41, 200]) {
      for (let i = 0; i < n; i++) await symlink(i === n - 1 ? 'target.yaml' : `chain-${n}-${i + 1}`, join(root, 'links', `chain-${n}-${i}`));
    }
  });

  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  const loop = /goes through a loop of symbolic links/;

  it('follows as many links as the kernel does (40) and refuses one more', { timeout: 5_000 }, async () => {
    const reached = await resolveConfined(root, 'links/chain-40-0');
    assert.ok(reached.found);
    assert.equal(reached.absolute, join(root, 'links', 'target.yaml'));
    for (const path of ['links/chain-41-0', 'links/chain-200-0']) {
      await assert.rejects(resolveConfined(root, path), (e: unknown) => e instanceof ValidationError && loop.test(e.message), path);
    }
  });

  it('ends a loop of links with an error, quickly (in a process of its own, killed if it hangs)', { timeout: 30_000 }, () => {
    const child = spawnSync(
      process.execPath,
      [
        ...process.execArgv,
        '--input-type=module',
        '-e',
        `import { resolveConfined } from ${JSON.stringify(new URL('./confined-path.ts', import.meta.url).href)};
         for (const path of ['links/a', 'links/b/x.yaml', 'links/self']) {
           try { await resolveConfined(${JSON.stringify(root)}, path); console.log(path + ' resolved'); } catch (error) { console.log(error.message); }
         }`,
      ],
      { encoding: 'utf8', timeout: 5_000 },
    );
    assert.equal(child.signal, null, 'resolving a loop of links did not end');
    assert.deepEqual(child.stdout.trim().split('\n'), [
      'repository: links/a goes through a loop of symbolic links',
      'repository: links/b/x.yaml goes through a loop of symbolic links',
      'repository: links/self goes through a loop of symbolic links',
    ]);
  });
});
