/**
 * Who may use the landing queue: the holders of one key. Anyone who can push a
 * ref to the repository can create `refs/scaffold-queue/*` and write any
 * `Scaffold-*` trailer, so neither says a commit is a run's. A run's
 * announcement carries an HMAC-SHA256 (in its ref name, landing-queue.ts) over
 * what a carrier relies on, and a run's pass commit carries one in its
 * `Scaffold-Mac` trailer over what stays the same when it is carried or
 * rebased, both keyed by a secret only the service and its runners hold. A
 * ref or a commit planted without the key cannot make either.
 *
 * A runner without the service's key (a run of the CLI on its own) makes a key
 * of its own: its announcements order its own pushes, nobody else can carry
 * them, and it never carries or deletes anyone else's.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../errors.js';

/** The key and what it is for one runner. */
export interface QueueAuth {
  readonly key: Buffer;
  /** Shared with the service and its other runners; false for a key made up by this process alone. */
  readonly shared: boolean;
  /** The run's attempt (1 for a first run; a retry is a new run with the next number). */
  readonly attempt: number;
}

/** The trailer that authenticates a pass commit. */
export const MAC_TRAILER = 'Scaffold-Mac';

/** The shortest key accepted: 32 characters (a generated key is 64 hex digits, 256 bits). */
const MIN_KEY_LENGTH = 32;

/**
 * The key as a file or variable holds it (surrounding whitespace ignored).
 * @throws ValidationError naming `field` when it is too short to be a key
 */
export function parseQueueKey(text: string, field: string): Buffer {
  const key = text.trim();
  if (key.length < MIN_KEY_LENGTH) throw new ValidationError([{ field, message: `must hold at least ${MIN_KEY_LENGTH} characters (e.g. 64 hex digits)` }]);
  return Buffer.from(key, 'utf8');
}

/** A fresh key in the form {@link parseQueueKey} reads. */
export function generateQueueKey(): string {
  return randomBytes(32).toString('hex');
}

/** A key of this process's own: nobody else can verify what it signs. */
export function ownQueueAuth(attempt = 1): QueueAuth {
  return { key: Buffer.from(generateQueueKey(), 'utf8'), shared: false, attempt };
}

function mac(key: Buffer, purpose: string, fields: readonly (string | number)[]): string {
  return createHmac('sha256', key)
    .update(`${purpose}\n${JSON.stringify(fields)}`)
    .digest('hex');
}

function equalMac(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What an announcement's MAC covers. */
export interface AnnouncementFields {
  readonly branch: string;
  readonly id: string;
  readonly attempt: number;
  readonly pass: string;
  readonly cluster: string;
  readonly parent: string;
  /** The commit's whole tree. */
  readonly tree: string;
  /** The commit itself, so its message (trailers) and author are covered too. */
  readonly sha: string;
  /** When the announcing runner made it, ms since the epoch by its clock. */
  readonly issuedAt: number;
}

function announcementList(f: AnnouncementFields): (string | number)[] {
  return [f.branch, f.id, f.attempt, f.pass, f.cluster, f.parent, f.tree, f.sha, f.issuedAt];
}

export function announcementMac(key: Buffer, fields: AnnouncementFields): string {
  return mac(key, 'scaffold-queue/announcement/v1', announcementList(fields));
}

/** Constant-time check of an announcement's MAC. */
export function announcementAuthentic(key: Buffer, fields: AnnouncementFields, given: string): boolean {
  return equalMac(announcementMac(key, fields), given);
}

/** What a pass commit's MAC covers: nothing a rebase onto other clusters' changes or a carry alters. */
export interface PassCommitFields {
  readonly id: string;
  readonly attempt: number;
  readonly pass: string;
  readonly cluster: string;
  /** The tree at `clusters/<cluster>` ('' when the commit has none there: a removal). */
  readonly clusterTree: string;
}

function passCommitList(f: PassCommitFields): (string | number)[] {
  return [f.id, f.attempt, f.pass, f.cluster, f.clusterTree];
}

export function passCommitMac(key: Buffer, fields: PassCommitFields): string {
  return mac(key, 'scaffold-queue/pass-commit/v1', passCommitList(fields));
}

/** Constant-time check of a pass commit's `Scaffold-Mac`. */
export function passCommitAuthentic(key: Buffer, fields: PassCommitFields, given: string): boolean {
  return equalMac(passCommitMac(key, fields), given);
}
