/**
 * Upgrade rollouts in PostgreSQL or PGlite (`upgrade_rollouts`, migrations 4 and 6),
 * on the run store's client. The waves and per-cluster outcomes are jsonb,
 * written whole: a rollout has one writer, its driver.
 */
import type { Rollout, RolloutStore } from '../service/rollout-store.js';
import { translatePgError } from './pg-errors.js';
import type { SqlClient } from './sql-client.js';

interface RolloutRow {
  id: string;
  repository_url: string;
  branch: string;
  requested_by: string;
  wave_size: number;
  waves: string[][];
  clusters: Rollout['clusters'];
  state: Rollout['state'];
  failure: Rollout['failure'] | null;
  delivery: Rollout['delivery'] | null;
  created_at: Date | string;
  finished_at: Date | string | null;
}

const dateOf = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));

/** Rollouts on a migrated database. */
export class PgRolloutStore implements RolloutStore {
  readonly #client: SqlClient;

  constructor(client: SqlClient) {
    this.#client = client;
  }

  async createRollout(rollout: Rollout): Promise<void> {
    try {
      await this.#client.query(
        `INSERT INTO upgrade_rollouts (id, repository_url, branch, requested_by, wave_size, waves, clusters, state, failure, created_at, finished_at, delivery)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9::jsonb, $10, $11, $12::jsonb)`,
        [
          rollout.id,
          rollout.repositoryUrl,
          rollout.branch,
          rollout.requestedBy,
          rollout.waveSize,
          JSON.stringify(rollout.waves),
          JSON.stringify(rollout.clusters),
          rollout.state,
          failureOf(rollout),
          rollout.createdAt,
          rollout.finishedAt ?? null,
          jsonOrNull(rollout.delivery),
        ],
      );
    } catch (error) {
      throw translatePgError(error);
    }
  }

  async saveRollout(rollout: Rollout): Promise<void> {
    try {
      await this.#client.query(`UPDATE upgrade_rollouts SET clusters = $2::jsonb, state = $3, failure = $4::jsonb, finished_at = $5 WHERE id = $1`, [
        rollout.id,
        JSON.stringify(rollout.clusters),
        rollout.state,
        failureOf(rollout),
        rollout.finishedAt ?? null,
      ]);
    } catch (error) {
      throw translatePgError(error);
    }
  }

  async getRollout(id: string): Promise<Rollout | undefined> {
    const { rows } = await this.#client.query<RolloutRow>('SELECT * FROM upgrade_rollouts WHERE id = $1', [id]);
    return rows[0] === undefined ? undefined : rolloutOf(rows[0]);
  }

  async runningRollouts(): Promise<Rollout[]> {
    const { rows } = await this.#client.query<RolloutRow>(`SELECT * FROM upgrade_rollouts WHERE state = 'running' ORDER BY created_at`);
    return rows.map(rolloutOf);
  }

  async listRollouts(options: { readonly limit: number; readonly state?: Rollout['state'] }): Promise<Rollout[]> {
    // upgrade_rollouts_created_at serves the order; the state filter is on few rows.
    const { rows } = await this.#client.query<RolloutRow>(
      `SELECT * FROM upgrade_rollouts WHERE $1::text IS NULL OR state = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [options.state ?? null, options.limit],
    );
    return rows.map(rolloutOf);
  }
}

function rolloutOf(row: RolloutRow): Rollout {
  return {
    id: row.id,
    repositoryUrl: row.repository_url,
    branch: row.branch,
    requestedBy: row.requested_by,
    waveSize: row.wave_size,
    waves: row.waves,
    clusters: row.clusters,
    state: row.state,
    ...(row.failure !== null ? { failure: row.failure } : {}),
    ...(row.delivery !== null ? { delivery: row.delivery } : {}),
    createdAt: dateOf(row.created_at),
    ...(row.finished_at !== null ? { finishedAt: dateOf(row.finished_at) } : {}),
  };
}

const jsonOrNull = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));
const failureOf = (rollout: Rollout): string | null => jsonOrNull(rollout.failure);
