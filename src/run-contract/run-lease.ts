/**
 * The run's owner lease: a small file the runner rewrites every few seconds
 * while it works (`SCAFFOLD_LEASE_FILE`) and removes when it has written its
 * result. It is how an executor that did not start the runner (the service
 * after a restart) tells a runner that is still working, and may still push,
 * from one that died: a fresh lease held by a live process means "hands off",
 * so the run is neither declared lost nor retried beside it.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { z } from 'zod';

/** What the lease file holds. */
export const runLeaseSchema = z.object({
  run_id: z.string(),
  /** The runner's pid; the executor started it as the leader of its own process group. */
  pid: z.number().int().positive(),
  /** The runner's clock at the renewal: for messages only; no other machine's clock is compared with it. */
  renewed_at: z.string().datetime(),
  /**
   * Renewals so far, counting up: a reader judges freshness by whether it
   * changes over the reader's own monotonic interval. Absent in leases of
   * older runners, whose `renewed_at` changes the same way.
   */
  seq: z.number().int().nonnegative().optional(),
});
export type RunLease = z.infer<typeof runLeaseSchema>;

/** How often the runner renews its lease. */
export const LEASE_RENEW_MS = 2_000;

/** Writes the lease in one rename, so a reader never sees half of it. */
async function writeLease(path: string, lease: RunLease): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(lease)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

/** The lease at `path`, or undefined when there is none or it is unreadable. */
export async function readLease(path: string): Promise<RunLease | undefined> {
  try {
    const parsed = runLeaseSchema.safeParse(JSON.parse(await readFile(path, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Holds the lease for this process: writes it now and every `intervalMs`.
 * `release()` stops renewing and removes the file (after the result is written).
 */
export async function holdLease(path: string, runId: string, intervalMs = LEASE_RENEW_MS): Promise<{ release(): Promise<void> }> {
  let seq = 0;
  const renew = (): Promise<void> => writeLease(path, { run_id: runId, pid: process.pid, renewed_at: new Date().toISOString(), seq: seq++ });
  await renew();
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    // A failed renewal (disk full) lets the lease lapse: the safe direction.
    renewing = renew().catch(() => undefined);
  }, intervalMs);
  timer.unref();
  return {
    async release() {
      clearInterval(timer);
      await renewing;
      await rm(path, { force: true });
    },
  };
}
