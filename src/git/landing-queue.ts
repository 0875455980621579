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
 * Anyone who can push a ref can plant one under the queue's prefix, so an
 * announcement is carried only when it is authenticated (queue-auth.ts): its
 * ref name carries an HMAC over the run, attempt, pass, cluster, parent, tree,
 * commit and issue time, keyed by the secret the service shares with its
 * runners. Its age is the issuer's MAC-covered issue time (a future one
 * beyond {@link MAX_CLOCK_SKEW_MS} is refused) and how long this carrier has
 * seen the ref, never the commit's own dates. A reserved cluster (the
 * reference environment, base, flux-system) is never carried, and what an
 * announced commit changes is read from its tree diff, not its trailers.
 * Whatever can never land is deleted by the carrier's landing push.
 *
 * A dead runner's announcement must not land after its run was declared lost:
 * declaring a run lost withdraws its announcements first (landed-commits.ts),
 * and an owner that gives up withdraws its own. Announcements older than
 * {@link CARRY_WINDOW_MS} (left by a killed CLI run) are not carried either;
 * a live owner renews its own.
 */
import { rebaseNeedsReverify } from '../model/rebase-needs-reverify.js';
import type { GitIdentity } from '../run/ports.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { assertIdentity } from './git-identity.js';
import { changedPaths } from './remote-changes.js';
import type { GitResult } from './git-process.js';
import { isRunId } from '../model/run-id.js';
import { type QueueAuth, announcementAuthentic } from './queue-auth.js';
import { type FenceView, fenceRef } from './attempt-fence.js';

/** Announcements older than this are never carried (their owner renews at half of it), and deleted. */
export const CARRY_WINDOW_MS = 120_000;
/** How far ahead of the carrier's clock an issuer's clock may be. */
export const MAX_CLOCK_SKEW_MS = 30_000;
/** Clusters no announcement may write, whatever its MAC: every cluster reads them. */
export const ALWAYS_RESERVED = ['base', 'flux-system'] as const;
/** At most this many announced commits ride on one push. */
const MAX_CARRIED = 200;

/** What the queue needs of a working copy: its git, with the remote's credentials. */
export interface QueueGit {
  git(
    args: readonly string[],
    call?: {
      readonly okExitCodes?: readonly number[];
      readonly input?: string;
      readonly env?: Readonly<Record<string, string>>;
      readonly signal?: AbortSignal;
      readonly network?: boolean;
    },
  ): Promise<GitResult>;
}

/** The trailers that make a commit a scaffold pass, and so queueable. */
export interface PassTrailers {
  readonly id: string;
  readonly pass: string;
  readonly cluster: string;
  readonly reference: string;
}

/** What an announcement's ref name says besides the run and pass. */
export interface AnnouncementName {
  readonly id: string;
  readonly pass: string;
  readonly attempt: number;
  /** ms since the epoch, by the issuing runner's clock (MAC-covered). */
  readonly issuedAt: number;
  readonly mac: string;
}

/** An announced commit, as fetched. */
export interface QueuedCommit extends PassTrailers {
  /** The remote ref that announces it. */
  readonly ref: string;
  readonly sha: string;
  readonly parents: readonly string[];
  readonly tree: string;
  readonly attempt: number;
  readonly issuedAt: number;
  /** Whether its MAC holds under the carrier's key (always false for a key of the carrier's own). */
  readonly authentic: boolean;
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

/** The ref that announces a commit of pass `pass` of run `id` on `branch`: `<id>--<pass>--<attempt>--<issued ms>--<mac>`. */
export function queueRef(branch: string, name: AnnouncementName): string {
  return `${queuePrefix(branch)}${name.id}--${name.pass}--${name.attempt}--${name.issuedAt}--${name.mac}`;
}

const NAME = /^(.+)--(infrastructure|all|upgrade)--([1-9][0-9]{0,5})--([0-9]{1,15})--([0-9a-f]{64})$/;

/** The fields of a ref name under `branch`'s queue; undefined when it is not a well-formed announcement. */
export function parseQueueRef(branch: string, ref: string): AnnouncementName | undefined {
  if (!ref.startsWith(queuePrefix(branch))) return undefined;
  const match = NAME.exec(ref.slice(queuePrefix(branch).length));
  if (match === null || !isRunId(match[1]!)) return undefined;
  return { id: match[1]!, pass: match[2]!, attempt: Number(match[3]), issuedAt: Number(match[4]), mac: match[5]! };
}

/** Whether `ref` sits right under `branch`'s queue (a longer branch name sharing the prefix has a queue of its own). */
export function inQueueOf(branch: string, ref: string): boolean {
  return ref.startsWith(queuePrefix(branch)) && !ref.slice(queuePrefix(branch).length).includes('/');
}

/** The refspec that fetches `branch`'s queue (pruned with `--prune`). */
export function queueRefspec(branch: string): string {
  return `+${queuePrefix(branch)}*:${queuePrefix(branch)}*`;
}

export const TRAILER_FORMAT = ['Scaffold-Id', 'Scaffold-Pass', 'Scaffold-Cluster', 'Scaffold-Reference'].map(
  (key) => `%(trailers:key=${key},valueonly,separator=%x2C)`,
);

export function trailersFrom(fields: readonly string[]): PassTrailers | undefined {
  const [id = '', pass = '', cluster = '', reference = ''] = fields.map((field) => field.trim());
  if (!isRunId(id) || !PASS.test(pass) || !clusterNameSchema.safeParse(cluster).success || !clusterNameSchema.safeParse(reference).success) return undefined;
  return { id, pass, cluster, reference };
}

/** The scaffold trailers of `rev`, or undefined when it is not a scaffold pass commit (then it is pushed without the queue). */
export async function passTrailersOf(ws: QueueGit, rev: string): Promise<PassTrailers | undefined> {
  const log = await ws.git(['log', '-1', `--format=${TRAILER_FORMAT.join('%x00')}`, rev]);
  return trailersFrom(log.stdout.replace(/\n$/, '').split('\0'));
}

/** What a run's place in the queue is read from: an announcement as fetched, or as an `ls-remote` listing names it. */
export type QueueSlot = Pick<QueuedCommit, 'ref' | 'sha' | 'issuedAt' | 'authentic'>;

/** What a fetch judged of each announcement, by ref and commit: whether its MAC holds. */
export type QueueVerdicts = ReadonlyMap<string, boolean>;

const verdictKey = (ref: string, sha: string) => `${ref}\0${sha}`;

/** The queue's order, for a fetched queue and a listed one alike: oldest issue time first, then by ref. */
const byIssueTime = (a: { readonly issuedAt: number; readonly ref: string }, b: { readonly issuedAt: number; readonly ref: string }) =>
  a.issuedAt - b.issuedAt || a.ref.localeCompare(b.ref);

/** The verdicts a fetched queue gives: its announcements' MACs, and none for what is malformed. */
export function verdictsOf(listing: QueueListing): Map<string, boolean> {
  return new Map([
    ...listing.commits.map((entry) => [verdictKey(entry.ref, entry.sha), entry.authentic] as const),
    ...listing.malformed.map((entry) => [verdictKey(entry.ref, entry.sha), false] as const),
  ]);
}

/**
 * The queue as an `ls-remote` listing (`refs`: ref → commit) names it, oldest
 * issue time first, as {@link readQueue} orders it. An announcement no fetch
 * has judged yet counts as authentic (`judged` false): a waiting run only
 * sees itself further back than it may be, and reads the queue when that
 * matters.
 */
export function listedQueue(branch: string, refs: ReadonlyMap<string, string>, verdicts: QueueVerdicts): (QueueSlot & { readonly judged: boolean })[] {
  const slots: (QueueSlot & { readonly judged: boolean })[] = [];
  for (const [ref, sha] of refs) {
    const name = inQueueOf(branch, ref) && SHA.test(sha) ? parseQueueRef(branch, ref) : undefined;
    if (name === undefined) continue;
    const verdict = verdicts.get(verdictKey(ref, sha));
    slots.push({ ref, sha, issuedAt: name.issuedAt, authentic: verdict ?? true, judged: verdict !== undefined });
  }
  return slots.sort(byIssueTime);
}

/** A ref under the queue that announces nothing a carrier could ever take: deleted by the next carrier. */
export interface MalformedAnnouncement {
  readonly ref: string;
  readonly sha: string;
  readonly reason: string;
}

/** The queue as fetched. */
export interface QueueListing {
  /** Well-formed announcements, oldest issue time first. */
  readonly commits: readonly QueuedCommit[];
  readonly malformed: readonly MalformedAnnouncement[];
}

/** The announcements fetched for `branch`, each checked against `auth`'s key. */
export async function readQueue(ws: QueueGit, branch: string, auth: QueueAuth): Promise<QueueListing> {
  const refs = new Map<string, string[]>();
  const malformed: MalformedAnnouncement[] = [];
  const listed = await ws.git(['for-each-ref', '--format=%(objectname) %(objecttype) %(refname)', queuePrefix(branch)]);
  for (const line of listed.stdout.split('\n').filter(Boolean)) {
    const [sha = '', type = '', ref = ''] = line.split(' ');
    if (!inQueueOf(branch, ref) || !SHA.test(sha)) continue;
    if (type !== 'commit') malformed.push({ ref, sha, reason: `it points at a ${type}` });
    else if (parseQueueRef(branch, ref) === undefined) malformed.push({ ref, sha, reason: 'its name carries no run, pass, attempt, issue time and MAC' });
    else refs.set(sha, [...(refs.get(sha) ?? []), ref]);
  }
  if (refs.size === 0) return { commits: [], malformed };
  // One `git log` for all of them (for-each-ref of git 2.39 applies every trailer `key=` to every trailers atom).
  // Records end in NUL (-z); fields are split by US, the message last, so a US inside it stays in it.
  const format = ['%H', '%P', '%T', '%an', '%ae', '%ad', ...TRAILER_FORMAT, '%B'].join('%x1f');
  const commits = await ws.git(['log', '--no-walk=unsorted', '-z', '--date=raw', `--format=${format}`, ...refs.keys()]);
  const queued: QueuedCommit[] = [];
  for (const record of commits.stdout.split('\0').filter(Boolean)) {
    const [sha = '', parents = '', tree = '', name = '', email = '', authorDate = '', id = '', pass = '', cluster = '', reference = '', ...message] =
      record.split('\x1f');
    const trailers = trailersFrom([id, pass, cluster, reference]);
    for (const ref of refs.get(sha) ?? []) {
      const announced = parseQueueRef(branch, ref)!;
      if (!trailers || trailers.id !== announced.id || trailers.pass !== announced.pass) {
        malformed.push({ ref, sha, reason: 'its commit is not the pass its name announces' });
        continue;
      }
      const parentList = parents.split(' ').filter(Boolean);
      const authentic =
        auth.shared &&
        parentList.length === 1 &&
        announcementAuthentic(
          auth.key,
          {
            branch,
            id: trailers.id,
            attempt: announced.attempt,
            pass: trailers.pass,
            cluster: trailers.cluster,
            parent: parentList[0]!,
            tree,
            sha,
            issuedAt: announced.issuedAt,
          },
          announced.mac,
        );
      queued.push({
        ...trailers,
        ref,
        sha,
        parents: parentList,
        tree,
        attempt: announced.attempt,
        issuedAt: announced.issuedAt,
        authentic,
        author: { name, email },
        authorDate,
        message: message.join('\x1f'),
      });
    }
  }
  return { commits: queued.sort(byIssueTime), malformed };
}

/**
 * When this carrier first saw each announcement, by its own monotonic clock:
 * an announcement it has watched for longer than the carry window is stale
 * whatever its issue time says.
 */
export class QueueSightings {
  readonly #firstSeen = new Map<string, number>();

  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** How long `ref` has been seen, in ms (0 the first time). */
  age(ref: string): number {
    const now = this.clock();
    const seen = this.#firstSeen.get(ref);
    if (seen !== undefined) return now - seen;
    this.#firstSeen.set(ref, now);
    // Bounded: the oldest sightings go first.
    if (this.#firstSeen.size > 10_000) this.#firstSeen.delete(this.#firstSeen.keys().next().value!);
    return 0;
  }
}

/**
 * The commit of pass `trailers.pass` of run `trailers.id` among the commits
 * `tip` has and `own` (the run's own commit of that pass, by id) has not: the
 * one with its trailers, its `Scaffold-Mac` and its tree at
 * `clusters/<cluster>`, which a carry keeps. Trailers alone are anyone's to
 * write. `own` itself when `tip` has it.
 */
export async function landedPassCommit(ws: QueueGit, own: string, tip: string, trailers: PassTrailers): Promise<string | undefined> {
  const format = `%H%x00${TRAILER_FORMAT.slice(0, 2).join('%x00')}%x00%(trailers:key=Scaffold-Mac,valueonly,separator=%x2C)`;
  // One log for both: own itself, and what the tip has beyond own's parents (own..tip, and own when the tip has it).
  const log = await ws.git(['log', `--format=${format}`, tip, own, '--not', `${own}^@`]);
  const lines = log.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\0').map((field) => field.trim()));
  const mine = lines.find(([sha]) => sha === own)?.[3] ?? '';
  const candidates = lines.filter(([sha, id, pass]) => sha !== own && id === trailers.id && pass === trailers.pass);
  if (candidates.length === 0) {
    // Carried unchanged: a carrier with the same committer, in the same second, on the same parent recreates the very commit.
    return (await ws.git(['merge-base', '--is-ancestor', own, tip], { okExitCodes: [0, 1, 128] })).exitCode === 0 ? own : undefined;
  }
  const revs = [own, ...candidates.map(([sha]) => sha)].map((rev) => `${rev}:clusters/${trailers.cluster}\n`).join('');
  // A removal has no tree there: "<rev> missing" for both.
  const trees = (await ws.git(['cat-file', '--batch-check=%(objectname)'], { input: revs })).stdout
    .split('\n')
    .map((line) => (line.endsWith(' missing') ? '' : line));
  const ownTree = trees[0];
  for (const [i, [sha = '', , , mac = '']] of candidates.entries()) if (mac === mine && trees[i + 1] === ownTree) return sha;
  return undefined;
}

/** Mode and path of every file each commit changes against its parent, in one `git diff-tree --stdin`. */
async function ownChanges(ws: QueueGit, entries: readonly QueuedCommit[]): Promise<Map<string, { mode: string; path: string }[]>> {
  const raw = await ws.git(['diff-tree', '--stdin', '-r', '--raw', '-z', '--no-renames', '--no-abbrev'], {
    input: entries.map((entry) => `${entry.sha}\n`).join(''),
  });
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
  /** Paths the commits carried so far changed: they lie after every parent, also one first read later. */
  readonly #carried: string[] = [];

  constructor(
    private readonly ws: QueueGit,
    private readonly tip: string,
  ) {}

  /** The paths changed from `parent` to the chain's tip, or undefined when `parent` is not on the branch. */
  async of(parent: string): Promise<ReadonlySet<string> | undefined> {
    if (!this.#byParent.has(parent)) {
      const read = await this.#read(parent);
      for (const path of this.#carried) read?.add(path);
      this.#byParent.set(parent, read);
    }
    return this.#byParent.get(parent);
  }

  async #read(parent: string): Promise<Set<string> | undefined> {
    if (this.#history === undefined) {
      const log = await this.ws.git([
        'log',
        '--first-parent',
        '--diff-merges=first-parent',
        '--no-renames',
        '--name-only',
        '--format=%x1e%H',
        `-n${HISTORY_WINDOW}`,
        this.tip,
      ]);
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
    this.#carried.push(...paths);
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

/** Why an entry may not ride on the chain; `unlandable` when it never will, so the carrier deletes it. */
export interface Refusal {
  readonly reason: string;
  readonly unlandable: boolean;
}

/** What a carrier judges announcements by. */
export interface CarryRules {
  readonly auth: QueueAuth;
  readonly sightings: QueueSightings;
  /** Cluster directories no announcement may write: the carrier's reference environment and {@link ALWAYS_RESERVED}. */
  readonly reserved: ReadonlySet<string>;
  /** ms since the epoch. */
  readonly now: number;
  readonly branch: string;
  /** The branch's attempt fences (attempt-fence.ts). */
  readonly fences: FenceView;
}

const never = (reason: string): Refusal => ({ reason, unlandable: true });

/** Why `entry` may not ride on the chain, or undefined when it may. */
export function carryRefusal(
  entry: QueuedCommit,
  own: readonly { mode: string; path: string }[],
  since: ReadonlySet<string> | undefined,
  rules: CarryRules,
): Refusal | undefined {
  // Only a holder of the key can have announced it: anything else is planted.
  if (!entry.authentic) return never('it is not authenticated: its MAC does not hold under the service key');
  if (rules.reserved.has(entry.cluster) || entry.cluster === entry.reference) return never(`its cluster ${entry.cluster} is reserved`);
  // Age by the issuer's MAC-covered clock and by this carrier's own, never by the commit's dates.
  if (entry.issuedAt - rules.now > MAX_CLOCK_SKEW_MS) return never('announced in the future');
  if (rules.now - entry.issuedAt > CARRY_WINDOW_MS || rules.sightings.age(entry.ref) > CARRY_WINDOW_MS) return never('announced too long ago');
  // Only the live, latest attempt of a cluster may still land anything.
  const fence = fenceRef(rules.branch, entry);
  if (rules.fences.closed.has(fence)) return never('its attempt is fenced: the service recorded it');
  if ((rules.fences.newestAttempt.get(entry.cluster) ?? 0) > entry.attempt) return never('a newer attempt of its cluster has started');
  // Not carried, nor deleted: the push that made the announcement also made the fence, and a fetch that
  // read the fences before that push and the queue after it sees the one without the other. Its owner
  // carries it, or the carry window retires it.
  if (!rules.fences.open.has(fence)) return { reason: 'its attempt has no fence on the remote (not seen yet, or its run ended)', unlandable: false };
  if (entry.parents.length !== 1) return never('not a single-parent commit');
  if (!isIdentity(entry.author)) return never('its author is not a valid identity');
  // Its own change, read from its tree diff: regular files inside its cluster's directory only (no symlink, no submodule).
  for (const { mode, path } of own) {
    if (!path.startsWith(`clusters/${entry.cluster}/`)) return never(`it changes ${path}, outside its cluster`);
    if (!['100644', '100755', '000000'].includes(mode)) return never(`it writes ${path} with mode ${mode}`);
  }
  if (since === undefined) return { reason: 'its parent is not on the branch', unlandable: false };
  // What changed under it since it was verified.
  if (rebaseNeedsReverify([...since], entry.cluster, entry.reference)) return { reason: 'what its verify read has changed', unlandable: false };
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
  const subtrees = await ws.git(['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
    input: entries.map((entry) => `${entry.sha}:clusters/${entry.cluster}\n`).join(''),
  });
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
  /** Announcements that can never land, with the reason: the landing push deletes them. */
  readonly unlandable: readonly { readonly ref: string; readonly sha: string; readonly reason: string }[];
}

/**
 * Recreates every carryable announced commit on top of `tip`, one after the
 * other, so each is checked against everything carried before it.
 */
export async function carryQueued(ws: QueueGit, listing: QueueListing, tip: string, committer: GitIdentity, rules: CarryRules): Promise<CarriedChain> {
  const carried: QueuedCommit[] = [];
  const left: { entry: QueuedCommit; reason: string }[] = [];
  // A carrier with a key of its own can judge nobody else's announcement: it neither carries nor deletes them.
  if (!rules.auth.shared) return { tip, carried, left: listing.commits.map((entry) => ({ entry, reason: 'this run holds no shared key' })), unlandable: [] };
  const unlandable = listing.malformed.map(({ ref, sha, reason }) => ({ ref, sha, reason }));
  if (listing.commits.length === 0) return { tip, carried, left, unlandable };
  // Diffs only of what a key holder announced: a planted commit costs nothing to refuse.
  const changes = await ownChanges(
    ws,
    listing.commits.filter((entry) => entry.authentic),
  );
  const since = new ChangesSince(ws, tip);
  // One announcement per run and pass: the newest (a renewal whose old ref outlived it is superseded).
  const newest = new Map<string, QueuedCommit>();
  for (const entry of listing.commits) if (entry.authentic) newest.set(`${entry.id}\0${entry.pass}`, entry);
  for (const entry of listing.commits) {
    if (carried.length >= MAX_CARRIED) break;
    if (entry.authentic && newest.get(`${entry.id}\0${entry.pass}`) !== entry) {
      unlandable.push({ ref: entry.ref, sha: entry.sha, reason: 'a newer announcement of its run and pass replaced it' });
      continue;
    }
    const own = changes.get(entry.sha) ?? [];
    const parent = entry.parents.length === 1 ? entry.parents[0] : undefined;
    const refusal = carryRefusal(entry, own, parent === undefined ? undefined : await since.of(parent), rules);
    if (refusal?.unlandable) unlandable.push({ ref: entry.ref, sha: entry.sha, reason: refusal.reason });
    else if (refusal !== undefined) left.push({ entry, reason: refusal.reason });
    else {
      carried.push(entry);
      since.add(own.map(({ path }) => path));
    }
  }
  if (carried.length === 0) return { tip, carried, left, unlandable };
  return { tip: await recreateChain(ws, carried, tip, committer, rules.now), carried, left, unlandable };
}
