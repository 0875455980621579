/**
 * The server side of the API benchmark, run as its own process so the load
 * generator (autocannon, in the bench process) does not share its event loop.
 *
 *   node --import tsx bench/api-server.ts app|baseline
 *
 * `app`: the real HTTP app (createHttpApp) over a real PGlite run store
 * (PgRunStore.open({}), in memory), static bearer-token auth (token from
 * BENCH_API_TOKEN), request logging through pino into /dev/null (the production
 * logger, minus the terminal), and a no-op executor that records each start
 * and reports the run as running.
 * `baseline`: bare Fastify answering every GET and POST with a fixed JSON body.
 *
 * Prints one JSON line `{"port": N}` when listening. Stops when stdin closes
 * (the bench process ended or asked it to), printing `{"report": ServerReport}` first.
 */
import { devNull } from 'node:os';
import Fastify from 'fastify';
import { pino } from 'pino';
import { PgRunStore } from '../src/db/pg-run-store.js';
import { UnavailableError } from '../src/errors.js';
import { createHttpApp } from '../src/http/create-http-app.js';
import { createPino, loggerFromPino } from '../src/pino-logger.js';
import type { ExecutionState, ScaffoldExecutor } from '../src/service/scaffold-executor.js';
import type { ScaffoldPreviewer } from '../src/service/scaffold-previewer.js';
import { jobNameOf, type ScaffoldRun } from '../src/service/scaffold-run.js';
import { ScaffoldService } from '../src/service/scaffold-service.js';
import { StaticTokenAuthenticator } from '../src/service/static-token-authenticator.js';

/** Starts nothing: records the run and says it is running. */
class NoopExecutor implements ScaffoldExecutor {
  readonly started = new Set<string>();
  startCalls = 0;

  async start(run: ScaffoldRun): Promise<{ readonly job: string }> {
    this.startCalls++;
    this.started.add(run.id);
    return { job: jobNameOf(run.id) };
  }

  async inspect(run: ScaffoldRun): Promise<ExecutionState> {
    return this.started.has(run.id) ? { state: 'running' } : { state: 'missing' };
  }

  async *logs(): AsyncIterable<string> {}

  async cancel(run: ScaffoldRun): Promise<void> {
    this.started.delete(run.id);
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

interface Running {
  readonly port: number;
  readonly report: () => Promise<ServerReport>;
  readonly close: () => Promise<void>;
}

async function startApp(): Promise<Running> {
  const token = process.env['BENCH_API_TOKEN'];
  if (!token) throw new Error('BENCH_API_TOKEN is not set');
  const log = createPino({ destination: pino.destination({ dest: devNull, sync: true }), base: { service: 'gitops-scaffolder' } });
  const logger = loggerFromPino(log);
  const store = await PgRunStore.open({ logger: logger.child({ component: 'store' }) });
  const executor = new NoopExecutor();
  const service = new ScaffoldService({ store, executor, previewer: noPreviews, reference: 'development', logger: logger.child({ component: 'service' }) });
  const app = await createHttpApp({ service, authenticator: new StaticTokenAuthenticator([token]), store, logger: log });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    report: async () => {
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
  app.route({ method: ['GET', 'POST'], url: '/*', handler: async () => fixed });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, report: async () => ({ stored: 0, started: 0, startCalls: 0 }), close: () => app.close() };
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  const running = mode === 'app' ? await startApp() : mode === 'baseline' ? await startBaseline() : undefined;
  if (!running) throw new Error(`usage: api-server.ts app|baseline (got ${String(mode)})`);
  process.stdout.write(`${JSON.stringify({ port: running.port })}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${JSON.stringify({ report: await running.report() })}\n`);
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
