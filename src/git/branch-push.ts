/**
 * Pushing a working copy's commits to its branch when other runs push to the
 * same branch at the same time.
 *
 * A scaffold pass commit (one with the Scaffold-* trailers) uses the landing
 * queue (landing-queue.ts). It is pushed plainly only when nobody is queued and
 * the branch has not moved past its base; otherwise, or when that push loses,
 * it is announced and the run waits: polling with `ls-remote` (and fetching
 * only once its announcement is gone or it is its turn), it finds its commit
 * carried onto the branch by another run, or it is its turn (oldest in the
 * queue, or the one ahead is late), and it rebases, carries the other
 * announced commits on top and lands them all in one atomic push.
 *
 * Other commits (upgrades, removals, tests) race alone: fetch, rebase, retry
 * after a jittered backoff.
 */
import { ConcurrentPushError, UnavailableError, ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { GitIdentity, PushOptions, PushResult } from '../run/ports.js';
import { interruptibleSleep } from '../interruptible-sleep.js';
import { identityEnv } from './git-identity.js';
import { type GitResult, redactSecrets } from './git-process.js';
import {
  ALWAYS_RESERVED,
  type CarriedChain,
  type PassTrailers,
  type QueueGit,
  type QueueListing,
  type QueueSightings,
  type QueueVerdicts,
  carryQueued,
  inQueueOf,
  landedPassCommit,
  listedQueue,
  passTrailersOf,
  queuePrefix,
  queueRefspec,
  readQueue,
  verdictsOf,
} from './landing-queue.js';
import { Announcement, CARRIER_PATIENCE_MS, removalsOf } from './queue-announcement.js';
import type { QueueAuth } from './queue-auth.js';
import { type AttemptFence, fenceRefspec, readFences } from './attempt-fence.js';
import { changedPaths, resolveRef } from './remote-changes.js';
import { assertConfinedWorkTree } from './work-tree-guard.js';
import { type KnownCommits, refFromFiles } from './known-commits.js';
import { type Backoff, jitteredDelayMs } from './backoff.js';

/** What a push needs of a working copy. */
export interface PushingWorkspace extends QueueGit {
  readonly dir: string;
  readonly branch: string;
  readonly logger: Logger;
  /** Delay window of the n-th retry of a commit that races alone (full jitter). */
  readonly backoff: Backoff;
  /** Who commits what a rebase or a carry rewrites. */
  committer(): GitIdentity;
  head(): Promise<string>;
  /** Turns a failed result into the product's error, credentials scrubbed. */
  fail(args: readonly string[], result: GitResult): Error;
  /** The key its announcements are signed with and others' are checked against. */
  readonly auth: QueueAuth;
  /** When this process first saw each announcement. */
  readonly sightings: QueueSightings;
  /** The fence of the run whose pass commit is pushed (one per workspace). */
  attemptFence(trailers: PassTrailers): AttemptFence;
  /** What the workspace knows of the commits it made: asked before git is. */
  readonly known?: KnownCommits;
  /** Its git directory, when its refs may be read from the files there (known-commits.ts). */
  readonly gitDir?: string;
}

/** What a ref naming a commit points at: from the ref files where the workspace has them, else from git. */
async function commitOfRef(ws: PushingWorkspace, ref: string): Promise<string | undefined> {
  const fromFiles = ws.gitDir === undefined ? undefined : await refFromFiles(ws.gitDir, ref);
  return fromFiles === undefined ? resolveRef(ws, ref) : (fromFiles ?? undefined);
}

/** HEAD's pass trailers: from what the workspace knows of it, else from git. */
async function headTrailers(ws: PushingWorkspace): Promise<PassTrailers | undefined> {
  const head = ws.known ? await ws.head().catch(() => undefined) : undefined;
  const facts = head === undefined ? undefined : ws.known?.get(head);
  return facts ? facts.trailers : passTrailersOf(ws, 'HEAD');
}

const DEFAULT_MAX_ATTEMPTS = 8;

/**
 * The remote could not take its packed-refs lock in time: another push that
 * deletes refs (an announcement renewed or carried, a fence removed) held it.
 * git locks packed-refs for every deletion and waits one second for it
 * (core.packedRefsTimeout), so on a busy remote this refusal says nothing
 * about the branch: the same push is sent again after a pause, and it does not
 * count as overtaken. A ref's own lock (`main.lock`) is another push moving
 * that ref, a real race, and is not matched here.
 */
const PACKED_REFS_BUSY = /Unable to create '[^']*packed-refs\.lock': File exists/;

/** Pauses for a busy remote lock, per attempt the push may make: a lock left by a crashed git process is reported, not waited on forever. */
const BUSY_TRIES_PER_ATTEMPT = 4;

/** Refs the remote turned down because another push got there first (or an announcement moved under a lease). */
const LOST_RACE =
  /\[rejected\]|\(fetch first\)|\(non-fast-forward\)|\(stale info\)|cannot lock ref|failed to update ref|incorrect old value|failed to lock|atomic push fail|atomic transaction failed/;

/**
 * How often a queued run looks whether it was carried: the further back in the
 * queue, the less often (every look is an `ls-remote`, and fifty runs looking
 * every second would keep two cores busy), and less often again with every
 * look that found nothing changed (`quietGrowth` per quiet look: a carrier
 * takes a fetch, a rebase and a push, so the branch moves in bursts); a look
 * that saw the branch or the queue ahead move starts over. At most every 4 s.
 */
const QUEUE_POLL = { firstMs: 250, perPlaceMs: 100, quietGrowth: 1.5, maxMs: 4_000 } as const;

/** The window before a queued run's next look: its place in the queue, and how many looks in a row found nothing changed. */
export function queuePollWindow(place: number, quietLooks: number): number {
  const base = QUEUE_POLL.firstMs + QUEUE_POLL.perPlaceMs * Math.max(0, place);
  return Math.min(QUEUE_POLL.maxMs, base * QUEUE_POLL.quietGrowth ** Math.max(0, quietLooks));
}

/** An `ls-remote` answer as ref → commit. */
function listedRefs(stdout: string): Map<string, string> {
  return new Map(
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t').reverse() as [string, string]),
  );
}

/** Fetches the branch, and its landing queue when this push is queued. */
async function fetchBranch(ws: PushingWorkspace, queued: boolean, signal: AbortSignal | undefined): Promise<void> {
  const call = signal ? { signal } : {};
  const refspecs = [`+refs/heads/${ws.branch}:refs/remotes/origin/${ws.branch}`, ...(queued ? [queueRefspec(ws.branch), fenceRefspec(ws.branch)] : [])];
  await ws.git(['fetch', '--quiet', '--no-tags', '--prune', '--filter=blob:none', 'origin', ...refspecs], { ...call, network: true });
}

async function rebaseOntoTracking(ws: PushingWorkspace, signal: AbortSignal | undefined): Promise<void> {
  const call = signal ? { signal } : {};
  const committer = ws.committer();
  const abort = () => ws.git(['rebase', '--abort'], { okExitCodes: [0, 1, 128] });
  let rebase: GitResult;
  try {
    rebase = await ws.git(['rebase', '--no-verify', '--no-autostash', `refs/remotes/origin/${ws.branch}`], {
      ...call,
      okExitCodes: [0, 1],
      env: identityEnv(committer, committer),
    });
  } catch (error) {
    // Cancelled half-way: leave the working copy on its own commits, not mid-rebase.
    await abort();
    throw error;
  }
  // The rebase wrote the remote's newer content into the working copy: check it as a fresh clone.
  if (rebase.exitCode === 0) return assertConfinedWorkTree(ws.dir);
  const output = `${rebase.stdout}\n${rebase.stderr}`;
  await abort();
  if (/CONFLICT|could not apply/.test(output)) {
    const files = [...output.matchAll(/CONFLICT \([^)]*\): .*? in (\S+)/g)].map((match) => match[1]);
    throw new ConcurrentPushError(
      `a concurrent push to ${ws.branch} changed the same files${files.length > 0 ? ` (${files.join(', ')})` : ''}; the rebase was aborted`,
    );
  }
  throw ws.fail(['rebase'], rebase);
}

/**
 * Whether a plain push of HEAD would lose: others are queued, or the branch
 * moved past HEAD's base. The same `ls-remote` reads the attempt's fence for
 * its first move (attempt-fence.ts), so the fence costs no look of its own.
 */
async function queueAhead(ws: PushingWorkspace, fence: AttemptFence | undefined, signal: AbortSignal | undefined): Promise<boolean> {
  const call = signal ? { signal } : {};
  const readFence = fence?.enabled === true && !fence.started;
  const listing = await ws.git(['ls-remote', 'origin', `refs/heads/${ws.branch}`, `${queuePrefix(ws.branch)}*`, ...(readFence ? [fence.ref] : [])], {
    network: true,
    ...call,
  });
  const refs = listedRefs(listing.stdout);
  if (readFence) await fence.startFrom(ws, refs.get(fence.ref), signal);
  if ([...refs.keys()].some((ref) => inQueueOf(ws.branch, ref))) return true;
  const tip = refs.get(`refs/heads/${ws.branch}`);
  if (tip === undefined) return false;
  // HEAD's own parent (the branch as cloned, or this run's last push) needs no merge-base.
  const head = ws.known ? await ws.head().catch(() => undefined) : undefined;
  if (head !== undefined && ws.known?.isAncestorOrSelf(tip, head)) return false;
  return (await ws.git(['merge-base', '--is-ancestor', tip, 'HEAD'], { okExitCodes: [0, 1, 128] })).exitCode !== 0;
}

/** What a queued run saw while it waited. */
type WaitOutcome =
  | { readonly landed: string }
  | { readonly landed?: undefined; readonly before: string | undefined; readonly after: string | undefined; readonly queued: QueueListing };

/**
 * Waits until another run carried this run's commit (its landed commit), or it
 * is this run's turn to carry the queue. It looks with `ls-remote` and fetches
 * only when the listing shows something it must read: its announcement is gone
 * (carried, or deleted), it is its turn, or announcements no fetch has judged
 * have stood ahead of it for a carrier's patience. While its announcement
 * stands, its commit is not on the branch: a carrier deletes the announcements
 * it carries in its landing push, atomically. So fifty waiting runs fetch about
 * once each, when they land, not every time the branch moves.
 */
async function awaitCarrier(ws: PushingWorkspace, own: Announcement, trailers: PassTrailers, signal: AbortSignal | undefined): Promise<WaitOutcome> {
  const branchRef = `refs/heads/${ws.branch}`;
  const tracking = `refs/remotes/origin/${ws.branch}`;
  const call = signal ? { signal } : {};
  const before = await commitOfRef(ws, tracking);
  let after = before;
  const branch = { movedAt: Date.now(), moves: 0 };
  let fetched = '';
  let readAt = Date.now();
  let queued: QueueListing = { commits: [], malformed: [] };
  let verdicts: QueueVerdicts = new Map();
  /**
   * Fetches what `listing` shows (`branchOnly`: the branch, to see whether this
   * run's commit is on it, without the queue); the commit this run landed as,
   * if another run carried it.
   */
  const refresh = async (listing: string, branchOnly = false): Promise<string | undefined> => {
    await fetchBranch(ws, !branchOnly, signal);
    after = await commitOfRef(ws, tracking);
    const landed = after === undefined ? undefined : await landedPassCommit(ws, await ws.head(), after, trailers);
    if (branchOnly) return landed;
    fetched = listing;
    readAt = Date.now();
    queued = await readQueue(ws, ws.branch, ws.auth);
    verdicts = verdictsOf(queued);
    if (landed === undefined && own.ref !== undefined && !queued.commits.some((entry) => entry.ref === own.ref)) {
      // Deleted without landing (a carrier that judged it unlandable): a landing push leased on it could never
      // land, and a renewal leased on it could never replace it. Forgotten, so this run carries itself now.
      ws.logger.warn({ push: 'unannounced', ref: own.ref }, "this run's announcement was deleted without its commit landing; carrying it itself");
      own.gone();
    }
    return landed;
  };
  let quietLooks = 0;
  let place = 0;
  let seen: { readonly tip: string | undefined; readonly ahead: string } | undefined;
  for (;;) {
    if (seen !== undefined) {
      const window = queuePollWindow(place, quietLooks);
      await interruptibleSleep(Math.round(window * (0.5 + Math.random() / 2)), signal);
      signal?.throwIfAborted();
    }
    const listing = (await ws.git(['ls-remote', 'origin', branchRef, `${queuePrefix(ws.branch)}*`], { network: true, ...call })).stdout;
    const refs = listedRefs(listing);
    const tip = refs.get(branchRef);
    // Moves count from the first look after the announcement: an earlier landing may not have seen it.
    if (seen !== undefined && tip !== seen.tip) Object.assign(branch, { movedAt: Date.now(), moves: branch.moves + 1 });
    // Only a moved branch or a change among the announcements ahead matters to a waiting run; newcomers queue behind it.
    let listed = listedQueue(ws.branch, refs, verdicts);
    const ahead = listed.slice(0, Math.max(0, own.place(listed)));
    const aheadKey = ahead.map((slot) => `${slot.ref} ${slot.sha}`).join('\n');
    const changed = seen === undefined || tip !== seen.tip || aheadKey !== seen.ahead;
    seen = { tip, ahead: aheadKey };
    quietLooks = changed ? 0 : quietLooks + 1;
    const entry = own.entry;
    const standing = entry !== undefined && refs.get(entry.ref) === entry.sha;
    // Announcements nobody judged hold this run back for one patience at most: planted ones count for nothing once read.
    const unjudged = ahead.some((slot) => !slot.judged) && Date.now() - readAt > CARRIER_PATIENCE_MS;
    if (changed && !standing && entry !== undefined) {
      // Gone: most likely carried, and then the branch is all it needs.
      const landed = await refresh(listing, true);
      if (landed !== undefined) return { landed };
    }
    if ((changed && !standing) || unjudged) {
      const landed = await refresh(listing);
      if (landed !== undefined) return { landed };
      // The fetch judged what the listing names.
      listed = listedQueue(ws.branch, refs, verdicts);
    }
    place = Math.max(0, own.place(listed));
    if (!own.mayCarry(listed, branch)) continue;
    // Its turn: carry everything announced up to now.
    if (listing !== fetched) {
      const carried = await refresh(listing);
      if (carried !== undefined) return { landed: carried };
    }
    return { before, after, queued };
  }
}

/**
 * Pushes HEAD to the workspace's branch, at most `maxAttempts` times.
 * @throws UnavailableError when attempts run out; ConcurrentPushError (a ConflictError) when a rebase conflicts
 */
export async function pushHead(ws: PushingWorkspace, options: PushOptions = {}): Promise<PushResult> {
  const { branch, logger, backoff } = ws;
  const { signal } = options;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new ValidationError([{ field: 'maxAttempts', message: 'must be a positive integer' }]);
  const tracking = `refs/remotes/origin/${branch}`;
  const trailers: PassTrailers | undefined = await headTrailers(ws);
  // Pass commits under the service's key are fenced: every push moves the attempt's fence under a lease (attempt-fence.ts).
  const fence = trailers !== undefined && ws.auth.shared ? ws.attemptFence(trailers) : undefined;
  const own = trailers ? new Announcement(ws, trailers, fence) : undefined;
  let queue = own !== undefined;
  let chain: CarriedChain | undefined;
  let busy = 0;
  /** Sends `args`, again after a jittered pause each time the remote's packed-refs lock was busy. */
  const send = async (args: readonly string[]): Promise<GitResult> => {
    for (;;) {
      const result = await ws.git(args, { okExitCodes: [0, 1, 128], network: true, ...(signal ? { signal } : {}) });
      if (result.exitCode === 0 || !PACKED_REFS_BUSY.test(result.stderr)) return result;
      if (++busy > BUSY_TRIES_PER_ATTEMPT * maxAttempts)
        throw new UnavailableError(
          `the remote's packed-refs lock stayed taken through ${busy} pushes to ${branch}; if no push is running there, a git process may have died holding it (remove packed-refs.lock on the server)`,
        );
      const delay = jitteredDelayMs(backoff, Math.min(busy, 16));
      logger.info({ push: 'busy', branch, tries: busy, delayMs: delay }, "the remote's packed-refs lock was taken by another push; sending again");
      await interruptibleSleep(delay, signal);
      signal?.throwIfAborted();
    }
  };
  /** One push: HEAD, or the chain carrying queued commits (atomically deleting their announcements). Undefined when it lost the race. */
  const attemptPush = async (attempt: number): Promise<PushResult | undefined> => {
    const head = await ws.head();
    const { leases, deletions } = removalsOf([...(chain?.carried ?? []), ...(chain?.unlandable ?? []), ...(own?.entry ? [own.entry] : [])]);
    const move = fence?.enabled ? await fence.move(ws, signal) : undefined;
    const atomic = deletions.length > 0 || move !== undefined;
    const args = [
      'push',
      '--porcelain',
      '--no-verify',
      ...(atomic ? ['--atomic', ...leases, ...(move?.args ?? [])] : []),
      'origin',
      `${chain?.tip ?? head}:refs/heads/${branch}`,
      ...(move ? [move.refspec] : []),
      ...deletions,
    ];
    const result = await send(args);
    const rejected = result.stdout.split('\n').filter((line) => line.startsWith('!'));
    if (result.exitCode === 0 && rejected.length === 0) {
      move?.landed();
      own?.gone();
      const carried = chain?.carried.length ?? 0;
      logger.info({ push: 'landed', sha: head, attempts: attempt, carried }, carried > 0 ? `pushed, carrying ${carried} queued commit(s)` : 'pushed');
      return { sha: head, attempts: attempt };
    }
    if (/does not support --atomic/.test(result.stderr)) {
      // No atomic pushes, no safe queue and no fence: race alone from here on.
      queue = false;
      fence?.disable();
      await own?.withdraw();
      return undefined;
    }
    // What the remote said (a ref's lock, a lease): the porcelain lines of an atomic push only say it failed whole.
    const refusal = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('remote: error:'))
      .map((line) => redactSecrets(line.trim()));
    logger.debug({ push: 'rejected', attempt, carrying: chain?.carried.length ?? 0, lines: rejected, refusal }, 'push rejected');
    // Fenced by the service (its runner was declared gone): nothing more of this attempt may land.
    if (move) await fence!.assertOpen(ws, signal);
    // The porcelain lines say why (hook declined, protected branch); keep them in the message.
    if (!rejected.some((line) => LOST_RACE.test(line))) throw ws.fail(args, { ...result, stderr: `${result.stderr}\n${rejected.join('\n')}` });
    if (attempt >= maxAttempts) throw new UnavailableError(`push to ${branch} was overtaken by concurrent pushes ${attempt} times; giving up`);
    return undefined;
  };

  try {
    // A queued commit waits its turn rather than racing the runs already waiting.
    let attempt = queue && (await queueAhead(ws, fence, signal)) ? 0 : 1;
    for (; ; attempt++) {
      if (attempt > 0) {
        const pushed = await attemptPush(attempt);
        if (pushed) return pushed;
      }
      const head = await ws.head();
      let before: string | undefined;
      let after: string | undefined;
      let queued: QueueListing = { commits: [], malformed: [] };
      if (queue && own && trailers) {
        await own.announce(head, signal);
        if (attempt === 0) logger.info({ push: 'queued', branch }, 'other runs are queued for this branch, or it moved: joining the landing queue');
        else logger.info({ push: 'lost', branch, attempt, queued: true }, 'push lost a race; queued for landing');
        const waited = await awaitCarrier(ws, own, trailers, signal);
        if (waited.landed !== undefined) {
          // Another run carried this commit: continue from the branch as it now is.
          await ws.git(['reset', '--quiet', '--hard', waited.landed]);
          await assertConfinedWorkTree(ws.dir);
          // An announcement still standing (re-announced after it was carried) is withdrawn.
          if (own.entry !== undefined && (await commitOfRef(ws, own.entry.ref)) === own.entry.sha) await own.withdraw();
          else own.gone();
          logger.info({ push: 'carried', sha: waited.landed, attempts: Math.max(1, attempt) }, 'pushed by a concurrent run that carried this commit');
          return { sha: waited.landed, attempts: Math.max(1, attempt) };
        }
        ({ before, after, queued } = waited);
      } else {
        const delay = jitteredDelayMs(backoff, attempt - 1);
        logger.info({ push: 'lost', branch, attempt, delayMs: delay, queued: false }, 'push rejected by a concurrent push; rebasing');
        await interruptibleSleep(delay, signal);
        signal?.throwIfAborted();
        before = await commitOfRef(ws, tracking);
        await fetchBranch(ws, false, signal);
        after = await commitOfRef(ws, tracking);
      }
      await rebaseOntoTracking(ws, signal);
      if (options.afterRebase) await options.afterRebase(await changedPaths(ws, before, after));
      const others = { commits: queued.commits.filter((entry) => entry.id !== trailers?.id), malformed: queued.malformed };
      chain = undefined;
      if (queue) {
        const rules = {
          auth: ws.auth,
          sightings: ws.sightings,
          reserved: new Set<string>([...ALWAYS_RESERVED, ...(trailers ? [trailers.reference] : [])]),
          now: Date.now(),
          branch,
          fences: await readFences(ws, branch),
        };
        chain = await carryQueued(ws, others, await ws.head(), ws.committer(), rules);
      }
      if (chain && chain.left.length > 0)
        logger.debug(
          { push: 'left', left: chain.left.map(({ entry, reason }) => `${entry.id}/${entry.pass}: ${reason}`) },
          'queued commits left for their owners',
        );
      if (chain && chain.unlandable.length > 0)
        logger.info(
          { push: 'refused', refused: chain.unlandable.map(({ ref, reason }) => `${ref.slice(queuePrefix(branch).length)}: ${reason}`) },
          'announcements that can never land are deleted',
        );
      if (chain && chain.carried.length === 0 && chain.unlandable.length === 0) chain = undefined;
    }
  } catch (error) {
    await own?.withdraw();
    throw error;
  }
}
