/**
 * The landing queue: how scaffold runs racing for one branch stop wasting the
 * race. A run whose push lost announces its verified commit under
 * `refs/scaffold-queue/<branch>/<run>--<pass>`; whichever run lands next
 * carries every announced commit it may, recreated on top of its own, in the
 * same atomic push that deletes their announcements. One push then lands many
 * runs' commits, and a run finds its commit already on the branch by its
 * `Scaffold-Id` and `Scaffold-Pass` trailers.
 *
 * A commit is carried only when its verify verdict still holds on the new base,
 * by the same rule a run applies to its own rebase (rebaseNeedsReverify): it
 * changes nothing but regular files inside its own cluster's directory, and
 * nothing that run's verify read (its cluster, its reference environment, the
 * shared roots) changed since the commit's parent. Anything else waits for its
 * owner, who rebases and verifies again.
 *
 * A dead runner's announcement must not land after its run was declared lost:
 * declaring a run lost withdraws its announcements first (landed-commits.ts),
 * and an owner that gives up withdraws its own. Announcements older than
 * {@link CARRY_WINDOW_MS} (left by a killed CLI run) are not carried either;
 * a live owner renews its own.
 */
import { rebaseNeedsReverify } from '../runner/reverify-after-rebase.js';
import type { GitIdentity } from '../runner/ports.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { assertIdentity } from './git-identity.js';
import { changedPaths } from './remote-changes.js';
import type { GitResult } from './git-process.js';
import { isRunId } from '../model/run-id.js';

/** Announcements older than this are left for their owner (who renews at half of it). */
export const CARRY_WINDOW_MS = 120_000;
/** At most this many announced commits ride on one push. */
const MAX_CARRIED = 200;

/** What the queue needs of a working copy: its git, with the remote's credentials. */
export interface QueueGit {
  git(args: readonly string[], call?: { readonly okExitCodes?: readonly number[]; readonly input?: string; readonly env?: Readonly<Record<string, string>>; readonly signal?: AbortSignal; readonly network?: boolean }): Promise<GitResult>;
}

/** The trailers that make a commit a scaffold pass, and so queueable. */
export interface PassTrailers {
  readonly id: string;
  readonly pass: string;
  readonly cluster: string;
  readonly reference: string;
}

/** An announced commit, as fetched. */
export interface QueuedCommit extends PassTrailers {
  /** The remote ref that announces it. */
  readonly ref: string;
  readonly sha: string;
  readonly parents: readonly string[];
  /** Committer time, in ms since the epoch. */
  readonly committedAt: number;
  readonly author: GitIdentity;
  /** Author date as git reads it back (`<seconds> <zone>`). */
  readonly authorDate: string;
  readonly message: string;
}

const PASS = /^(infrastructure|all|upgrade)$/;
const SHA = /^[0-9a-f]{40,64}$/;

/** The ref prefix of `branch`'s queue. */
export function queuePrefix(branch: string): string {
  return `refs/scaffold-queue/${branch}/`;
}

/** The ref that announces pass `pass` of run `id` on `branch`. */
export function queueRef(branch: string, trailers: PassTrailers): string {
  return `${queuePrefix(branch)}${trailers.id}--${trailers.pass}`;
}

/** The refspec that fetches `branch`'s queue (pruned with `--prune`). */
export function queueRefspec(branch: string): string {
  return `+${queuePrefix(branch)}*:${queuePrefix(branch)}*`;
}

const TRAILER_FORMAT = ['Scaffold-Id', 'Scaffold-Pass', 'Scaffold-Cluster', 'Scaffold-Reference'].map((key) => `%(trailers:key=${key},valueonly,separator=%x2C)`);

function trailersFrom(fields: readonly string[]): PassTrailers | undefined {
  const [id = '', pass = '', cluster = '', reference = ''] = fields.map((field) => field.trim());
  if (!isRunId(id) || !PASS.test(pass) || !clusterNameSchema.safeParse(cluster).success || !clusterNameSchema.safeParse(reference).success) return undefined;
  return { id, pass, cluster, reference };
}

/** The scaffold trailers of `rev`, or undefined when it is not a scaffold pass commit (then it is pushed without the queue). */
export async function passTrailersOf(ws: QueueGit, rev: string): Promise<PassTrailers | undefined> {
  const log = await ws.git(['log', '-1', `--format=${TRAILER_FORMAT.join('%x00')}`, rev]);
  return trailersFrom(log.stdout.replace(/\n$/, '').split('\0'));
}

/** The announcements fetched for `branch`, oldest first; malformed ones are ignored. */
export async function readQueue(ws: QueueGit, branch: string): Promise<readonly QueuedCommit[]> {
  const refs = new Map<string, string[]>();
  const listed = await ws.git(['for-each-ref', '--format=%(objectname) %(refname)', queuePrefix(branch)]);
  for (const line of listed.stdout.split('\n').filter(Boolean)) {
    const [sha = '', ref = ''] = line.split(' ');
    if (SHA.test(sha)) refs.set(sha, [...(refs.get(sha) ?? []), ref]);
  }
  if (refs.size === 0) return [];
  // One `git log` for all of them (for-each-ref of git 2.39 applies every trailer `key=` to every trailers atom).
  // Records end in NUL (-z); fields are split by US, the message last, so a US inside it stays in it.
  const format = ['%H', '%P', '%ct', '%an', '%ae', '%ad', ...TRAILER_FORMAT, '%B'].join('%x1f');
  const commits = await ws.git(['log', '--no-walk=unsorted', '-z', '--date=raw', `--format=${format}`, ...refs.keys()]);
  const queued: QueuedCommit[] = [];
  for (const record of commits.stdout.split('\0').filter(Boolean)) {
    const [sha = '', parents = '', committed = '', name = '', email = '', authorDate = '', id = '', pass = '', cluster = '', reference = '', ...message] = record.split('\x1f');
    const trailers = trailersFrom([id, pass, cluster, reference]);
    if (!trailers) continue;
    // `<run>--<pass>` right under the prefix: a longer branch name sharing the prefix is another queue.
    for (const ref of refs.get(sha) ?? []) {
      if (ref !== queueRef(branch, trailers)) continue;
      const entry = { ...trailers, ref, sha, parents: parents.split(' ').filter(Boolean), committedAt: Number(committed) * 1000, author: { name, email }, authorDate, message: message.join('\x1f') };
      queued.push(entry);
    }
  }
  return queued.sort((a, b) => a.committedAt - b.committedAt || a.ref.localeCompare(b.ref));
}

/** The commit of pass `trailers.pass` of run `trailers.id` among the commits `tip` has and `base` has not. */
export async function landedPassCommit(ws: QueueGit, base: string, tip: string, trailers: PassTrailers): Promise<string | undefined> {
  const format = `%H%x00${TRAILER_FORMAT.slice(0, 2).join('%x00')}`;
  const log = await ws.git(['log', `--format=${format}`, `${base}..${tip}`]);
  for (const line of log.stdout.split('\n').filter(Boolean)) {
    const [sha = '', id = '', pass = ''] = line.split('\0');
    if (id.trim() === trailers.id && pass.trim() === trailers.pass) return sha;
  }
  return undefined;
}

/** Mode and path of every file each commit changes against its parent, in one `git diff-tree --stdin`. */
async function ownChanges(ws: QueueGit, entries: readonly QueuedCommit[]): Promise<Map<string, { mode: string; path: string }[]>> {
  const raw = await ws.git(['diff-tree', '--stdin', '-r', '--raw', '-z', '--no-renames', '--no-abbrev'], { input: entries.map((entry) => `${entry.sha}\n`).join('') });
  const changes = new Map<string, { mode: string; path: string }[]>(entries.map((entry) => [entry.sha, []]));
  let current: { mode: string; path: string }[] | undefined;
  const tokens = raw.stdout.split('\0');
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] ?? '';
    if (SHA.test(token)) current = changes.get(token);
    else if (token.startsWith(':')) current?.push({ mode: token.split(' ')[1] ?? '', path: tokens[++i] ?? '' });
  }
  return changes;
}

/** How far back along the branch a queued commit's parent is looked for in one `git log`; older ones cost a diff each. */
const HISTORY_WINDOW = 1_000;

/** What changed on the branch since each parent: read once from the branch's history, then grown with every commit carried. */
class ChangesSince {
  /** Paths each commit of the branch's first-parent line changed, newest first. */
  #history: { sha: string; paths: string[] }[] | undefined;
  readonly #byParent = new Map<string, Set<string> | undefined>();

  constructor(
    private readonly ws: QueueGit,
    private readonly tip: string,
  ) {}

  /** The paths changed from `parent` to the chain's tip, or undefined when `parent` is not on the branch. */
  async of(parent: string): Promise<ReadonlySet<string> | undefined> {
    if (!this.#byParent.has(parent)) this.#byParent.set(parent, await this.#read(parent));
    return this.#byParent.get(parent);
  }

  async #read(parent: string): Promise<Set<string> | undefined> {
    if (this.#history === undefined) {
      const log = await this.ws.git(['log', '--first-parent', '--diff-merges=first-parent', '--no-renames', '--name-only', '--format=%x1e%H', `-n${HISTORY_WINDOW}`, this.tip]);
      this.#history = log.stdout
        .split('\x1e')
        .filter(Boolean)
        .map((record) => {
          const [sha = '', ...paths] = record.split('\n').filter(Boolean);
          return { sha, paths };
        });
    }
    const index = this.#history.findIndex((commit) => commit.sha === parent);
    if (index >= 0) return new Set(this.#history.slice(0, index).flatMap((commit) => commit.paths));
    // Further back, or off the first-parent line: ask git.
    if ((await this.ws.git(['merge-base', '--is-ancestor', parent, this.tip], { okExitCodes: [0, 1] })).exitCode !== 0) return undefined;
    return new Set(await changedPaths(this.ws, parent, this.tip));
  }

  /** A commit went onto the chain: it changed `paths` for everyone queued behind it. */
  add(paths: readonly string[]): void {
    for (const set of this.#byParent.values()) for (const path of paths) set?.add(path);
  }
}

function isIdentity(identity: GitIdentity): boolean {
  try {
    assertIdentity(identity, 'author');
    return true;
  } catch {
    return false;
  }
}

/** Why `entry` may not ride on the chain, or undefined when it may. */
function carryRefusal(entry: QueuedCommit, own: readonly { mode: string; path: string }[], since: ReadonlySet<string> | undefined, now: number): string | undefined {
  if (now - entry.committedAt > CARRY_WINDOW_MS) return 'announced too long ago';
  if (entry.parents.length !== 1) return 'not a single-parent commit';
  if (since === undefined) return 'its parent is not on the branch';
  if (!isIdentity(entry.author)) return 'its author is not a valid identity';
  // Its own change: regular files inside its cluster's directory only (no symlink, no submodule).
  for (const { mode, path } of own) {
    if (!path.startsWith(`clusters/${entry.cluster}/`)) return `it changes ${path}, outside its cluster`;
    if (!['100644', '100755', '000000'].includes(mode)) return `it writes ${path} with mode ${mode}`;
  }
  // What changed under it since it was verified.
  if (rebaseNeedsReverify([...since], entry.cluster, entry.reference)) return 'what its verify read has changed';
  return undefined;
}

/**
 * The carried commits recreated on top of `tip` in one `git fast-import`: each
 * is the commit before it with `clusters/<cluster>` set to the tree the queued
 * commit has there (its author, date and message kept). That is the three-way
 * merge, because carrying required that nothing else changed there and that
 * the queued commit changed nothing else.
 * @returns the new tip
 */
async function recreateChain(ws: QueueGit, entries: readonly QueuedCommit[], tip: string, committer: GitIdentity, now: number): Promise<string> {
  const subtrees = await ws.git(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { input: entries.map((entry) => `${entry.sha}:clusters/${entry.cluster}\n`).join('') });
  const lines = subtrees.stdout.split('\n');
  const ref = 'refs/scaffold-carry/chain';
  const chunks: string[] = [`reset ${ref}\nfrom ${tip}\n\n`];
  const when = `${Math.floor(now / 1000)} +0000`;
  for (const [i, entry] of entries.entries()) {
    const [tree = '', type = ''] = (lines[i] ?? '').split(' ');
    const change = type === 'tree' && SHA.test(tree) ? `M 040000 ${tree} clusters/${entry.cluster}` : `D clusters/${entry.cluster}`;
    chunks.push(
      `commit ${ref}\n`,
      `author ${entry.author.name} <${entry.author.email}> ${entry.authorDate}\n`,
      `committer ${committer.name} <${committer.email}> ${when}\n`,
      `data ${Buffer.byteLength(entry.message)}\n${entry.message}\n`,
      `${change}\n\n`,
    );
  }
  chunks.push('done\n');
  await ws.git(['fast-import', '--quiet', '--force', '--done'], { input: chunks.join('') });
  return (await ws.git(['rev-parse', '--verify', `${ref}^{commit}`])).stdout.trim();
}

/** What {@link carryQueued} put on top of the tip. */
export interface CarriedChain {
  /** The new tip: `tip` itself when nothing was carried. */
  readonly tip: string;
  readonly carried: readonly QueuedCommit[];
  /** Entries left for their owners, with the reason. */
  readonly left: readonly { readonly entry: QueuedCommit; readonly reason: string }[];
}

/**
 * Recreates every carryable announced commit on top of `tip`, one after the
 * other, so each is checked against everything carried before it.
 */
export async function carryQueued(ws: QueueGit, queued: readonly QueuedCommit[], tip: string, committer: GitIdentity, now = Date.now()): Promise<CarriedChain> {
  const carried: QueuedCommit[] = [];
  const left: { entry: QueuedCommit; reason: string }[] = [];
  if (queued.length === 0) return { tip, carried, left };
  const changes = await ownChanges(ws, queued);
  const since = new ChangesSince(ws, tip);
  for (const entry of queued) {
    if (carried.length >= MAX_CARRIED) break;
    const own = changes.get(entry.sha) ?? [];
    const parent = entry.parents.length === 1 ? entry.parents[0] : undefined;
    const refusal = carryRefusal(entry, own, parent === undefined ? undefined : await since.of(parent), now);
    if (refusal !== undefined) {
      left.push({ entry, reason: refusal });
      continue;
    }
    carried.push(entry);
    since.add(own.map(({ path }) => path));
  }
  if (carried.length === 0) return { tip, carried, left };
  return { tip: await recreateChain(ws, carried, tip, committer, now), carried, left };
}
