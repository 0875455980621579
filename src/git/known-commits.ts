/**
 * Answers a working copy already has, so it does not ask git again: HEAD read
 * from the ref files (what `git rev-parse HEAD` prints, without a process), and
 * what the workspace learned about the commits it made itself (parents, tree,
 * pass trailers, the paths it changed), read once with the commit. A commit's
 * id names its content for good, so these never go stale; a HEAD that moved by
 * any other means is simply a commit this cache does not know.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type PassTrailers, type QueueGit, TRAILER_FORMAT, trailersFrom } from './landing-queue.js';

/** What a commit is. */
export interface CommitFacts {
  readonly parents: readonly string[];
  readonly tree: string;
  /** Its scaffold pass trailers, as `passTrailersOf` reads them; undefined when it is no pass commit. */
  readonly trailers: PassTrailers | undefined;
  /** Every path it changes against its (single) parent, when the workspace saw it staged. */
  readonly changed?: readonly string[];
}

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
/** A workspace makes a handful of commits; carried chains are not remembered. */
const LIMIT = 64;

/** Facts of the commits a workspace made, by id (bounded: the oldest go first). */
export class KnownCommits {
  readonly #facts = new Map<string, CommitFacts>();

  get(sha: string): CommitFacts | undefined {
    return this.#facts.get(sha);
  }

  set(sha: string, facts: CommitFacts): void {
    this.#facts.delete(sha);
    this.#facts.set(sha, facts);
    if (this.#facts.size > LIMIT) this.#facts.delete(this.#facts.keys().next().value!);
  }

  /** Whether `sha` is HEAD (`head`) or its parent by what is known; false means "unknown", not "no". */
  isAncestorOrSelf(sha: string, head: string): boolean {
    return sha === head || (this.#facts.get(head)?.parents.includes(sha) ?? false);
  }
}

/** Reads the facts of `rev` in one `git log`: its id and what {@link CommitFacts} holds but `changed`. */
export async function readCommitFacts(ws: QueueGit, rev: string): Promise<{ readonly sha: string; readonly facts: CommitFacts }> {
  const log = await ws.git(['log', '-1', `--format=%H%x00%T%x00%P%x00${TRAILER_FORMAT.join('%x00')}`, rev]);
  const [sha = '', tree = '', parents = '', ...trailers] = log.stdout.replace(/\n$/, '').split('\0');
  return { sha, facts: { tree, parents: parents.split(' ').filter(Boolean), trailers: trailersFrom(trailers) } };
}

/** The commit a loose ref file names: its id and a newline, nothing else (a symbolic ref or anything odd: undefined). */
function looseRef(content: string): string | undefined {
  const sha = content.trim();
  return SHA.test(sha) && content === `${sha}\n` ? sha : undefined;
}

/**
 * The commit HEAD names, read from `.git/HEAD` and the loose ref it points to:
 * what `git rev-parse --verify HEAD^{commit}` answers for a branch checked out
 * in a working copy of the files backend. Undefined when that is not how the
 * copy stores it (an unborn or packed branch, a reftable, anything unexpected):
 * the caller asks git then.
 */
export async function headFromFiles(dir: string, gitDir: string = join(dir, '.git')): Promise<string | undefined> {
  try {
    const head = await readFile(join(gitDir, 'HEAD'), 'utf8');
    const detached = head.trim();
    if (SHA.test(detached) && head === `${detached}\n`) return detached;
    const ref = /^ref: (refs\/heads\/[^\n]+)\n$/.exec(head)?.[1];
    if (ref === undefined || ref.split('/').some((part) => part === '' || part === '.' || part === '..')) return undefined;
    return looseRef(await readFile(join(gitDir, ref), 'utf8'));
  } catch {
    return undefined;
  }
}

/** A full ref name as the files backend stores it under the git directory: no empty, `.` or `..` component. */
const REF_PATH = /^refs\/(?:[A-Za-z0-9_.+=-]+\/)*[A-Za-z0-9_.+=-]+$/;

/**
 * What a ref that names a commit (a remote-tracking branch, an announcement)
 * points at, read from the files backend as git reads it: the loose ref file,
 * else its line in `packed-refs`. `null` when neither names it (git says there
 * is no such ref); undefined when the files do not say (a symbolic or malformed
 * ref, a reftable repository, an unreadable file): the caller asks git then.
 * Saves a `git rev-parse` process (about 10 ms of a busy machine's CPU) for
 * each look a waiting run takes at what a fetch wrote.
 */
export async function refFromFiles(gitDir: string, ref: string): Promise<string | null | undefined> {
  if (!REF_PATH.test(ref) || ref.split('/').some((part) => part === '.' || part === '..')) return undefined;
  try {
    if (existsSync(join(gitDir, 'reftable'))) return undefined;
    const loose = await readFile(join(gitDir, ref), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (loose !== null) return looseRef(loose);
    const packed = await readFile(join(gitDir, 'packed-refs'), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    for (const line of packed.split('\n')) {
      if (!line.endsWith(` ${ref}`)) continue;
      const sha = line.slice(0, -ref.length - 1);
      return SHA.test(sha) ? sha : undefined;
    }
    return null;
  } catch {
    return undefined;
  }
}
