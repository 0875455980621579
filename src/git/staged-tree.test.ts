/**
 * stagedTreeId against git itself: generated trees (nested directories, names
 * that sort differently with and without the `/` git appends to a subtree's
 * name, non-ASCII names, executables, symlinks, gitlinks) are staged in real
 * repositories, sha1 and sha256, and every directory's computed id must be the
 * one `git write-tree` writes. Then the case it exists for: a sparse index,
 * read with `ls-files --sparse` without expanding it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { gitSync } from '../../test/support/git.js';
import { parseStagedEntries, stagedTreeId, type StagedEntry } from './staged-tree.js';

type Format = 'sha1' | 'sha256';
type Kind = 'file' | 'exec' | 'link' | 'gitlink';
interface Staged {
  readonly path: string;
  readonly kind: Kind;
  readonly content: string;
}

// `a-` (0x2d) and `a.b` (0x2e) sort before a directory `a` (compared as `a/`, 0x2f) but after a file `a`; `a0`
// after both. `ｚ` (U+FF5A) against `😀` (U+1F600) orders one way in UTF-16 and the other in UTF-8 bytes.
const NAMES = ['a', 'a-', 'a-b', 'a.b', 'a0', 'ab', 'b', 'kustomization.yaml', 'é', 'ｚ', '😀', 'with space'] as const;

const stagedEntry: fc.Arbitrary<Staged> = fc.record({
  path: fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }).map((names) => names.join('/')),
  kind: fc.oneof(
    { weight: 4, arbitrary: fc.constant<Kind>('file') },
    { weight: 2, arbitrary: fc.constant<Kind>('exec') },
    { weight: 1, arbitrary: fc.constant<Kind>('link') },
    { weight: 1, arbitrary: fc.constant<Kind>('gitlink') },
  ),
  content: fc.constantFrom('', 'x\n', 'y\n', 'target', '../a'),
});
/** A tree an index can hold: an entry whose path is taken, or lies below a file, or above one, is dropped. */
const stagedTree: fc.Arbitrary<Staged[]> = fc.array(stagedEntry, { minLength: 1, maxLength: 14 }).map((entries) => {
  const files = new Set<string>();
  const dirs = new Set<string>();
  return entries.filter(({ path }) => {
    const parents = ancestors(path);
    if (files.has(path) || dirs.has(path) || parents.some((parent) => files.has(parent))) return false;
    files.add(path);
    for (const parent of parents) dirs.add(parent);
    return true;
  });
});

/** `a/b/c` → `['a', 'a/b']`. */
function ancestors(path: string): string[] {
  const names = path.split('/');
  return names.slice(1).map((_, index) => names.slice(0, index + 1).join('/'));
}

let scratch: string;

function newRepository(name: string, format: Format): string {
  gitSync(scratch, 'init', '-q', `--object-format=${format}`, name);
  return join(scratch, name);
}

/** Replaces the work tree and the index of `repo` with `tree`, staged by `git add` (and `update-index` for gitlinks). */
function stage(repo: string, format: Format, tree: readonly Staged[]): void {
  for (const name of readdirSync(repo)) if (name !== '.git') rmSync(join(repo, name), { recursive: true, force: true });
  rmSync(join(repo, '.git', 'index'), { force: true });
  for (const { path, kind, content } of tree) {
    if (kind === 'gitlink') continue;
    const at = join(repo, path);
    mkdirSync(dirname(at), { recursive: true });
    if (kind === 'link') symlinkSync(content || 'target', at);
    else {
      writeFileSync(at, content);
      chmodSync(at, kind === 'exec' ? 0o755 : 0o644);
    }
  }
  gitSync(repo, 'add', '-A', '.');
  for (const { path, kind } of tree) {
    // A commit nobody has: a gitlink's object is never looked up, not by update-index nor by write-tree.
    if (kind === 'gitlink') gitSync(repo, 'update-index', '--add', '--cacheinfo', `160000,${createHash(format).update(path).digest('hex')},${path}`);
  }
}

/** The tree id of every directory git writes for the index, by path (`''` the root). */
function treesGitWrites(repo: string): Map<string, string> {
  const root = gitSync(repo, 'write-tree').trim();
  const trees = new Map([['', root]]);
  for (const record of gitSync(repo, 'ls-tree', '-r', '-t', '-z', root).split('\0')) {
    const match = /^040000 tree ([0-9a-f]+)\t(.+)$/s.exec(record);
    if (match !== null) trees.set(match[2]!, match[1]!);
  }
  return trees;
}

function stagedEntries(repo: string, ...pathspec: string[]): StagedEntry[] {
  return parseStagedEntries(gitSync(repo, 'ls-files', '--sparse', '-s', '-z', ...(pathspec.length > 0 ? ['--', ...pathspec] : [])));
}

/** Stages `tree` and holds every directory's computed id (from the whole index and from `ls-files -- <dir>/`) to git's. */
function agreesWithGit(repo: string, format: Format, tree: readonly Staged[], pick: number): void {
  stage(repo, format, tree);
  const entries = stagedEntries(repo);
  const trees = treesGitWrites(repo);
  // What was generated is what git holds: every directory of the tree, and only those, is a tree of git's.
  assert.deepEqual([...trees.keys()].sort(), ['', ...new Set(tree.flatMap(({ path }) => ancestors(path)))].sort());
  for (const [prefix, id] of trees) assert.equal(stagedTreeId(entries, prefix, format), id, `tree at ${JSON.stringify(prefix)}`);

  // As a pass commit reads it: only the entries below the directory, which is what the sparse index lists in full.
  const dirs = [...trees.keys()].filter((prefix) => prefix !== '');
  const prefix = dirs[pick % Math.max(1, dirs.length)];
  if (prefix !== undefined) {
    const root = trees.get('')!;
    assert.equal(stagedTreeId(stagedEntries(repo, `${prefix}/`), prefix, format), gitSync(repo, 'rev-parse', `${root}:${prefix}`).trim());
  }

  // Nothing below: a directory the index lacks, and a path holding a file or gitlink, have no tree.
  assert.deepEqual(stagedEntries(repo, 'absent/'), []);
  assert.equal(stagedTreeId(entries, 'absent', format), '');
  assert.equal(stagedTreeId(entries, 'a/absent/deeper', format), '');
  const file = tree[pick % tree.length]!;
  assert.equal(stagedTreeId(entries, file.path, format), '');
}

describe('stagedTreeId', () => {
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gs-staged-tree-'));
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('computes the tree git writes for every directory of generated trees (sha1)', () => {
    const repo = newRepository('sha1', 'sha1');
    fc.assert(
      fc.property(stagedTree, fc.nat(), (tree, pick) => agreesWithGit(repo, 'sha1', tree, pick)),
      { numRuns: 35 },
    );
  });

  it('computes the tree git writes in a sha256 repository', () => {
    const repo = newRepository('sha256', 'sha256');
    fc.assert(
      fc.property(stagedTree, fc.nat(), (tree, pick) => agreesWithGit(repo, 'sha256', tree, pick)),
      { numRuns: 4 },
    );
  });

  it('orders siblings as git does around the `/` of a subtree name', () => {
    const repo = newRepository('tricky', 'sha1');
    const tree: Staged[] = ['a/x', 'a-', 'a.b', 'a0', 'a-b/y', 'ab', 'é', '😀', 'ｚ/x', 'a/a-', 'a/a/x'].map((path) => ({ path, kind: 'file', content: path }));
    agreesWithGit(repo, 'sha1', [...tree, { path: 'a/sub', kind: 'gitlink', content: '' }, { path: 'a/run', kind: 'exec', content: '#!/bin/sh\n' }], 0);
  });

  it('reads a cluster inside the cone of a sparse index, and refuses the sparse directory of one outside it', () => {
    const repo = newRepository('sparse', 'sha1');
    stage(repo, 'sha1', [
      { path: 'clusters/a/kustomization.yaml', kind: 'file', content: 'a\n' },
      { path: 'clusters/a/flux/sync.yaml', kind: 'file', content: 's\n' },
      { path: 'clusters/a/bin/hook', kind: 'exec', content: '#!/bin/sh\n' },
      { path: 'clusters/a-b/x.yaml', kind: 'file', content: 'x\n' },
      { path: 'clusters/b/kustomization.yaml', kind: 'file', content: 'b\n' },
      { path: 'clusters/b/flux/sync.yaml', kind: 'file', content: 's\n' },
      { path: 'README.md', kind: 'file', content: 'r\n' },
    ]);
    gitSync(repo, 'commit', '-q', '-m', 'initial');
    gitSync(repo, 'sparse-checkout', 'set', '--cone', '--sparse-index', 'clusters/a');
    // A pass's change, staged but not committed: the id must be the index's, not HEAD's.
    writeFileSync(join(repo, 'clusters/a/flux/new.yaml'), 'n\n');
    gitSync(repo, 'add', 'clusters/a');

    const whole = gitSync(repo, 'ls-files', '--sparse', '-s', '-z');
    assert.match(whole, /(?:^|\0)040000 [0-9a-f]{40} 0\tclusters\/b\/\0/, 'the index is sparse: clusters/b is one directory entry');
    const inCone = stagedEntries(repo, 'clusters/a/');
    assert.deepEqual(
      inCone.map(({ path }) => path),
      ['clusters/a/bin/hook', 'clusters/a/flux/new.yaml', 'clusters/a/flux/sync.yaml', 'clusters/a/kustomization.yaml'],
    );
    const id = stagedTreeId(inCone, 'clusters/a', 'sha1');
    assert.notEqual(id, gitSync(repo, 'rev-parse', 'HEAD:clusters/a').trim());

    // clusters/a-b, a sibling that sorts before clusters/a/, is outside the cone too: the first entry refused.
    assert.throws(() => parseStagedEntries(whole), /sparse-directory entry "clusters\/a-b\/"/);
    assert.throws(() => stagedEntries(repo, 'clusters/b/'), /sparse-directory entry/);
    // Asked last: write-tree expands the sparse index, the cost this module avoids.
    assert.equal(id, gitSync(repo, 'rev-parse', `${gitSync(repo, 'write-tree').trim()}:clusters/a`).trim());
  });
});

describe('parseStagedEntries', () => {
  const oid = 'd00491fd7e5bb6fa28c517a0bb32b8b506539d4d';

  it('parses NUL-separated records, paths verbatim', () => {
    assert.deepEqual(parseStagedEntries(''), []);
    assert.deepEqual(parseStagedEntries(`100644 ${oid} 0\ta b/é\n\t"x"\x00120000 ${'0'.repeat(64)} 0\tlink\0`), [
      { mode: '100644', oid, path: 'a b/é\n\t"x"' },
      { mode: '120000', oid: '0'.repeat(64), path: 'link' },
    ]);
  });

  it('refuses malformed records', () => {
    for (const bad of [
      'garbage\0',
      `100644 ${oid} 0 path\0`,
      `100644 ${oid.slice(1)} 0\tpath\0`,
      `100644 ${oid.toUpperCase()} 0\tpath\0`,
      `100644 ${oid} 0\t\0`,
      `100644 ${oid}\tpath\0`,
      `10644 ${oid} 0\tpath\0`,
      `100644 ${oid} 0\tpath\0\x00100644 ${oid} 0\tother\0`,
      `100644 ${oid} 0\ta//b\0`,
      `100644 ${oid} 0\t../b\0`,
      `100644 ${oid} 0\tdir/\0`,
    ]) {
      assert.throws(() => parseStagedEntries(bad), Error, JSON.stringify(bad));
    }
  });

  it('refuses unmerged entries: an index with conflicts has no tree', () => {
    for (const stage of ['1', '2', '3']) {
      assert.throws(() => parseStagedEntries(`100644 ${oid} 0\tok\x00100644 ${oid} ${stage}\tconflicted\0`), /unmerged index entry \(stage [123]\)/);
    }
  });

  it('refuses modes no index entry has, and sparse directories', () => {
    for (const mode of ['100664', '100600', '040000', '000000', '120755']) {
      assert.throws(() => parseStagedEntries(`${mode} ${oid} 0\tpath\0`), /has mode/, mode);
    }
    assert.throws(() => parseStagedEntries(`040000 ${oid} 0\tclusters/b/\0`), /sparse-directory entry/);
  });
});

describe('stagedTreeId refusals', () => {
  const oid = 'd00491fd7e5bb6fa28c517a0bb32b8b506539d4d';

  it('refuses a mode, an object id or a prefix it cannot hash', () => {
    const entry = (mode: string, id = oid): StagedEntry => ({ mode: mode as StagedEntry['mode'], oid: id, path: 'c/x' });
    assert.throws(() => stagedTreeId([entry('040000')], 'c', 'sha1'), /has mode 040000/);
    assert.throws(() => stagedTreeId([entry('100664')], 'c', 'sha1'), /has mode 100664/);
    assert.throws(() => stagedTreeId([entry('100644')], 'c', 'sha256'), /not a sha256 id/);
    assert.throws(() => stagedTreeId([entry('100644', 'z'.repeat(40))], 'c', 'sha1'), /not a sha1 id/);
    assert.throws(() => stagedTreeId([entry('100644'), entry('100644')], 'c', 'sha1'), /collides/);
    assert.throws(() => stagedTreeId([entry('100644'), { mode: '100644', oid, path: 'c/x/y' }], 'c', 'sha1'), /not a directory/);
    for (const prefix of ['c/', '/c', 'c//d', './c']) assert.throws(() => stagedTreeId([entry('100644')], prefix, 'sha1'), /not a path/, prefix);
    // Entries outside the prefix are not looked at: they need not even be valid for it.
    assert.equal(stagedTreeId([entry('100644', 'z')], 'other', 'sha1'), '');
  });
});
