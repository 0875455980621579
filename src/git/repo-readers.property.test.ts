/**
 * Generated link graphs against the real readers: chains (`u -> .` then
 * `u/u/../../..`), loops, runs of `..`, absolute targets, links to
 * directories and files, FIFOs, in a checked-out work tree and committed into
 * a real git repository. A sentinel file with unique content sits beside the
 * root, with a FIFO and a kustomization of the host: no read, listing or
 * materialized copy may ever hold the sentinel's bytes, nothing may hang (each
 * call is bounded), and where the work-tree guard lets a tree through, the
 * kernel itself resolves every link inside it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import fc from 'fast-check';
import { ValidationError } from '../errors.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import { materializeTree } from '../kustomize/materialized-kustomize.js';
import { gitSync } from '../../test/support/git.js';
import { FsRepoReader } from './fs-repo-reader.js';
import { GitObjectRepoReader } from './git-object-reader.js';
import { assertConfinedWorkTree } from './work-tree-guard.js';

const SENTINEL = `HOST-SENTINEL-${process.pid}-${Date.now()}-never-inside`;
const NAMES = ['u', 'a', 'b', 'kustomization.yaml'] as const;
/** Longest a single read may take before it counts as hanging. */
const BOUND_MS = 5_000;

type Node = { readonly path: string; readonly kind: 'file' | 'dir' | 'fifo' } | { readonly path: string; readonly kind: 'link'; readonly target: Target };
type Target =
  | { readonly relative: string }
  | { readonly absolute: 'sentinel' | 'outside' | 'fifo' | 'root' | 'root-file' }
  /** The finding's chain: up to the root, `u` k times (with `u -> .` they stay there), `..` k times, then `tail`. As text it never leaves the tree; through the kernel it climbs k levels out. */
  | { readonly chain: number; readonly tail: string };

const segment = fc.constantFrom(...NAMES);
const path = fc.oneof(
  { weight: 2, arbitrary: segment },
  { weight: 1, arbitrary: fc.array(segment, { minLength: 2, maxLength: 3 }).map((parts) => parts.join('/')) },
);
const target: fc.Arbitrary<Target> = fc
  .oneof(
    { weight: 1, arbitrary: fc.constantFrom('.', '..', 'u', 'a/b') },
    // A chain: names (a link back to `.` makes them stay in place), then about as many `..` (so the text stays
    // inside while the kernel climbs out), then the way to the host's files.
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          fc.array(fc.constantFrom('u', 'u', 'a', '.', 'b'), { maxLength: 6 }),
          fc.integer({ min: -1, max: 3 }),
          fc.constantFrom('', 'outside', 'outside/sentinel.txt', 'outside/fifo', 'outside/kustomization.yaml', 'a'),
        )
        .map(
          ([names, more, tail]) => [...names, ...Array<string>(Math.max(0, names.length + more)).fill('..'), ...(tail === '' ? [] : [tail])].join('/') || '.',
        ),
    },
  )
  .map((relativeTarget) => ({ relative: relativeTarget }) as Target);
const absoluteTarget: fc.Arbitrary<Target> = fc.constantFrom('sentinel', 'outside', 'fifo', 'root', 'root-file').map((absolute) => ({ absolute }) as Target);
const chainTarget: fc.Arbitrary<Target> = fc.record({
  chain: fc.integer({ min: 1, max: 4 }),
  tail: fc.constantFrom('', 'outside', 'outside/sentinel.txt', 'outside/fifo', 'outside/kustomization.yaml'),
});
const node = (withFifo: boolean): fc.Arbitrary<Node> =>
  fc.oneof(
    fc.record({ path, kind: fc.constantFrom(...(withFifo ? (['file', 'dir', 'fifo'] as const) : (['file', 'dir'] as const))) }),
    fc.record({
      path,
      kind: fc.constant('link' as const),
      target: fc.oneof({ weight: 3, arbitrary: target }, { weight: 2, arbitrary: chainTarget }, { weight: 1, arbitrary: absoluteTarget }),
    }),
  );
/** Most trees start with a link that loops in place (`u -> .` somewhere), the first link of a chain. */
const loop: fc.Arbitrary<Node> = fc.constantFrom('u', 'u', 'a/u').map((at) => ({ path: at, kind: 'link' as const, target: { relative: '.' } }));
const tree = (withFifo: boolean) =>
  fc
    .tuple(fc.option(loop, { freq: 4 }), fc.array(node(withFifo), { minLength: 1, maxLength: 8 }))
    .map(([first, rest]) => (first === null ? rest : [first, ...rest]));

let scratch: string;
/** The host beside the tree being probed (`<tree>/../outside`): one `..` too many reaches it. */
let outside: string;
const fifos: string[] = [];

/** A fresh `<dir>/repo` beside `<dir>/outside`, which holds the sentinel, a FIFO and a kustomization of the host. */
async function beside(dir: string): Promise<string> {
  outside = join(dir, 'outside');
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'sentinel.txt'), `${SENTINEL}\n`);
  await writeFile(join(outside, 'kustomization.yaml'), `# ${SENTINEL}\nresources: []\n`);
  mkfifo(join(outside, 'fifo'));
  return join(dir, 'repo');
}

function mkfifo(at: string): void {
  execFileSync('mkfifo', [at], { stdio: 'ignore' });
  fifos.push(at);
}

/** Writes `nodes` below `root`; a node whose parent cannot be made is left out. */
async function build(root: string, nodes: readonly Node[]): Promise<void> {
  await mkdir(root, { recursive: true });
  for (const entry of nodes) {
    const at = join(root, entry.path);
    try {
      // Never through a link: building must not write outside the tree.
      const parts = entry.path.split('/');
      for (let i = 1; i < parts.length; i++) {
        const parent = join(root, ...parts.slice(0, i));
        const stats = await lstat(parent).catch(() => undefined);
        if (stats === undefined) await mkdir(parent);
        else if (!stats.isDirectory()) throw new Error('not a directory');
      }
      if (entry.kind === 'link') {
        const t = entry.target;
        const linkTarget =
          'relative' in t
            ? t.relative
            : 'chain' in t
              ? [
                  ...Array<string>(parts.length - 1).fill('..'),
                  ...Array<string>(t.chain).fill('u'),
                  ...Array<string>(t.chain).fill('..'),
                  ...(t.tail === '' ? [] : [t.tail]),
                ].join('/')
              : { sentinel: join(outside, 'sentinel.txt'), outside, fifo: join(outside, 'fifo'), root, 'root-file': join(root, 'a') }[t.absolute];
        await symlink(linkTarget, at);
      } else if (entry.kind === 'file') await writeFile(at, `inside ${entry.path}\n`, { flag: 'wx' });
      else if (entry.kind === 'dir') await mkdir(at);
      else mkfifo(at);
    } catch {
      // The parent is a file, a link or a FIFO, or the path exists: that node is not in this tree.
    }
  }
}

/** Every path below `root` (not following links), repository-relative. */
async function pathsOf(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/')).filter((p) => !p.split('/').includes('.git'));
}

/** What each reader call may end in: an answer, or a refusal naming a repository path. Anything else, or a hang, fails. */
async function bounded<T>(what: string, call: () => Promise<T>): Promise<T | ValidationError> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${BOUND_MS} ms`)), BOUND_MS);
  });
  try {
    return await Promise.race([call(), hang]);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Reads, lists and asks about every path (and a few below each) through `reader`: none may hold the sentinel. */
async function probe(reader: RepoReader, root: string): Promise<void> {
  const paths = await pathsOf(root);
  const queries = new Set<string>();
  for (const p of paths)
    for (const suffix of ['', '/sentinel.txt', '/outside/sentinel.txt', '/kustomization.yaml', '/fifo', '/a']) queries.add(`${p}${suffix}`);
  for (const query of ['', ...queries]) {
    const listed = await bounded(`list ${query}`, () => reader.list(query));
    if (Array.isArray(listed)) {
      for (const file of listed) {
        const text = await bounded(`read listed ${file}`, () => reader.read(file));
        assert.ok(typeof text !== 'string' || !text.includes(SENTINEL), `listed ${file} read the host's sentinel`);
      }
    } else assert.doesNotMatch(listed.message, /HOST-SENTINEL/);
    if (query === '') continue;
    const text = await bounded(`read ${query}`, () => reader.read(query));
    if (typeof text === 'string') assert.ok(!text.includes(SENTINEL), `read ${query} returned the host's sentinel`);
    if (text instanceof ValidationError) {
      assert.ok(!text.message.includes(outside) && !text.message.includes(SENTINEL), text.message);
    }
    await bounded(`isDirectory ${query}`, () => reader.isDirectory(query));
  }
}

/** A copy made through `reader` holds no link and none of the host's bytes. */
async function probeCopy(reader: RepoReader, into: string): Promise<void> {
  await mkdir(into);
  const made = await bounded('materialize', () => materializeTree(reader, into));
  if (made instanceof ValidationError) return;
  for (const p of await pathsOf(into)) {
    const stats = await lstat(join(into, p));
    assert.ok(stats.isFile() || stats.isDirectory(), `${p} in the copy is neither a file nor a directory`);
    if (stats.isFile()) assert.ok(!(await readFile(join(into, p), 'utf8')).includes(SENTINEL), `${p} in the copy holds the sentinel`);
  }
}

/** Where the guard lets a tree through, the kernel resolves each of its links inside it (or not at all). */
async function assertKernelAgrees(root: string): Promise<void> {
  const realRoot = await realpath(root);
  for (const p of await pathsOf(root)) {
    if (!(await lstat(join(root, p))).isSymbolicLink()) continue;
    let real: string;
    try {
      real = await realpath(join(root, p));
    } catch {
      continue; // dangling or a loop: the kernel reaches nothing
    }
    const rel = relative(realRoot, real);
    assert.ok(
      !rel.startsWith('..') && !rel.startsWith('/') && rel.split(sep)[0] !== '.git',
      `the guard let ${p} through, and the kernel resolves it outside the tree`,
    );
  }
}

describe('repository readers against generated link graphs', { timeout: 600_000 }, () => {
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'repo-readers-'));
  });

  after(async () => {
    // A reader that did block on a FIFO gets its end of file, so no thread is left waiting.
    for (const fifo of fifos) {
      try {
        await (await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)).close();
      } catch {
        // No reader waiting.
      }
    }
    await rm(scratch, { recursive: true, force: true });
  });

  let run = 0;
  it('a checked-out work tree: the confined reader, the guard and a materialized copy never reach the host, and never hang', async () => {
    await fc.assert(
      fc.asyncProperty(tree(true), async (nodes) => {
        const root = await beside(join(scratch, `work-${run++}`));
        await build(root, nodes);
        await probe(new FsRepoReader(root), root);
        await probeCopy(new FsRepoReader(root), join(dirname(root), 'copy'));
        const guarded = await bounded('guard', () => assertConfinedWorkTree(root));
        if (!(guarded instanceof ValidationError)) await assertKernelAgrees(root);
        else assert.ok(!guarded.message.includes(outside) && !guarded.message.includes(SENTINEL), guarded.message);
      }),
      { numRuns: 80, endOnFailure: true },
    );
  });

  it('a commit in a real git repository: the object reader refuses every link by its path and never reaches the host', async () => {
    await fc.assert(
      fc.asyncProperty(tree(false), async (nodes) => {
        const root = await beside(join(scratch, `git-${run++}`));
        await build(root, nodes);
        gitSync(root, 'init', '--quiet');
        gitSync(root, 'add', '--all');
        gitSync(root, 'commit', '--quiet', '--allow-empty', '-m', 'generated');
        const reader = new GitObjectRepoReader(root);
        try {
          await probe(reader, root);
          await probeCopy(reader, join(dirname(root), 'copy'));
          // Every link the commit holds is refused by its own path, whatever it points at.
          const links = gitSync(root, 'ls-files', '--stage', '-z')
            .split('\0')
            .filter((record) => record.startsWith('120000 '))
            .map((record) => record.slice(record.indexOf('\t') + 1));
          for (const link of links) {
            const refused = await bounded(`read ${link}`, () => reader.read(link));
            assert.ok(
              refused instanceof ValidationError && refused.message.startsWith(`repository: ${link} is a symbolic link`),
              `${link}: ${String(refused)}`,
            );
          }
        } finally {
          reader.close();
        }
      }),
      { numRuns: 40, endOnFailure: true },
    );
  });
});
