/**
 * The server side of the API benchmark, run as its own process so the load
 * generator (autocannon, in the bench process) does not share its event loop.
 *
 *   node --import tsx bench/api-server.ts app|baseline
 *
 * `app`: the real HTTP app (createHttpApp) over the run store the service uses
 * in production, wired as src/main.ts wires it: `PgRunStore.open(...)` wrapped in
 * a `CachedRunStore`. The database is embedded PGlite in memory, or the
 * PostgreSQL server at BENCH_DATABASE_URL (a pool of PgRunStore's default size).
 * BENCH_CACHE=0 leaves the cache out, for comparison; BENCH_BEFORE=1 turns off
 * the certificate parse cache and the grouping of creates (the POST path before
 * issue 24). Static bearer-token auth
 * (token from BENCH_API_TOKEN), request logging through pino into /dev/null
 * (the production logger, minus the terminal), and a no-op executor that
 * records each start and reports the run as running.
 * `baseline`: bare Fastify answering every GET and POST with a fixed JSON body.
 *
 * Prints one JSON line `{"port": N, "statsPort": M}` when listening. GET
 * http://127.0.0.1:M/ answers {@link ServerStats} (requests, SQL statements,
 * CPU time so far), so the bench can tell the cost per request of each load.
 * Stops when stdin closes (the bench process ended or asked it to), printing
 * `{"report": ServerReport}` first.
 */
import { createServer, type Server } from 'node:http';
import { devNull } from 'node:os';
import Fastify from 'fastify';
import { pino } from 'pino';
import { migrate } from '../src/db/migrate.js';
import { PgRunStore } from '../src/db/pg-run-store.js';
import { PgSqlClient } from '../src/db/pg-sql-client.js';
import { PgliteSqlClient } from '../src/db/pglite-sql-client.js';
import type { SqlClient, SqlResult } from '../src/db/sql-client.js';
import { UnavailableError } from '../src/errors.js';
import { createHttpApp } from '../src/http/create-http-app.js';
import { createPino, loggerFromPino } from '../src/pino-logger.js';
import { CachedRunStore } from '../src/service/cached-run-store.js';
import type { RunStore } from '../src/service/run-store.js';
import type { ExecutionState, RunExecutor } from '../src/service/run-executor.js';
import type { ScaffoldPreviewer } from '../src/run/scaffold-previewer.js';
import { jobNameOf, type RunRecord } from '../src/run/run-record.js';
import { RunService } from '../src/service/run-service.js';
import { StaticTokenAuthenticator } from '../src/service/static-token-authenticator.js';
import { parsedCertificates } from '../src/sealing/sealing-certificate.js';

/** Starts nothing: records the run and says it is running. */
class NoopExecutor implements RunExecutor {
  readonly started = new Set<string>();
  startCalls = 0;

  async start(run: RunRecord): Promise<{ readonly job: string }> {
    this.startCalls++;
    this.started.add(run.id);
    return { job: jobNameOf(run.id) };
  }

  async inspect(run: RunRecord): Promise<ExecutionState> {
    return this.started.has(run.id) ? { state: 'running' } : { state: 'missing' };
  }

  async *logs(): AsyncIterable<string> {}

  async cancel(run: RunRecord): Promise<void> {
    this.started.delete(run.id);
  }
}

/**
 * Counts the SQL statements that reach the database: the round trips a request
 * costs. Concurrent creates share one INSERT (PgRunStore groups them), so this
 * is what the database sees, not how often the store was called.
 */
class CountingSqlClient implements SqlClient {
  readonly #inner: SqlClient;
  readonly #counter: { statements: number };

  /** `counter`: a transaction's statements count in its client's. */
  constructor(inner: SqlClient, counter: { statements: number } = { statements: 0 }) {
    this.#inner = inner;
    this.#counter = counter;
  }

  get statements(): number {
    return this.#counter.statements;
  }

  query<T>(sql: string, params?: readonly unknown[]): Promise<SqlResult<T>> {
    this.#counter.statements++;
    return this.#inner.query<T>(sql, params);
  }
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    // BEGIN and COMMIT are round trips too.
    this.#counter.statements += 2;
    return this.#inner.transaction((tx) => fn(new CountingSqlClient(tx, this.#counter)));
  }
  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** Knows how many creates are under way: a client that gave up does not stop one. */
class CountingService extends RunService {
  creating = 0;

  override async create(...args: Parameters<RunService['create']>): Promise<RunRecord> {
    this.creating++;
    try {
      return await super.create(...args);
    } finally {
      this.creating--;
    }
  }
}

const noPreviews: ScaffoldPreviewer = {
  async preview() {
    throw new UnavailableError('dry runs are not part of the benchmark');
  },
};

/** What the server tells the bench when it stops. */
export interface ServerReport {
  /** Runs in the store. */
  readonly stored: number;
  /** Distinct runs the executor was asked to start, and how many times start was called. */
  readonly started: number;
  readonly startCalls: number;
}

/** Counters since the server started; the bench takes differences around a load. */
export interface ServerStats {
  /** HTTP requests answered by the app. */
  readonly requests: number;
  /** SQL statements sent to the database. */
  readonly statements: number;
  /** User + system CPU time of the server process, µs. */
  readonly cpuMicros: number;
  /** Sealing certificates parsed, and parses the content-hash cache answered (app only). */
  readonly certificateParses?: number;
  readonly certificateHits?: number;
}

interface Running {
  readonly port: number;
  readonly stats: () => ServerStats;
  readonly report: () => Promise<ServerReport>;
  readonly close: () => Promise<void>;
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function startApp(): Promise<Running> {
  const token = process.env['BENCH_API_TOKEN'];
  if (!token) throw new Error('BENCH_API_TOKEN is not set');
  const databaseUrl = process.env['BENCH_DATABASE_URL'] || undefined;
  const cached = process.env['BENCH_CACHE'] !== '0';
  // BENCH_BEFORE=1: the POST path as it was before issue 24: every request parses
  // its certificate again, and every create is an INSERT of its own.
  const before = process.env['BENCH_BEFORE'] === '1';
  if (before) parsedCertificates.limit = 0;
  const log = createPino({ destination: pino.destination({ dest: devNull, sync: true }), base: { service: 'gitops-scaffolder' } });
  const logger = loggerFromPino(log);
  // As PgRunStore.open, with a counter between the store and the database.
  const sql = new CountingSqlClient(databaseUrl === undefined ? await PgliteSqlClient.open() : new PgSqlClient({ databaseUrl, logger }));
  await migrate(sql);
  const database = new PgRunStore({ client: sql, logger: logger.child({ component: 'store' }), groupCreates: !before });
  // As src/main.ts: one cache in front of the store, and everything (service,
  // HTTP app, run monitor) uses it, so every write of the process goes through it.
  const store: RunStore = cached ? new CachedRunStore({ store: database }) : database;
  const executor = new NoopExecutor();
  const service = new CountingService({ store, executor, previewer: noPreviews, reference: 'development', logger: logger.child({ component: 'service' }) });
  const app = await createHttpApp({ service, authenticator: new StaticTokenAuthenticator([token]), store, logger: log });
  let requests = 0;
  app.server.on('request', () => requests++);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    stats: () => ({
      requests,
      statements: sql.statements,
      cpuMicros: cpuMicros(),
      certificateParses: parsedCertificates.stats.misses,
      certificateHits: parsedCertificates.stats.hits,
    }),
    report: async () => {
      // Requests the load generator gave up on (or left when it stopped) may
      // still be storing and starting runs: count once they are all done.
      for (const deadline = Date.now() + 10_000; service.creating > 0 && Date.now() < deadline;) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      let stored = 0;
      let cursor: string | undefined;
      do {
        const page = await store.list({ limit: 1000, ...(cursor ? { cursor } : {}) });
        stored += page.runs.length;
        cursor = page.nextCursor;
      } while (cursor);
      return { stored, started: executor.started.size, startCalls: executor.startCalls };
    },
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}

async function startBaseline(): Promise<Running> {
  const app = Fastify();
  const fixed = { id: 'baseline', status: 'running', step: 1 };
  let requests = 0;
  app.route({ method: ['GET', 'POST'], url: '/*', handler: async () => fixed });
  app.server.on('request', () => requests++);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    stats: () => ({ requests, statements: 0, cpuMicros: cpuMicros() }),
    report: async () => ({ stored: 0, started: 0, startCalls: 0 }),
    close: () => app.close(),
  };
}

/** The stats endpoint, on its own loopback port so it never counts as app traffic. */
async function startStats(running: Running): Promise<Server> {
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(running.stats()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  const running = mode === 'app' ? await startApp() : mode === 'baseline' ? await startBaseline() : undefined;
  if (!running) throw new Error(`usage: api-server.ts app|baseline (got ${String(mode)})`);
  const stats = await startStats(running);
  const statsAddress = stats.address();
  if (statsAddress === null || typeof statsAddress === 'string') throw new Error('no stats port');
  process.stdout.write(`${JSON.stringify({ port: running.port, statsPort: statsAddress.port })}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${JSON.stringify({ report: await running.report() })}\n`);
    stats.close();
    await running.close();
    process.exit(0);
  };
  process.stdin.on('end', () => void stop());
  process.stdin.on('close', () => void stop());
  process.stdin.resume();
}

main().catch((error: unknown) => {
  process.stderr.write(`api-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
