/**
 * The run queue (`service/run-queue.ts`) in this process's memory, for an executor
 * without a store: its waiting runs are lost with the process.
 */
import type { RunSecrets, RunRecord } from '../run/run-record.js';
import type { ClaimedRun, RunQueue } from '../service/run-queue.js';

interface Entry {
  readonly run: RunRecord;
  /** Held while the run waits; dropped when it is claimed or dropped. */
  secrets: RunSecrets | undefined;
}

/** Runs waiting in memory, oldest first. */
export class MemoryRunQueue implements RunQueue {
  /** Every run ever queued (a Map keeps insertion order): the ids make a repeated enqueue a no-op. */
  readonly #entries = new Map<string, Entry>();

  enqueue(run: RunRecord, secrets: RunSecrets): Promise<void> {
    if (!this.#entries.has(run.id)) this.#entries.set(run.id, { run, secrets });
    return Promise.resolve();
  }

  claim(): Promise<ClaimedRun | undefined> {
    for (const entry of this.#entries.values()) {
      if (entry.secrets === undefined) continue;
      const { secrets } = entry;
      entry.secrets = undefined;
      return Promise.resolve({ run: entry.run, secrets });
    }
    return Promise.resolve(undefined);
  }

  drop(runId: string): Promise<boolean> {
    const entry = this.#entries.get(runId);
    if (entry?.secrets === undefined) return Promise.resolve(false);
    entry.secrets = undefined;
    return Promise.resolve(true);
  }

  isQueued(runId: string): Promise<boolean> {
    return Promise.resolve(this.#entries.get(runId)?.secrets !== undefined);
  }
}
