/**
 * A run's own announcement in the landing queue (landing-queue.ts): made when
 * its push would lose, renewed while it waits, deleted by the push that lands
 * it, withdrawn when the run gives up; and the rule for when a waiting run
 * stops waiting and carries the queue itself.
 */
import { CARRY_WINDOW_MS, MAX_CLOCK_SKEW_MS, type PassTrailers, type QueueSlot, queueRef } from './landing-queue.js';
import type { PushingWorkspace } from './branch-push.js';
import { announcementMac } from './queue-auth.js';
import type { AttemptFence } from './attempt-fence.js';

/** How long a queued run leaves the carrying to an older announcement before it carries itself. */
export const CARRIER_PATIENCE_MS = 10_000;

/** An announcement a push deletes. */
export interface QueueEntry {
  readonly ref: string;
  readonly sha: string;
}

/** Refspecs deleting `entries`, each under a lease: an announcement that moved since it was read is not deleted, and an atomic push fails whole. */
export function removalsOf(entries: readonly QueueEntry[]): { leases: string[]; deletions: string[] } {
  return { leases: entries.map((entry) => `--force-with-lease=${entry.ref}:${entry.sha}`), deletions: entries.map((entry) => `:${entry.ref}`) };
}

/** This run's own announcement in the queue. */
export class Announcement {
  #sha: string | undefined;
  #ref: string | undefined;
  #at = 0;

  constructor(
    private readonly ws: PushingWorkspace,
    private readonly trailers: PassTrailers,
    /** Moved in the same atomic push: an attempt the service fenced announces nothing more. */
    private readonly fence?: AttemptFence,
  ) {}

  /** The ref it is announced under now (undefined before it is). */
  get ref(): string | undefined {
    return this.#ref;
  }

  /**
   * Announces `head`, or renews the announcement once half the carry window
   * has passed: a new ref (its name holds the issue time and the MAC), the old
   * one deleted in the same push.
   */
  async announce(head: string, signal: AbortSignal | undefined): Promise<void> {
    if (this.#sha !== undefined && (this.#sha === head || Date.now() - this.#at < CARRY_WINDOW_MS / 2)) return;
    const { auth, branch } = this.ws;
    // A commit the workspace made itself is known already (known-commits.ts).
    const known = this.ws.known?.get(head);
    const [parent = '', tree = ''] = known
      ? [known.parents.join(' '), known.tree]
      : (await this.ws.git(['log', '-1', '--format=%P%x00%T', head])).stdout.trim().split('\0');
    const issuedAt = Date.now();
    const fields = {
      branch,
      id: this.trailers.id,
      attempt: auth.attempt,
      pass: this.trailers.pass,
      cluster: this.trailers.cluster,
      parent,
      tree,
      sha: head,
      issuedAt,
    };
    const ref = queueRef(branch, { id: this.trailers.id, pass: this.trailers.pass, attempt: auth.attempt, issuedAt, mac: announcementMac(auth.key, fields) });
    const previous = this.entry;
    const replace = previous === undefined ? [] : [`--force-with-lease=${previous.ref}:${previous.sha}`, `:${previous.ref}`];
    const move = this.fence?.enabled ? await this.fence.move(this.ws, signal) : undefined;
    const args = [
      'push',
      '--porcelain',
      '--no-verify',
      ...(move ? ['--atomic', ...move.args] : []),
      ...replace.slice(0, 1),
      'origin',
      `${head}:${ref}`,
      ...(move ? [move.refspec] : []),
      ...replace.slice(1),
    ];
    const result = await this.ws.git(args, { okExitCodes: [0, 1, 128], network: true, ...(signal ? { signal } : {}) });
    const created = result.stdout.split('\n').some((line) => line.startsWith('*') && line.includes(ref));
    if (move && created) move.landed();
    if (move && !created && !/does not support --atomic/.test(result.stderr)) await this.fence!.assertOpen(this.ws, signal);
    // A remote that refuses the queue ref still takes the plain race: not worth failing the run for.
    if (!created) return this.ws.logger.warn({ ref }, 'the remote refused the landing-queue ref; racing alone');
    this.#sha = head;
    this.#ref = ref;
    this.#at = Date.now();
  }

  /** The announcement as the landing push deletes it (only if it still points where we left it). */
  get entry(): QueueEntry | undefined {
    return this.#sha === undefined || this.#ref === undefined ? undefined : { ref: this.#ref, sha: this.#sha };
  }

  /**
   * Whether this run carries the queue now: it is the oldest fresh announcement
   * (the others wait for it instead of all building the same chain); or the
   * branch has not moved for {@link CARRIER_PATIENCE_MS} times its place in the
   * queue (the oldest is slow or gone, and the next in line steps in first); or
   * the branch moved twice since it looked first without this commit, so a
   * carrier saw it and left it (its verify must run again).
   */
  mayCarry(queue: readonly QueueSlot[], branch: { readonly movedAt: number; readonly moves: number }): boolean {
    if (this.#sha === undefined) return true;
    const place = this.place(queue);
    if (place <= 0 || branch.moves >= 2) return true;
    return Date.now() - Math.max(branch.movedAt, this.#at) > CARRIER_PATIENCE_MS * place;
  }

  /** Its place among the fresh authenticated announcements (0: the oldest), -1 when it is not among them. */
  place(queue: readonly QueueSlot[]): number {
    const now = Date.now();
    const fresh = (entry: QueueSlot) => entry.authentic && now - entry.issuedAt <= CARRY_WINDOW_MS && entry.issuedAt - now <= MAX_CLOCK_SKEW_MS;
    return queue.filter((entry) => entry.ref === this.#ref || fresh(entry)).findIndex((entry) => entry.ref === this.#ref);
  }

  /** The remote no longer holds it: it landed, was withdrawn, or another run deleted it. */
  gone(): void {
    this.#sha = undefined;
    this.#ref = undefined;
  }

  /** Best effort on the way out without landing: an owner that gave up is not carried. */
  async withdraw(): Promise<void> {
    const entry = this.entry;
    if (entry === undefined) return;
    const { leases, deletions } = removalsOf([entry]);
    await this.ws
      .git(['push', '--porcelain', '--no-verify', ...leases, 'origin', ...deletions], { okExitCodes: [0, 1, 128], network: true })
      .catch(() => undefined);
    this.gone();
  }
}
