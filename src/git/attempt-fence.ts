/**
 * Each run attempt's fence on the remote: the ref
 * `refs/scaffold-fence/<branch>/<cluster>/<attempt>--<run>`, which the server
 * itself enforces. The runner's first push to the branch or the queue creates
 * it (leased: it must not exist), and every later push moves it to a fresh
 * commit under a lease on the value it had, in the same atomic push. When the
 * service records a run whose runner died, it first closes the fence (moves
 * it, under a lease, to a commit saying `closed`): from then on every push of
 * that attempt, also one the server is still receiving, fails its lease and
 * lands nothing, so what the service then reads off the branch is final.
 *
 * A carrier reads the fences too: it never carries an announcement whose
 * attempt's fence is closed or gone, or whose cluster has a newer attempt.
 */
import { randomBytes } from 'node:crypto';
import { ConflictError } from '../errors.js';
import type { QueueGit } from './landing-queue.js';
import { isRunId } from '../model/run-id.js';
import { clusterNameSchema } from '../model/cluster-spec.js';

/** git's empty tree: every fence commit has it. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** The fences of `branch`. */
export function fencePrefix(branch: string): string {
  return `refs/scaffold-fence/${branch}/`;
}

/** The refspec that fetches `branch`'s fences (pruned with `--prune`). */
export function fenceRefspec(branch: string): string {
  return `+${fencePrefix(branch)}*:${fencePrefix(branch)}*`;
}

/** Who a fence is for. */
export interface FenceOwner {
  readonly cluster: string;
  readonly attempt: number;
  readonly id: string;
}

export function fenceRef(branch: string, owner: FenceOwner): string {
  return `${fencePrefix(branch)}${owner.cluster}/${owner.attempt}--${owner.id}`;
}

const NAME = /^([^/]+)\/([1-9][0-9]{0,5})--([^/]+)$/;

export function parseFenceRef(branch: string, ref: string): FenceOwner | undefined {
  if (!ref.startsWith(fencePrefix(branch))) return undefined;
  const match = NAME.exec(ref.slice(fencePrefix(branch).length));
  if (match === null || !clusterNameSchema.safeParse(match[1]).success || !isRunId(match[3]!)) return undefined;
  return { cluster: match[1]!, attempt: Number(match[2]), id: match[3]! };
}

/** A fence commit: `open` while its attempt may push, `closed` once the service has fenced it. */
/** Working copies that hold the empty tree object already: written once each, not once per fence move. */
const emptyTreeWritten = new WeakSet<QueueGit>();

export async function fenceCommit(ws: QueueGit, state: 'open' | 'closed', owner: FenceOwner, parent: string | undefined): Promise<string> {
  if (!emptyTreeWritten.has(ws)) {
    await ws.git(['hash-object', '-t', 'tree', '-w', '--stdin'], { input: '' });
    emptyTreeWritten.add(ws);
  }
  // A nonce, so two moves within one second never make the same commit (a push of an unchanged ref sends nothing for the server to check).
  const message = `${state} ${owner.id} ${owner.attempt}\n\nnonce ${randomBytes(8).toString('hex')}\n`;
  const env = {
    GIT_AUTHOR_NAME: 'gitops-scaffolder',
    GIT_AUTHOR_EMAIL: 'gitops-scaffolder@localhost',
    GIT_COMMITTER_NAME: 'gitops-scaffolder',
    GIT_COMMITTER_EMAIL: 'gitops-scaffolder@localhost',
  };
  const result = await ws.git(['commit-tree', ...(parent ? ['-p', parent] : []), EMPTY_TREE], { input: message, env });
  return result.stdout.trim();
}

/** The service closed this attempt's fence: nothing it pushes can land any more. */
export class FencedError extends ConflictError {}

/**
 * The runner's side: the arguments that make one push fenced, and what the
 * fence is after it landed.
 */
export class AttemptFence {
  /** The value the remote holds; undefined before the first push created it. */
  #value: string | undefined;
  #closed = false;
  #started = false;
  #enabled = true;

  constructor(
    readonly ref: string,
    private readonly owner: FenceOwner,
  ) {}

  /** Whether the remote's fence was read (by the first move, or {@link startFrom}). */
  get started(): boolean {
    return this.#started;
  }

  /** False once the remote turned out to take no atomic pushes: a fence needs them. */
  get enabled(): boolean {
    return this.#enabled;
  }

  disable(): void {
    this.#enabled = false;
  }

  /**
   * The lease and the refspec moving the fence, for one atomic push; `landed`
   * records the new value once the push went through.
   * @throws FencedError when the fence was closed
   */
  async move(ws: QueueGit, signal?: AbortSignal): Promise<{ readonly args: readonly string[]; readonly refspec: string; landed(): void }> {
    if (!this.#started) await this.#start(ws, signal);
    if (this.#closed) throw new FencedError(`the service fenced attempt ${this.owner.attempt} of run ${this.owner.id}: it may push nothing more`);
    const next = await fenceCommit(ws, 'open', this.owner, this.#value);
    return {
      args: [`--force-with-lease=${this.ref}:${this.#value ?? ''}`],
      refspec: `${next}:${this.ref}`,
      landed: () => {
        this.#value = next;
      },
    };
  }

  /**
   * The attempt's start: a fence another process of the same attempt left
   * open (a Job's pod that failed and was replaced) is taken over, so that
   * process's pushes still in flight fail from the next move on; a closed one
   * ends the attempt.
   */
  async #start(ws: QueueGit, signal?: AbortSignal): Promise<void> {
    const listed = await ws.git(['ls-remote', 'origin', this.ref], { network: true, ...(signal ? { signal } : {}) });
    await this.startFrom(ws, listed.stdout.split('\t')[0]?.trim() || undefined, signal);
  }

  /**
   * The attempt's start from a listing of the remote made by the caller (the
   * push's own `ls-remote`): `remote` is the fence's value there, undefined
   * when it has none. An older listing is as safe as a fresh one: the first
   * move is leased on the value read here, so a fence that moved since fails it.
   */
  async startFrom(ws: QueueGit, remote: string | undefined, signal?: AbortSignal): Promise<void> {
    if (this.#started) return;
    const call = { network: true, ...(signal ? { signal } : {}) };
    if (remote !== undefined) {
      await ws.git(['fetch', '--quiet', '--no-tags', 'origin', `+${this.ref}:${this.ref}`], call);
      const subject = (await ws.git(['log', '-1', '--format=%s', this.ref])).stdout.trim();
      if (subject === `open ${this.owner.id} ${this.owner.attempt}`) this.#value = remote;
      else this.#closed = true;
    }
    this.#started = true;
  }

  /**
   * After a rejected push: a fence that is not where this runner left it was
   * closed (only the service, or a later process of the same attempt, moves it).
   * @throws FencedError then
   */
  async assertOpen(ws: QueueGit, signal?: AbortSignal): Promise<void> {
    const listed = await ws.git(['ls-remote', 'origin', this.ref], { network: true, ...(signal ? { signal } : {}) });
    const remote = listed.stdout.split('\t')[0]?.trim() || undefined;
    if (remote !== this.#value) this.#closed = true;
    if (this.#closed) throw new FencedError(`the service fenced attempt ${this.owner.attempt} of run ${this.owner.id}: it may push nothing more`);
  }

  /** Best effort at the end of the run: its fence is no longer needed (an announcement without one is never carried). */
  async remove(ws: QueueGit): Promise<void> {
    if (this.#value === undefined || this.#closed) return;
    await ws
      .git(['push', '--porcelain', '--no-verify', `--force-with-lease=${this.ref}:${this.#value}`, 'origin', `:${this.ref}`], {
        okExitCodes: [0, 1, 128],
        network: true,
      })
      .catch(() => undefined);
    this.#value = undefined;
  }
}

/** The fences of a branch as fetched: which are open, and each cluster's newest attempt. */
export interface FenceView {
  /** Refs of open fences. */
  readonly open: ReadonlySet<string>;
  /** Refs of fences the service closed. */
  readonly closed: ReadonlySet<string>;
  /** The highest attempt with a fence (open or closed), by cluster. */
  readonly newestAttempt: ReadonlyMap<string, number>;
}

/** The fences fetched for `branch` (see {@link fenceRefspec}). */
export async function readFences(ws: QueueGit, branch: string): Promise<FenceView> {
  const listed = await ws.git(['for-each-ref', '--format=%(refname)%00%(contents:subject)', fencePrefix(branch)]);
  const open = new Set<string>();
  const closed = new Set<string>();
  const newestAttempt = new Map<string, number>();
  for (const line of listed.stdout.split('\n').filter(Boolean)) {
    const [ref = '', subject = ''] = line.split('\0');
    const owner = parseFenceRef(branch, ref);
    if (owner === undefined) continue;
    (subject === `open ${owner.id} ${owner.attempt}` ? open : closed).add(ref);
    newestAttempt.set(owner.cluster, Math.max(owner.attempt, newestAttempt.get(owner.cluster) ?? 0));
  }
  return { open, closed, newestAttempt };
}
