/**
 * A batch upgrade run: one runner upgrades many clusters of a rollout's wave
 * from one clone, one process start, one set of loaded schemas and one
 * kustomize build cache (a wave's clusters read the same base/, so most of
 * their builds are answered by it). Each cluster is still its own change: it
 * is rendered again, verified, committed with its own trailers and landed
 * through the landing queue before the next is rendered, so the working copy
 * is clean whenever a push has to rebase, and each commit is verified against
 * the tree it lands on (a rebase onto changed shared inputs verifies it again).
 *
 * A cluster that cannot be upgraded (its render fails verify, it cannot be
 * rendered without sealing anew, it is no longer generated) is left as it
 * was and the batch goes on: its neighbours in the wave are no less ready.
 * A push that fails, a cancel or an unexpected error stops the batch: the
 * clusters after it are not started. The run fails when any cluster failed,
 * and each cluster's outcome is logged as a `batch_cluster` event as it comes
 * and carried in the result, so a rollout records every cluster on its own.
 */
import { AppError, ConflictError, VerificationError, failureOf, messageOf } from '../errors.js';
import type { Logger } from '../logger.js';
import type { BatchClusterOutcome, BatchClusterStatus } from '../run/run-record.js';
import type { WorkTreeVerify } from '../workspace/verify-work-tree.js';
import { upgradeChange, type FleetChange } from './fleet-change.js';
import type { Landing, RunFrame } from './run-frame.js';

/**
 * Times a cluster whose push gave up on a transient failure (overtaken by
 * concurrent pushes attempt after attempt) is rendered and landed again from
 * the branch as it is then, before the batch stops.
 */
const LAND_RETRIES = 2;

/** A failure's words in an event and the record: a long list of findings is cut here (the run's log has it whole). */
const OUTCOME_MESSAGE_MAX = 600;

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

  constructor(context: UpgradeBatchContext) {
    this.#context = context;
  }

  /** Each cluster's status; one not reached yet is `not_started`. */
  statuses(): Record<string, BatchClusterStatus> {
    return Object.fromEntries(this.#context.clusters.map((name) => [name, this.#outcomes.get(name)?.status ?? 'not_started']));
  }

  /** Step 2 of a batch: each cluster in turn rendered, verified and landed. Throws only when the batch must stop. */
  async upgradeEach(): Promise<void> {
    const { frame, clusters, signal } = this.#context;
    let retries = 0;
    for (let index = 0; index < clusters.length; index++) {
      const name = clusters[index]!;
      signal?.throwIfAborted();
      let change: FleetChange;
      try {
        change = await upgradeChange({
          workspace: frame.workspace(),
          cluster: name,
          reference: frame.reference,
          generatorVersion: this.#context.generatorVersion,
          // Planned as a run of this cluster alone would plan it: the batch's other clusters are not read.
          leaveOut: frame.othersOf(name),
          ...(this.#context.gateFor ? { verify: this.#context.gateFor(name) } : {}),
        });
      } catch (error) {
        // Its tree is as it was (upgradeWorkTree restores a render that fails verify); the next cluster is no less ready.
        if (!(error instanceof AppError) || signal?.aborted === true) throw error;
        this.#fail(name, error);
        continue;
      }
      if (change.nothing !== undefined) {
        this.#credentialsKept += change.changes.credentialsKept ?? 0;
        this.#record(name, { status: 'up_to_date' }, undefined, change.nothing);
        continue;
      }
      const counts = { added: change.changes.added, modified: change.changes.modified, removed: change.changes.removed };
      try {
        const landing: Landing = { ...change, cluster: name, reverifyAfterRebase: true };
        const sha = await frame.land('upgrade', landing);
        this.#credentialsKept += change.changes.credentialsKept ?? 0;
        this.#record(
          name,
          { status: 'upgraded', changes: counts },
          sha,
          `upgraded clusters/${name}${sha ? ` as ${sha.slice(0, 12)}` : ''}: ${counts.added} added, ${counts.modified} modified, ${counts.removed} removed`,
        );
        retries = 0;
      } catch (error) {
        if (failureOf(error).transient && retries < LAND_RETRIES && signal?.aborted !== true) {
          // Its commit did not land and its announcement is withdrawn: start it again from the branch as it is now.
          retries++;
          frame.log.warn(
            { event: 'batch_retry', batch_cluster: name, retry: retries, error_code: failureOf(error).code },
            `clusters/${name} did not land (${messageOf(error)}); rendering it again from ${frame.branch} (retry ${retries} of ${LAND_RETRIES})`,
          );
          await frame.workspace().syncTo(frame.branch, signal ? { signal } : {});
          index--;
          continue;
        }
        // A commit that did not land may still sit in the working copy: nothing after it may be pushed on top of it.
        this.#fail(name, error);
        const left = clusters.slice(index + 1);
        for (const rest of left) this.#record(rest, { status: 'not_started', message: `not started: the batch stopped at clusters/${name}` });
        throw error;
      }
    }
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
