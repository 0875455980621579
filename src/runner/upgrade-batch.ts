/**
 * A batch upgrade run: one runner upgrades many clusters of a rollout's wave
 * from one clone, one process start, one set of loaded schemas and one
 * kustomize build cache (a wave's clusters read the same base/, so most of
 * their builds are answered by it), and lands them in one push. Each cluster
 * is still its own change: it is rendered again, verified and committed with
 * its own trailers, touching only its own directory. The commits then go out
 * together: one fetch, one rebase and one push for the batch instead of a
 * landing-queue round each. A rebase onto changed shared inputs verifies each
 * cluster again on the rebased tree; a cluster's verify reads its own
 * directory and the shared inputs, never the batch's other clusters, so that
 * is its own commit's verdict.
 *
 * A cluster that cannot be upgraded (its render fails verify, it cannot be
 * rendered without sealing anew, it is no longer generated) is left as it
 * was and the batch goes on: its neighbours in the wave are no less ready.
 * A push that gives up on a transient failure, or whose rebase brought
 * shared inputs under which a cluster fails its verify, renders the committed
 * clusters again from the branch (at most {@link LAND_RETRIES} times), so a
 * cluster that fails there fails alone; any other failed push fails them all.
 * A cancel or an unexpected error stops the batch: what was committed before
 * still lands (not after a cancel), and the clusters after it are not started.
 * The run fails when any cluster failed, and each cluster's outcome is logged
 * as a `batch_cluster` event as it comes and carried in the result, so a
 * rollout records every cluster on its own.
 */
import { AppError, ConflictError, VerificationError, failureOf, messageOf } from '../errors.js';
import type { Logger } from '../logger.js';
import type { BatchClusterOutcome, BatchClusterStatus } from '../run/run-record.js';
import type { WorkTreeVerify } from '../workspace/verify-work-tree.js';
import { upgradeChange, type FleetChange } from './fleet-change.js';
import type { RunFrame } from './run-frame.js';
import { upgradePlatformCommit } from '../workspace/upgrade-work-tree.js';

/**
 * Times the batch's committed clusters are rendered and landed again from the
 * branch as it is then, when their push gave up on a transient failure
 * (overtaken by concurrent pushes attempt after attempt) or a cluster failed
 * its verify again on the rebased tree.
 */
const LAND_RETRIES = 2;

/** A failure's words in an event and the record: a long list of findings is cut here (the run's log has it whole). */
const OUTCOME_MESSAGE_MAX = 600;

/** A cluster verified and committed, waiting for the batch's push. */
interface Committed {
  readonly name: string;
  readonly changes: { readonly added: number; readonly modified: number; readonly removed: number };
  readonly credentialsKept: number;
}

/** What a batch needs besides its frame. */
export interface UpgradeBatchContext {
  readonly frame: RunFrame;
  /** Every cluster of the run, its own first. */
  readonly clusters: readonly string[];
  readonly generatorVersion: string;
  /** The gate for one cluster; absent: none. */
  readonly gateFor?: (cluster: string) => WorkTreeVerify;
  readonly signal?: AbortSignal;
}

/** Each cluster's outcome as the batch goes, in the run's order. */
export class UpgradeBatch {
  readonly #context: UpgradeBatchContext;
  readonly #outcomes = new Map<string, BatchClusterOutcome>();
  /** The errors of the clusters that failed, by cluster. */
  readonly #failures = new Map<string, unknown>();
  /** Sealed credentials carried over byte for byte, over the clusters rendered. */
  #credentialsKept = 0;
  /** The platform commit the batch renders from: its own commits touch only its clusters, so it holds until the branch is synced anew. */
  #platformCommit: Promise<string | undefined> | undefined;

  constructor(context: UpgradeBatchContext) {
    this.#context = context;
  }

  /** Each cluster's status; one not reached yet is `not_started`. */
  statuses(): Record<string, BatchClusterStatus> {
    return Object.fromEntries(this.#context.clusters.map((name) => [name, this.#outcomes.get(name)?.status ?? 'not_started']));
  }

  /**
   * Step 2 of a batch: each cluster in turn rendered, verified and committed,
   * then all of their commits landed in one push. Throws only when the batch
   * must stop.
   */
  async upgradeEach(): Promise<void> {
    const { frame, clusters, signal } = this.#context;
    let todo = [...clusters];
    for (let retries = 0; ; retries++) {
      const committed: Committed[] = [];
      try {
        for (const name of todo) {
          signal?.throwIfAborted();
          const made = await this.#commit(name);
          if (made) committed.push(made);
        }
      } catch (error) {
        await this.#stop(todo, committed, error);
        throw error;
      }
      if (committed.length === 0) return;
      try {
        await this.#land(committed);
        return;
      } catch (error) {
        // A push that gave up, or a cluster failing its verify again on the rebased tree: nothing of it landed and its
        // announcement is withdrawn. Those clusters are rendered again from the branch as it is now, each verified on its
        // own, so one that fails there fails alone and the others land.
        if ((failureOf(error).transient || error instanceof VerificationError) && retries < LAND_RETRIES && signal?.aborted !== true) {
          frame.log.warn(
            { event: 'batch_retry', batch_cluster: committed[0]!.name, clusters: committed.length, retry: retries + 1, error_code: failureOf(error).code },
            `${committed.length} committed cluster(s) did not land (${messageOf(error)}); rendering them again from ${frame.branch} (retry ${retries + 1} of ${LAND_RETRIES})`,
          );
          await frame.workspace().syncTo(frame.branch, signal ? { signal } : {});
          this.#platformCommit = undefined;
          todo = committed.map((made) => made.name);
          continue;
        }
        // None of the commits landed: each of those clusters failed with the push.
        for (const made of committed) this.#fail(made.name, error);
        throw error;
      }
    }
  }

  /** Renders, verifies and commits one cluster; undefined when it failed or was up to date (recorded). Throws when the batch must stop. */
  async #commit(name: string): Promise<Committed | undefined> {
    const { frame, signal } = this.#context;
    let change: FleetChange;
    try {
      change = await upgradeChange({
        workspace: frame.workspace(),
        cluster: name,
        reference: frame.reference,
        generatorVersion: this.#context.generatorVersion,
        // Planned as a run of this cluster alone would plan it: the batch's other clusters are not read.
        leaveOut: frame.othersOf(name),
        platformCommit: () => (this.#platformCommit ??= upgradePlatformCommit(frame.workspace().dir, frame.reference)),
        ...(this.#context.gateFor ? { verify: this.#context.gateFor(name) } : {}),
      });
    } catch (error) {
      // Its tree is as it was (upgradeWorkTree restores a render that fails verify); the next cluster is no less ready.
      if (!(error instanceof AppError) || signal?.aborted === true) throw error;
      this.#fail(name, error);
      return undefined;
    }
    if (change.nothing !== undefined) {
      this.#credentialsKept += change.changes.credentialsKept ?? 0;
      this.#record(name, { status: 'up_to_date' }, undefined, change.nothing);
      return undefined;
    }
    const sha = await frame.commitOnly('upgrade', name, change);
    if (sha === undefined) {
      this.#record(name, { status: 'up_to_date' }, undefined, `clusters/${name}: nothing to commit`);
      return undefined;
    }
    frame.log.info({ batch_cluster: name, sha }, `committed clusters/${name} as ${sha.slice(0, 12)}; it lands with the batch's push`);
    return {
      name,
      changes: { added: change.changes.added, modified: change.changes.modified, removed: change.changes.removed },
      credentialsKept: change.changes.credentialsKept ?? 0,
    };
  }

  /** Lands the committed clusters in one push and records each. */
  async #land(committed: readonly Committed[]): Promise<void> {
    const landed = await this.#context.frame.landCommitted(
      'upgrade',
      committed.map((made) => made.name),
    );
    for (const made of committed) {
      const sha = landed.get(made.name);
      this.#credentialsKept += made.credentialsKept;
      const { added, modified, removed } = made.changes;
      this.#record(
        made.name,
        { status: 'upgraded', changes: made.changes },
        sha,
        `upgraded clusters/${made.name}${sha ? ` as ${sha.slice(0, 12)}` : ''}: ${added} added, ${modified} modified, ${removed} removed`,
      );
    }
  }

  /**
   * The batch stopped half-way (`error`: a cancel, an unexpected error): what
   * was verified and committed before still lands, unless it was cancelled;
   * the clusters not reached are not started.
   */
  async #stop(todo: readonly string[], committed: readonly Committed[], error: unknown): Promise<void> {
    const stoppedAt = todo.find((name) => !this.#outcomes.has(name) && !committed.some((made) => made.name === name));
    if (this.#context.signal?.aborted === true) {
      for (const made of committed) this.#record(made.name, { status: 'not_started', message: 'verified but not pushed: the run was cancelled' });
    } else if (committed.length > 0) {
      await this.#land(committed).catch((landing: unknown) => {
        for (const made of committed) this.#fail(made.name, landing);
      });
    }
    const why = `the batch stopped at clusters/${stoppedAt ?? '?'} (${messageOf(error)})`;
    for (const rest of todo) if (!this.#outcomes.has(rest)) this.#record(rest, { status: 'not_started', message: `not started: ${why}` });
  }

  /** The run's verdict once every cluster has an outcome: throws when any failed. */
  finish(): void {
    if (this.#failures.size === 0) return;
    const failed = [...this.#failures.entries()];
    if (failed.every(([, error]) => error instanceof VerificationError)) {
      throw new VerificationError(failed.flatMap(([name, error]) => (error as VerificationError).findings.map((finding) => `clusters/${name}: ${finding}`)));
    }
    throw new ConflictError(
      `${failed.length} of ${this.#context.clusters.length} cluster(s) could not be upgraded: ${failed.map(([name, error]) => `clusters/${name}: ${messageOf(error)}`).join('; ')}`,
    );
  }

  /** The succeeded result's words and counts. */
  summary(): { message: string; changes: { added: number; modified: number; removed: number; credentialsKept: number } } {
    const outcomes = [...this.#outcomes.values()];
    const count = (status: BatchClusterStatus) => outcomes.filter((o) => o.status === status).length;
    const sum = (key: 'added' | 'modified' | 'removed') => outcomes.reduce((total, o) => total + (o.changes?.[key] ?? 0), 0);
    const upgraded = count('upgraded');
    return {
      message: `upgraded ${upgraded} of ${this.#context.clusters.length} cluster(s) in one batch, one commit each; ${count('up_to_date')} up to date`,
      changes: { added: sum('added'), modified: sum('modified'), removed: sum('removed'), credentialsKept: this.#credentialsKept },
    };
  }

  #fail(name: string, error: unknown): void {
    this.#failures.set(name, error);
    const message = messageOf(error);
    this.#record(name, { status: 'failed', message: message.length > OUTCOME_MESSAGE_MAX ? `${message.slice(0, OUTCOME_MESSAGE_MAX)}…` : message });
  }

  #record(name: string, outcome: BatchClusterOutcome, sha?: string, words?: string): void {
    this.#outcomes.set(name, outcome);
    const log: Logger = this.#context.frame.log;
    const fields = {
      event: 'batch_cluster',
      batch_cluster: name,
      status: outcome.status,
      ...(sha !== undefined ? { sha } : {}),
      ...(outcome.changes ? { changes: outcome.changes } : {}),
    };
    const text = words ?? `clusters/${name}: ${outcome.status.replace('_', ' ')}${outcome.message ? `: ${outcome.message}` : ''}`;
    if (outcome.status === 'failed') log.warn({ ...fields, message: outcome.message }, text);
    else log.info({ ...fields, ...(outcome.message ? { message: outcome.message } : {}) }, text);
  }
}
