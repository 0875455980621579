/**
 * The local executor's run queue (`service/run-queue.ts`) as rows of the run
 * store, PostgreSQL or PGlite alike: runs waiting when a service stops or
 * crashes are claimed by the next one on the same store. A claim is one
 * statement that picks the oldest waiting row with `FOR UPDATE SKIP LOCKED`
 * and marks it claimed, so two executors on one database never take the same
 * run, and neither waits for the other's pick.
 */
import type { ClaimedRun, RunQueue } from '../service/run-queue.js';
import type { RunSecrets, RunRecord } from '../run/run-record.js';
import { translatePgError } from './pg-errors.js';
import { QueuedSecretsCipher } from './queued-secrets-cipher.js';
import { COLUMNS, runOf, type RunRow } from './run-row.js';
import type { SqlClient } from './sql-client.js';

/** Runs waiting for a local executor slot, in the store. */
export class PgRunQueue implements RunQueue {
  readonly #client: SqlClient;
  readonly #cipher: QueuedSecretsCipher;

  /** @param queueKey - the service's queue key: the secrets of waiting runs are sealed under a key derived from it */
  constructor(client: SqlClient, queueKey: string) {
    this.#client = client;
    this.#cipher = new QueuedSecretsCipher(queueKey);
  }

  async enqueue(run: RunRecord, secrets: RunSecrets): Promise<void> {
    await this.#run(() =>
      this.#client.query(`INSERT INTO local_run_queue (run_id, state, secrets) VALUES ($1, 'queued', $2) ON CONFLICT (run_id) DO NOTHING`, [
        run.id,
        this.#cipher.seal(run.id, secrets),
      ]),
    );
  }

  async claim(owner: string): Promise<ClaimedRun | undefined> {
    // Waiting rows of runs that ended meanwhile (cancelled while the service was
    // down) lose their secrets here rather than whenever someone looks.
    await this.#run(() =>
      this.#client.query(
        `UPDATE local_run_queue q SET state = 'dropped', secrets = NULL
         FROM scaffold_runs r
         WHERE r.id = q.run_id AND q.state = 'queued' AND r.status <> 'pending'`,
      ),
    );
    // The pick and the mark are one statement: the row lock taken by the pick is
    // held until the mark commits, and a concurrent claim skips that row.
    const { rows } = await this.#run(() =>
      this.#client.query<RunRow & { sealed_secrets: string }>(
        `WITH next AS (
           SELECT ${COLUMNS}, q.secrets AS sealed_secrets
           FROM local_run_queue q JOIN scaffold_runs r ON r.id = q.run_id
           WHERE q.state = 'queued' AND r.status = 'pending'
           ORDER BY q.seq
           LIMIT 1
           FOR UPDATE OF q SKIP LOCKED
         )
         UPDATE local_run_queue q SET state = 'claimed', secrets = NULL, claimed_by = $1, claimed_at = now()
         FROM next WHERE q.run_id = next.id AND q.state = 'queued'
         RETURNING next.*`,
        [owner],
      ),
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    const { sealed_secrets: sealed, ...runRow } = row;
    const run = runOf(runRow);
    try {
      return { run, secrets: this.#cipher.open(row.id, sealed) };
    } catch (error) {
      return { run, unreadable: error instanceof Error ? error.message : String(error) };
    }
  }

  async drop(runId: string): Promise<boolean> {
    const { rowCount } = await this.#run(() =>
      this.#client.query(`UPDATE local_run_queue SET state = 'dropped', secrets = NULL WHERE run_id = $1 AND state = 'queued'`, [runId]),
    );
    return rowCount > 0;
  }

  async isQueued(runId: string): Promise<boolean> {
    const { rowCount } = await this.#run(() => this.#client.query(`SELECT 1 FROM local_run_queue WHERE run_id = $1 AND state = 'queued'`, [runId]));
    return rowCount > 0;
  }

  async #run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw translatePgError(error);
    }
  }
}
