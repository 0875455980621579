/**
 * Versioned schema migrations, applied in order and recorded in
 * `schema_migrations`.
 *
 * Several service replicas may start at once against one database. Each
 * migration runs in its own transaction holding a transaction-scoped advisory
 * lock, and re-checks under that lock whether another replica applied it
 * first, so every migration runs exactly once and a failed one leaves nothing
 * behind (PostgreSQL DDL is transactional).
 */
import { createHash } from 'node:crypto';
import { silentLogger, type Logger } from '../logger.js';
import { initMigration } from './migrations/0001-init.js';
import { clusterAttributesMigration } from './migrations/0002-cluster-attributes.js';
import { deliveryMigration } from './migrations/0003-delivery.js';
import { rolloutsMigration } from './migrations/0004-rollouts.js';
import { reviewRequestsMigration } from './migrations/0005-review-requests.js';
import { rolloutDeliveryMigration } from './migrations/0006-rollout-delivery.js';
import { runActionMigration } from './migrations/0007-run-action.js';
import { clusterKeyMigration } from './migrations/0008-cluster-key.js';
import { localRunQueueMigration } from './migrations/0009-local-run-queue.js';
import { runFailureMigration } from './migrations/0010-run-failure.js';
import { runActionByRegistryMigration } from './migrations/0011-run-action-by-registry.js';
import { runRotationMigration } from './migrations/0012-run-rotation.js';
import { runBatchMigration } from './migrations/0013-run-batch.js';
import type { SqlClient } from './sql-client.js';

/** One numbered schema change. */
export interface Migration {
  /** Position in the sequence, from 1, strictly increasing; never reused. */
  readonly version: number;
  /** Short kebab-case description, recorded next to the version. */
  readonly name: string;
  /** SQL statements, one per entry, run in order in one transaction. */
  readonly statements: readonly string[];
}

/**
 * The migrations this build ships, in order. Migrations are TypeScript modules
 * (see `migrations/0001-init.ts`) so they are part of the compiled output
 * wherever it runs from.
 */
export const MIGRATIONS: readonly Migration[] = [
  initMigration,
  clusterAttributesMigration,
  deliveryMigration,
  rolloutsMigration,
  reviewRequestsMigration,
  rolloutDeliveryMigration,
  runActionMigration,
  clusterKeyMigration,
  localRunQueueMigration,
  runFailureMigration,
  runActionByRegistryMigration,
  runRotationMigration,
  runBatchMigration,
];

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /** @default silentLogger */
  readonly logger?: Logger;
  /** The migrations to apply. @default MIGRATIONS */
  readonly migrations?: readonly Migration[];
}

// Key of the advisory lock every replica takes while migrating: an arbitrary
// constant, unique to this application within the database.
const MIGRATION_LOCK_KEY = 7_316_058_421_913;

const CREATE_SCHEMA_MIGRATIONS = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    integer     PRIMARY KEY,
  name       text        NOT NULL,
  checksum   text        NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

/**
 * Brings the schema up to date.
 *
 * @returns the versions this call applied (empty when the schema was current)
 * @throws the database error of the failing statement; that migration is rolled back
 */
export async function migrate(client: SqlClient, options: MigrateOptions = {}): Promise<number[]> {
  const logger = options.logger ?? silentLogger;
  const migrations = options.migrations ?? MIGRATIONS;
  assertOrdered(migrations);

  const recorded = await client.transaction(async (tx) => {
    await lock(tx);
    // Created under the lock: concurrent CREATE TABLE IF NOT EXISTS can still
    // fail on the catalog's unique index.
    await tx.query(CREATE_SCHEMA_MIGRATIONS);
    const { rows } = await tx.query<{ version: number; checksum: string }>('SELECT version, checksum FROM schema_migrations');
    return new Map(rows.map((row) => [row.version, row.checksum]));
  });

  for (const migration of migrations) {
    const checksum = checksumOf(migration);
    const seen = recorded.get(migration.version);
    // An edited migration is not re-run: the schema it produced is already there.
    if (seen !== undefined && seen !== checksum) {
      logger.warn({ version: migration.version, name: migration.name }, 'applied migration differs from the shipped one');
    }
  }

  const applied: number[] = [];
  for (const migration of migrations.filter((m) => !recorded.has(m.version))) {
    const ran = await client.transaction(async (tx) => {
      await lock(tx);
      const { rowCount } = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (rowCount > 0) return false; // another replica got here first
      for (const statement of migration.statements) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [migration.version, migration.name, checksumOf(migration)]);
      return true;
    });
    if (ran) {
      applied.push(migration.version);
      logger.info({ version: migration.version, name: migration.name }, 'applied migration');
    }
  }
  const known = new Set(migrations.map((m) => m.version));
  const newer = [...recorded.keys()].filter((v) => !known.has(v));
  if (newer.length > 0) {
    // A newer build migrated this database (rolling update in progress). Its
    // migrations are meant to be compatible with the previous build.
    logger.info({ versions: newer }, 'database has migrations newer than this build');
  }
  return applied;
}

async function lock(tx: SqlClient): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
}

function checksumOf(migration: Migration): string {
  return createHash('sha256').update(migration.statements.join('\n;\n')).digest('hex');
}

function assertOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    const previous = migrations[index - 1];
    if (!Number.isInteger(migration.version) || migration.version < 1 || (previous && migration.version <= previous.version)) {
      throw new Error(`migration ${migration.version} (${migration.name}) is out of order`);
    }
  });
}
