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
import { identityEnv } from './git-identity.js';
import { changedPaths } from './remote-changes.js';
import type { GitResult } from './git-process.js';

/** Announcements older than this are left for their owner (who renews at half of it). */
export const CARRY_WINDOW_MS = 120_000;
/** At most this many announced commits ride on one push. */
const MAX_CARRIED = 32;

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
}

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const PASS = /^(infrastructure|all)$/;
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
  if (!RUN_ID.test(id) || !PASS.test(pass) || !clusterNameSchema.safeParse(cluster).success || !clusterNameSchema.safeParse(reference).success) return undefined;
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
  // Trailers through `git log`: for-each-ref of git 2.39 applies every `key=` filter to every trailers atom.
  const format = ['%H', '%P', '%ct', ...TRAILER_FORMAT].join('%x00');
  const commits = await ws.git(['log', '--no-walk=unsorted', `--format=${format}`, ...refs.keys()]);
  const queued: QueuedCommit[] = [];
  for (const line of commits.stdout.split('\n').filter(Boolean)) {
    const [sha = '', parents = '', committed = '', ...rest] = line.split('\0');
    const trailers = trailersFrom(rest);
    if (!trailers) continue;
    // `<run>--<pass>` right under the prefix: a longer branch name sharing the prefix is another queue.
    for (const ref of refs.get(sha) ?? []) {
      if (ref === queueRef(branch, trailers)) queued.push({ ...trailers, ref, sha, parents: parents.split(' ').filter(Boolean), committedAt: Number(committed) * 1000 });
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

/** Why `entry` may not ride on `tip`, or undefined when it may. */
async function carryRefusal(ws: QueueGit, entry: QueuedCommit, tip: string, now: number): Promise<string | undefined> {
  if (now - entry.committedAt > CARRY_WINDOW_MS) return 'announced too long ago';
  const [parent] = entry.parents;
  if (entry.parents.length !== 1 || parent === undefined) return 'not a single-parent commit';
  if ((await ws.git(['merge-base', '--is-ancestor', parent, tip], { okExitCodes: [0, 1] })).exitCode !== 0) return 'its parent is not on the branch';
  // Its own change: regular files inside its cluster's directory only (no symlink, no submodule).
  const raw = await ws.git(['diff', '--raw', '-z', '--no-renames', '--no-abbrev', parent, entry.sha, '--']);
  const fields = raw.stdout.split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [, newMode = ''] = (fields[i] ?? '').split(' ');
    const path = fields[i + 1] ?? '';
    if (!path.startsWith(`clusters/${entry.cluster}/`)) return `it changes ${path}, outside its cluster`;
    if (!['100644', '100755', '000000'].includes(newMode)) return `it writes ${path} with mode ${newMode}`;
  }
  // What changed under it since it was verified.
  if (rebaseNeedsReverify(await changedPaths(ws, parent, tip), entry.cluster, entry.reference)) return 'what its verify read has changed';
  return undefined;
}

/** `entry` recreated on top of `tip` (its author and message kept), or undefined when the trees do not merge cleanly. */
async function recreate(ws: QueueGit, entry: QueuedCommit, tip: string, committer: GitIdentity): Promise<string | undefined> {
  const merged = await ws.git(['merge-tree', '--write-tree', '--no-messages', tip, entry.sha], { okExitCodes: [0, 1] });
  const tree = merged.stdout.split('\n')[0]?.trim() ?? '';
  if (merged.exitCode !== 0 || !SHA.test(tree)) return undefined;
  const meta = await ws.git(['log', '-1', '--format=%an%x00%ae%x00%ad%x00%B', '--date=raw', entry.sha]);
  const [name = '', email = '', date = '', ...message] = meta.stdout.split('\0');
  const author = { name, email };
  const env = { ...identityEnv(author, committer), GIT_AUTHOR_DATE: date };
  const commit = await ws.git(['commit-tree', '--no-gpg-sign', tree, '-p', tip, '-F', '-'], { input: message.join('\0'), env });
  return commit.stdout.trim();
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
  let chain = tip;
  const carried: QueuedCommit[] = [];
  const left: { entry: QueuedCommit; reason: string }[] = [];
  for (const entry of queued) {
    if (carried.length >= MAX_CARRIED) break;
    const refusal = await carryRefusal(ws, entry, chain, now);
    const next = refusal === undefined ? await recreate(ws, entry, chain, committer) : undefined;
    if (next === undefined) {
      left.push({ entry, reason: refusal ?? 'its tree does not merge cleanly' });
      continue;
    }
    chain = next;
    carried.push(entry);
  }
  return { tip: chain, carried, left };
}
