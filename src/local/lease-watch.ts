/**
 * Whether a runner's lease is still renewed, judged on one clock: this
 * process's monotonic one. The runner's `renewed_at` is never compared with
 * the service's wall clock — a service whose clock runs minutes ahead would
 * take every healthy runner for dead and SIGKILL it after a restart, and one
 * behind would keep a dead runner's run "running". Instead the watch notes
 * when it first saw each renewal (the lease's `seq`, or its `renewed_at` for
 * older runners); a lease that has not changed for `ttlMs` of this process's
 * own time has lapsed.
 *
 * A lease seen for the first time is fresh: after a restart the service gives
 * every runner one full TTL to show it still renews.
 */
import type { RunLease } from '../run-contract/run-lease.js';

/** The renewals this process has seen, per run. */
export class LeaseWatch {
  readonly #seen = new Map<string, { readonly mark: string; readonly since: number }>();
  readonly #now: () => number;

  /** @param now - a monotonic clock in milliseconds (@default performance.now) */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Whether `lease` has changed within the last `ttlMs` of this process's time. */
  renewed(lease: RunLease, ttlMs: number): boolean {
    const mark = `${lease.pid}/${lease.seq ?? lease.renewed_at}`;
    const now = this.#now();
    const seen = this.#seen.get(lease.run_id);
    if (seen === undefined || seen.mark !== mark) {
      this.#seen.set(lease.run_id, { mark, since: now });
      return true;
    }
    return now - seen.since <= ttlMs;
  }

  /** How long (ms) the lease of `runId` has been seen unchanged; 0 when not watched. */
  unchangedFor(runId: string): number {
    const seen = this.#seen.get(runId);
    return seen === undefined ? 0 : this.#now() - seen.since;
  }

  /** Stops watching a run whose lease is gone. */
  forget(runId: string): void {
    this.#seen.delete(runId);
  }
}
