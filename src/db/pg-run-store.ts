/**
 * `RunStore` on PostgreSQL: a real server through `pg`, or embedded PGlite with
 * the same SQL. The invariants live in the database so they hold across service
 * replicas: one active run per cluster (repository, branch, name) is a partial unique index, status
 * transitions are conditional UPDATEs, and log sequence numbers come from a
 * counter bumped under the run's row lock.
 */
import { ConflictError, NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import type { LogLine, NewRun, RunFilter, RunGuard, RunPage, RunStore, RunUpdate } from '../service/run-store.js';
import { ACTIVE_STATUSES, canTransition, type RunStatus, type RunRecord } from '../run/run-record.js';
import { migrate } from './migrate.js';
import { isRunAction } from '../model/run-action.js';
import { PgSqlClient } from './pg-sql-client.js';
import { PgliteSqlClient } from './pglite-sql-client.js';
import type { SqlClient } from './sql-client.js';
import { GroupBatcher, type ItemOutcome } from './group-batcher.js';
import { PgRolloutStore } from './pg-rollout-store.js';
import { PgRunQueue } from './pg-run-queue.js';
import { codeOf, constraintOf, describeCode, translatePgError } from './pg-errors.js';
import {
  COLUMNS,
  clusterOf,
  decodeCursor,
  encodeCursor,
  isoOf,
  runOf,
  storableChanges,
  storableCommits,
  storableOutcomes,
  storableText,
  storedReviewRequestsOf,
  type RunRow,
} from './run-row.js';

/** What a `PgRunStore` needs. */
export interface PgRunStoreDeps {
  /** A client on a migrated database (see `migrate`). The store closes it on `close()`. */
  readonly client: SqlClient;
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * Concurrent creates share INSERT statements. `false` sends each create as
   * its own statement, as the store did before (kept for the benchmark's
   * before/after). @default true
   */
  readonly groupCreates?: boolean;
}

/** Options of {@link PgRunStore.open}. */
export interface PgRunStoreOpenOptions {
  /** PostgreSQL connection URI. When set, the store uses that server. */
  readonly databaseUrl?: string;
  /**
   * PGlite data directory, used when `databaseUrl` is unset.
   * @default undefined: an in-memory database, gone on close
   */
  readonly dataDir?: string;
  /** Pool size on a real server. @default 10 */
  readonly poolSize?: number;
  /** Server-side statement timeout on a real server, in ms. @default 30000 */
  readonly statementTimeoutMs?: number;
  /** @default silentLogger */
  readonly logger?: Logger;
}

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;
const DEFAULT_LOG_LIMIT = 1000;
// A follower asking for "everything" still gets bounded pages.
const MAX_LOG_LIMIT = 10_000;

// Every status, typed as a record so adding a RunStatus fails compilation here.
const STATUS_KEYS: Readonly<Record<RunStatus, true>> = { pending: true, running: true, succeeded: true, failed: true, cancelled: true };
const ALL_STATUSES = Object.keys(STATUS_KEYS) as RunStatus[];

// Spelled out as literals (from a constant, never from input) so the planner can
// match the partial index's predicate.
const ACTIVE_SQL = `status IN (${ACTIVE_STATUSES.map((s) => `'${s}'`).join(', ')})`;
const ONE_ACTIVE_INDEX = 'scaffold_runs_one_active_per_cluster_key';

// Timestamps are truncated to milliseconds on write: a JavaScript Date holds no
// more, so what a caller reads back (and what a list cursor encodes) is exactly
// what is stored, and keyset pagination has no gaps at microsecond ties.
const NOW = `date_trunc('milliseconds', now())`;

const INSERT_COLUMNS = `id, cluster_name, cluster_domain, cluster_region, repository_url, branch, reference,
  status, step, message, job, commits, attempt, sealing, created_by, created_at, updated_at,
  cluster_role, cluster_infra_provider, cluster_dns_provider, delivery, action, rotation, batch`;
/** Parameters of one row of {@link insertRow}, in the order of {@link insertParams}. */
const INSERT_PARAMS = 17;

/** The VALUES tuple of a new run, its parameters numbered from `offset + 1`. */
function insertRow(offset: number): string {
  const $ = (n: number) => `$${offset + n}`;
  return `(${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)}, ${$(6)}, ${$(7)}, 'pending', 0, '', ${$(8)}, '[]'::jsonb, 1, ${$(9)}, ${$(10)}, ${NOW}, ${NOW}, ${$(11)}, ${$(12)}, ${$(13)}, ${$(14)}::jsonb, ${$(15)}, ${$(16)}, ${$(17)}::jsonb)`;
}

function insertParams(run: NewRun): unknown[] {
  return [
    run.id,
    run.cluster.name,
    run.cluster.domain,
    run.cluster.region,
    run.repositoryUrl,
    run.branch,
    run.reference,
    run.job,
    run.sealing,
    run.createdBy,
    run.cluster.role ?? null,
    run.cluster.infra_provider ?? null,
    run.cluster.dns_provider ?? null,
    run.delivery ? JSON.stringify(run.delivery) : null,
    run.action ?? 'scaffold',
    run.rotation ?? null,
    run.batch !== undefined && run.batch.length > 0 ? JSON.stringify(run.batch) : null,
  ];
}

/** Scaffold runs and their logs in PostgreSQL or PGlite. */
export class PgRunStore implements RunStore {
  readonly #client: SqlClient;
  readonly #logger: Logger;
  readonly #creates: GroupBatcher<NewRun, Date>;

  constructor(deps: PgRunStoreDeps) {
    this.#client = deps.client;
    this.#logger = deps.logger ?? silentLogger;
    this.#creates = new GroupBatcher<NewRun, Date>({
      send: (runs) => this.#insertBatch(runs),
      // Two batches in flight leave the rest of the pool to reads and updates.
      ...(deps.groupCreates === false ? { maxInFlight: Number.POSITIVE_INFINITY, maxBatch: 1 } : { maxInFlight: 2, maxBatch: 100 }),
    });
  }

  /**
   * Connects (PostgreSQL when `databaseUrl` is set, else PGlite on `dataDir` or in
   * memory), brings the schema up to date and returns the store.
   * @throws UnavailableError when the server cannot be reached
   */
  static async open(options: PgRunStoreOpenOptions = {}): Promise<PgRunStore> {
    const logger = options.logger ?? silentLogger;
    const client: SqlClient = options.databaseUrl
      ? new PgSqlClient({
          databaseUrl: options.databaseUrl,
          logger,
          ...(options.poolSize !== undefined ? { poolSize: options.poolSize } : {}),
          ...(options.statementTimeoutMs !== undefined ? { statementTimeoutMs: options.statementTimeoutMs } : {}),
        })
      : await PgliteSqlClient.open(options.dataDir !== undefined ? { dataDir: options.dataDir } : {});
    try {
      await migrate(client, { logger });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw translatePgError(error);
    }
    logger.debug({ backend: options.databaseUrl ? 'postgresql' : 'pglite', persistent: Boolean(options.databaseUrl || options.dataDir) }, 'run store open');
    return new PgRunStore({ client, logger });
  }

  async create(run: NewRun): Promise<RunRecord> {
    // The registry, not the schema, says which actions exist (migration 11).
    if (run.action !== undefined && !isRunAction(run.action)) throw new ValidationError([{ field: 'action', message: 'is not a run action this build knows' }]);
    const createdAt = await this.#creates.submit(run);
    // What runOf would read back from the row just written (updated_at is the same now()).
    return {
      id: run.id,
      action: run.action ?? 'scaffold',
      cluster: clusterOf(run.cluster.name, run.cluster.domain, run.cluster.region, run.cluster.role, run.cluster.infra_provider, run.cluster.dns_provider),
      repositoryUrl: run.repositoryUrl,
      branch: run.branch,
      reference: run.reference,
      status: 'pending',
      step: 0,
      message: '',
      job: run.job,
      commits: [],
      attempt: 1,
      createdAt,
      updatedAt: new Date(createdAt.getTime()),
      createdBy: run.createdBy,
      sealing: run.sealing,
      ...(run.rotation !== undefined ? { rotation: run.rotation } : {}),
      ...(run.delivery ? { delivery: run.delivery } : {}),
      ...(run.batch !== undefined && run.batch.length > 0 ? { batch: [...run.batch] } : {}),
    };
  }

  /**
   * Inserts the creates that waited together in one statement. A row that
   * conflicts (an id or an active run that exists, or an earlier row of the
   * same batch) is skipped by ON CONFLICT DO NOTHING and goes again alone,
   * where the conflict is reported as it would be without batching; so does
   * every row of a batch the database refuses for its data.
   */
  async #insertBatch(runs: readonly NewRun[]): Promise<ItemOutcome<Date>[]> {
    if (runs.length === 1) return [await outcomeOf(this.#insertOne(runs[0]!))];
    // RETURNING tells rows apart by id: a repeated id waits for the statement and goes alone.
    const firstOfId = new Map<string, NewRun>();
    for (const run of runs) if (!firstOfId.has(run.id)) firstOfId.set(run.id, run);
    const together = [...firstOfId.values()];
    let inserted = new Map<string, Date>();
    try {
      const { rows } = await this.#client.query<{ id: string; created_at: Date }>(
        `INSERT INTO scaffold_runs (${INSERT_COLUMNS}) VALUES ${together.map((_, index) => insertRow(index * INSERT_PARAMS)).join(', ')}
         ON CONFLICT DO NOTHING RETURNING id, created_at`,
        together.flatMap(insertParams),
      );
      inserted = new Map(rows.map((row) => [row.id, row.created_at]));
    } catch (error) {
      if (!isRowError(error)) throw translatePgError(error);
    }
    return Promise.all(
      runs.map((run) => {
        const createdAt = firstOfId.get(run.id) === run ? inserted.get(run.id) : undefined;
        return createdAt !== undefined ? { ok: true as const, value: createdAt } : outcomeOf(this.#insertOne(run));
      }),
    );
  }

  /** One row, one statement; a conflict becomes a ConflictError that names what conflicts. */
  async #insertOne(run: NewRun): Promise<Date> {
    try {
      // No read before or after: the partial unique index decides the
      // one-active-run rule, and everything but the timestamp is known already,
      // so only created_at comes back (each returned column costs decoding,
      // which on PGlite is a good part of the statement).
      const { rows } = await this.#client.query<{ created_at: Date }>(
        `INSERT INTO scaffold_runs (${INSERT_COLUMNS}) VALUES ${insertRow(0)} RETURNING created_at`,
        insertParams(run),
      );
      return firstRow(rows).created_at;
    } catch (error) {
      if (codeOf(error) !== '23505') throw translatePgError(error);
      if (constraintOf(error) === ONE_ACTIVE_INDEX) {
        const active = await this.#activeRunOf(run);
        throw new ConflictError(
          `cluster ${run.cluster.name} already has an active run on branch ${run.branch} of this repository${active ? ` (${active})` : ''}`,
          { cause: error },
        );
      }
      throw new ConflictError(`run ${run.id} already exists`, { cause: error });
    }
  }

  async get(id: string): Promise<RunRecord | undefined> {
    const { rows } = await this.#query<RunRow>(`SELECT ${COLUMNS} FROM scaffold_runs WHERE id = $1`, [id]);
    return rows[0] ? runOf(rows[0]) : undefined;
  }

  async list(filter: RunFilter): Promise<RunPage> {
    const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
      throw new ValidationError([{ field: 'limit', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` }]);
    }
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (filter.cluster !== undefined) where.push(`cluster_name = ${param(filter.cluster)}`);
    if (filter.repositoryUrl !== undefined) where.push(`repository_url = ${param(filter.repositoryUrl)}`);
    if (filter.branch !== undefined) where.push(`branch = ${param(filter.branch)}`);
    if (filter.status !== undefined) where.push(`status = ${param(filter.status)}`);
    if (filter.cursor !== undefined) {
      const cursor = decodeCursor(filter.cursor);
      // Row comparison: strictly after the last row of the previous page in
      // (created_at DESC, id DESC) order; served by the matching index.
      where.push(`(created_at, id) < (${param(cursor.createdAt)}::timestamptz, ${param(cursor.id)})`);
    }
    // One extra row tells whether there is a next page without a count query.
    const { rows } = await this.#query<RunRow>(
      `SELECT ${COLUMNS} FROM scaffold_runs
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, id DESC
       LIMIT ${param(limit + 1)}`,
      params,
    );
    const runs = rows.slice(0, limit).map(runOf);
    const last = runs.at(-1);
    return rows.length > limit && last ? { runs, nextCursor: encodeCursor(last) } : { runs };
  }

  async listActive(): Promise<RunRecord[]> {
    const { rows } = await this.#query<RunRow>(`SELECT ${COLUMNS} FROM scaffold_runs WHERE ${ACTIVE_SQL} ORDER BY created_at, id`);
    return rows.map(runOf);
  }

  async update(id: string, update: RunUpdate, from?: readonly RunStatus[], guard: RunGuard = {}): Promise<RunRecord | undefined> {
    // The statuses the row may be in for this update to apply: the caller's guard,
    // narrowed to those allowed to move to the target status. An update without
    // a status keeps the current one, which only active runs may (final is final).
    const allowed = ALL_STATUSES.filter((s) => (from === undefined || from.includes(s)) && canTransition(s, update.status ?? s));
    if (allowed.length === 0) return undefined;

    const params: unknown[] = [id, allowed];
    const set: string[] = [`updated_at = ${NOW}`];
    const assign = (column: string, value: unknown, cast = ''): void => {
      params.push(value);
      set.push(`${column} = $${params.length}${cast}`);
    };
    if (update.status !== undefined) assign('status', update.status);
    if (update.step !== undefined) assign('step', update.step);
    // The texts below came from a runner's output: one the database cannot hold would fail
    // every try of the update, and the run would never get its outcome.
    if (update.stepName !== undefined) assign('step_name', storableText(update.stepName));
    if (update.message !== undefined) assign('message', storableText(update.message));
    if (update.gitopsPath !== undefined) assign('gitops_path', storableText(update.gitopsPath));
    if (update.commits !== undefined) assign('commits', JSON.stringify(storableCommits(update.commits)), '::jsonb');
    if (update.changes !== undefined) assign('changes', JSON.stringify(storableChanges(update.changes)), '::jsonb');
    if (update.batchOutcomes !== undefined) assign('batch_outcomes', JSON.stringify(storableOutcomes(update.batchOutcomes)), '::jsonb');
    if (update.failure !== undefined) {
      assign('error_code', update.failure.code);
      assign('transient', update.failure.transient);
    }
    if (update.reviewRequests !== undefined) assign('review_requests', JSON.stringify(storedReviewRequestsOf(update.reviewRequests)), '::jsonb');
    if (update.attempt !== undefined) assign('attempt', update.attempt);
    if (update.job !== undefined) assign('job', update.job);
    if (update.startedAt !== undefined) assign('started_at', isoOf(update.startedAt, 'startedAt'), `::timestamptz`);
    if (update.finishedAt !== undefined) assign('finished_at', isoOf(update.finishedAt, 'finishedAt'), `::timestamptz`);

    const conditions = ['id = $1', 'status = ANY($2::text[])'];
    if (guard.createdAtLeastMsAgo !== undefined) {
      // The age is the database's: now() wrote created_at, so no other machine's clock takes part.
      params.push(guard.createdAtLeastMsAgo);
      conditions.push(`created_at <= now() - $${params.length}::double precision * interval '1 millisecond'`);
    }
    // Check and write in one statement: under READ COMMITTED a concurrent update of
    // the same row makes this one wait and re-evaluate the WHERE on the new row,
    // so two writers can never both move a run out of the same status.
    const { rows } = await this.#query<RunRow>(
      `UPDATE scaffold_runs SET ${set.join(', ')}
       WHERE ${conditions.join(' AND ')}
       RETURNING ${COLUMNS}`,
      params,
    );
    return rows[0] ? runOf(rows[0]) : undefined;
  }

  async appendLogs(id: string, lines: readonly { readonly time: Date; readonly line: string }[], options: { readonly afterSeq?: number } = {}): Promise<void> {
    if (lines.length === 0) return;
    const payload = JSON.stringify(lines.map((l, i) => [isoOf(l.time, `lines.${i}.time`), storableText(l.line)]));
    const { afterSeq } = options;
    if (afterSeq !== undefined) {
      if (!Number.isInteger(afterSeq) || afterSeq < 0) throw new ValidationError([{ field: 'afterSeq', message: 'must be a non-negative integer' }]);
      await this.#run(() =>
        this.#client.transaction(async (tx) => {
          // The caller numbered the lines; the counter only moves forward, under the run's row lock.
          const { rowCount } = await tx.query('UPDATE scaffold_runs SET log_seq = GREATEST(log_seq, $2::integer) WHERE id = $1', [id, afterSeq + lines.length]);
          if (rowCount === 0) throw new NotFoundError(`run ${id} not found`);
          await tx.query(
            `INSERT INTO scaffold_run_logs (run_id, seq, time, line)
             SELECT $1, $2::integer + e.ord::integer, (e.value->>0)::timestamptz, e.value->>1
             FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(value, ord)
             ON CONFLICT (run_id, seq) DO NOTHING`,
            [id, afterSeq, payload],
          );
        }),
      );
      return;
    }
    await this.#run(() =>
      this.#client.transaction(async (tx) => {
        // Reserving the numbers bumps the run's counter, which row-locks the run
        // until commit: a concurrent append waits and continues after our last seq.
        const { rows } = await tx.query<{ log_seq: number }>('UPDATE scaffold_runs SET log_seq = log_seq + $2 WHERE id = $1 RETURNING log_seq', [
          id,
          lines.length,
        ]);
        const reserved = rows[0];
        if (!reserved) throw new NotFoundError(`run ${id} not found`);
        await tx.query(
          `INSERT INTO scaffold_run_logs (run_id, seq, time, line)
           SELECT $1, $2::integer + e.ord::integer, (e.value->>0)::timestamptz, e.value->>1
           FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(value, ord)`,
          [id, reserved.log_seq - lines.length, payload],
        );
      }),
    );
  }

  async readLogs(id: string, options: { readonly afterSeq?: number; readonly limit?: number } = {}): Promise<LogLine[]> {
    const afterSeq = options.afterSeq ?? 0;
    const limit = Math.min(options.limit ?? DEFAULT_LOG_LIMIT, MAX_LOG_LIMIT);
    if (!Number.isInteger(afterSeq) || afterSeq < 0) throw new ValidationError([{ field: 'afterSeq', message: 'must be a non-negative integer' }]);
    if (!Number.isInteger(limit) || limit < 0) throw new ValidationError([{ field: 'limit', message: 'must be a non-negative integer' }]);
    if (limit === 0) return [];
    const { rows } = await this.#query<{ seq: number; time: Date; line: string }>(
      'SELECT seq, time, line FROM scaffold_run_logs WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [id, afterSeq, limit],
    );
    return rows.map((row) => ({ seq: row.seq, time: row.time, line: row.line }));
  }

  /** Upgrade rollouts on the same database (closed with this store). */
  rollouts(): PgRolloutStore {
    return new PgRolloutStore(this.#client);
  }

  /** The local executor's queue on the same database (closed with this store); waiting runs' secrets are sealed under `queueKey`. */
  localRunQueue(queueKey: string): PgRunQueue {
    return new PgRunQueue(this.#client, queueKey);
  }

  async ping(): Promise<void> {
    try {
      await this.#client.query('SELECT 1');
    } catch (error) {
      throw new UnavailableError(`database unavailable${describeCode(error)}`, { cause: error });
    }
  }

  async close(): Promise<void> {
    await this.#client.close();
  }

  async #activeRunOf(run: NewRun): Promise<string | undefined> {
    try {
      const { rows } = await this.#client.query<{ id: string }>(
        `SELECT id FROM scaffold_runs WHERE repository_url = $1 AND branch = $2 AND cluster_name = $3 AND ${ACTIVE_SQL}`,
        [run.repositoryUrl, run.branch, run.cluster.name],
      );
      return rows[0]?.id;
    } catch (error) {
      // The conflict itself is certain; only the detail is missing.
      this.#logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'could not look up the active run');
      return undefined;
    }
  }

  #query<T>(sql: string, params?: readonly unknown[]): Promise<{ rows: T[]; rowCount: number }> {
    return this.#run(() => this.#client.query<T>(sql, params));
  }

  async #run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw translatePgError(error);
    }
  }
}

/** A refusal of a row's data (SQLSTATE classes 22 and 23), which the same row alone meets again. */
function isRowError(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}

async function outcomeOf<T>(promise: Promise<T>): Promise<ItemOutcome<T>> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}

function firstRow<T>(rows: readonly T[]): T {
  const row = rows[0];
  if (row === undefined) throw new Error('statement returned no row');
  return row;
}
