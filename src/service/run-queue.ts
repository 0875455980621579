/**
 * The local executor's waiting room: runs started beyond the concurrency
 * limit wait here, with the secrets they will be spawned with. In a service
 * the queue is rows of the run store (`db/pg-run-queue.ts`), so runs waiting
 * when the service stops or crashes are started by the next service on that
 * store; `local/memory-run-queue.ts` is the same contract for an executor without a
 * store (tests, tools).
 */
import type { RunSecrets, RunRecord } from '../run/run-record.js';

/**
 * A run taken off the queue, with the secrets it was queued with, or why they
 * cannot be read (sealed under another queue key): such a run fails, it is
 * never started without them.
 */
export type ClaimedRun = { readonly run: RunRecord; readonly secrets: RunSecrets } | { readonly run: RunRecord; readonly unreadable: string };

/** Where runs wait for an executor slot. */
export interface RunQueue {
  /**
   * Queues a run. A run queued before, whatever became of it since (claimed,
   * dropped), is not queued again: a repeated start never runs it twice.
   */
  enqueue(run: RunRecord, secrets: RunSecrets): Promise<void>;
  /**
   * Takes the oldest waiting run for `owner`, atomically: two executors
   * claiming at once never get the same run. The secrets leave the queue with
   * it. A run no longer pending in the store (cancelled while it waited) is
   * never handed out.
   * @returns undefined when no run waits
   */
  claim(owner: string): Promise<ClaimedRun | undefined>;
  /**
   * Drops a waiting run and its secrets (it was cancelled).
   * @returns true when it was still waiting, false when it had been claimed or never queued
   */
  drop(runId: string): Promise<boolean>;
  /** Whether the run is waiting. */
  isQueued(runId: string): Promise<boolean>;
}
