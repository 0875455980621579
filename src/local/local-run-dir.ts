/**
 * The local executor's per-run directory, `<dataDir>/runs/<id>`: the runner's
 * result file, its owner lease and its working copy all live below it, so the
 * executor can remove whatever a runner left behind, however it ended, and a
 * service started again after a crash finds everything where it left it. With
 * a scratch volume (`SCAFFOLD_SCRATCH_DIR`), each run has its own directory
 * there too (the work tree's files, verify's copies), removed the same way.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import { processAlive, readLease } from '../run-contract/run-lease.js';
import { parseRunResult } from '../run-contract/run-result.js';
import type { ExecutionState } from '../service/run-executor.js';
import type { RunCommit, RunResult, RunRecord } from '../run/run-record.js';
import { LeaseWatch } from './lease-watch.js';

/** Sends `signal` to process group `pgid`; a group that is gone is fine. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/** Paths and files of local runs. */
export class LocalRunDirs {
  readonly #leases: LeaseWatch;

  /**
   * @param monotonicNow - the clock leases are judged on (see `lease-watch.ts`)
   * @param scratchRoot - the scratch volume the runners' directories go in, if any
   */
  constructor(
    private readonly dataDir: string,
    monotonicNow?: () => number,
    private readonly scratchRoot?: string,
  ) {
    this.#leases = new LeaseWatch(monotonicNow);
  }

  runDirOf(id: string): string {
    return join(this.dataDir, 'runs', id);
  }

  resultFileOf(id: string): string {
    return join(this.runDirOf(id), 'result.json');
  }

  /** The runner's owner lease (see `run-contract/run-lease.ts`). */
  leaseFileOf(id: string): string {
    return join(this.runDirOf(id), 'lease.json');
  }

  /** The run's own directory on the scratch volume, when there is one; removed when the runner has exited, however it ended. */
  scratchDirOf(id: string): string | undefined {
    return this.scratchRoot === undefined ? undefined : join(this.scratchRoot, id);
  }

  /** What a runner leaves on disk while it works: its working copy, and its scratch directory. */
  #workingDirsOf(id: string): string[] {
    const scratch = this.scratchDirOf(id);
    return scratch === undefined ? [this.workDirOf(id)] : [this.workDirOf(id), scratch];
  }

  /** The runner's stdout and stderr (see `output-file.ts`); kept with the result. */
  outputFileOf(id: string): string {
    return join(this.runDirOf(id), 'output.log');
  }

  /** Where the runner clones; removed when the runner has exited, however it ended. */
  workDirOf(id: string): string {
    return join(this.runDirOf(id), 'work');
  }

  /** A fresh run directory, private to the service's user, with nothing of an earlier start in it. */
  async prepare(id: string): Promise<void> {
    await mkdir(this.runDirOf(id), { recursive: true, mode: 0o700 });
    for (const leftover of [this.resultFileOf(id), this.leaseFileOf(id), this.outputFileOf(id), ...this.#workingDirsOf(id)])
      await rm(leftover, { recursive: true, force: true });
  }

  /** The result file's text (undefined when there is none) and the result in it (undefined when malformed). */
  async readResult(id: string): Promise<{ text?: string; result?: RunResult }> {
    const text = await readFile(this.resultFileOf(id), 'utf8').catch(() => undefined);
    const result = parseRunResult(text);
    return { ...(text === undefined ? {} : { text }), ...(result === undefined ? {} : { result }) };
  }

  /** Removes what a runner that has exited leaves behind: its working copy, its scratch directory and its lease. */
  async removeLeftovers(id: string): Promise<void> {
    for (const dir of this.#workingDirsOf(id)) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    await rm(this.leaseFileOf(id), { force: true }).catch(() => undefined);
  }

  /**
   * A run this process did not start (it was started before a restart) and
   * that has no result. A lease held by a live runner that this process has
   * seen renewed within `leaseTtlMs` of its own monotonic time (a lease seen
   * for the first time counts as renewed) means it still works and may still
   * push: running. A lease gone stale (unchanged that long, or its process
   * gone) means the runner
   * died or hung without a result: whatever is left of its process group is
   * killed, its leftovers removed, and the run recorded as failed with what
   * landed on the remote (written to the result file, so the answer does not
   * change). No lease: missing.
   */
  async inspectUnowned(
    run: RunRecord,
    options: { readonly leaseTtlMs: number; readonly landed: () => Promise<readonly RunCommit[] | undefined>; readonly logger: Logger },
  ): Promise<ExecutionState> {
    const lease = await readLease(this.leaseFileOf(run.id));
    if (lease === undefined || lease.run_id !== run.id) {
      this.#leases.forget(run.id);
      return { state: 'missing' };
    }
    const alive = processAlive(lease.pid);
    if (alive && this.#leases.renewed(lease, options.leaseTtlMs)) return { state: 'running' };
    const unchangedMs = Math.round(this.#leases.unchangedFor(run.id));
    this.#leases.forget(run.id);
    signalGroup(lease.pid, 'SIGKILL');
    for (const dir of this.#workingDirsOf(run.id)) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    const landed = await options.landed();
    const result: RunResult = {
      status: 'failed',
      message: `the runner stopped without writing a result (${alive ? `its lease went unrenewed for ${unchangedMs} ms` : 'its process is gone'}; last renewed at ${lease.renewed_at} by its clock)`,
      ...(landed === undefined ? {} : { commits: landed }),
    };
    await writeFile(this.resultFileOf(run.id), `${JSON.stringify(result)}\n`, { mode: 0o600 });
    await rm(this.leaseFileOf(run.id), { force: true });
    options.logger.warn({ run: run.id, pid: lease.pid }, 'the runner of a run started before a restart stopped without a result');
    return { state: 'failed', result };
  }

  /** Stops a runner started before a restart, found through its lease: SIGTERM to its group, SIGKILL after `graceMs`. */
  async stopUnowned(run: RunRecord, graceMs: number): Promise<void> {
    const lease = await readLease(this.leaseFileOf(run.id));
    if (lease === undefined || lease.run_id !== run.id || !processAlive(lease.pid)) return;
    signalGroup(lease.pid, 'SIGTERM');
    const deadline = performance.now() + graceMs;
    while (processAlive(lease.pid) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    signalGroup(lease.pid, 'SIGKILL');
  }
}
