/**
 * The HTTP API under 200 concurrent connections on loopback, 10 s per mix,
 * driven by autocannon: GET /api/v1/scaffolds/{id} of existing runs, POST
 * /api/v1/scaffolds with a unique cluster per request (one active run per
 * cluster, so a repeated name would get 409) and a 90/10 mix of the two.
 *
 * The server is the real app (bench/api-server.ts, its own process, so the load
 * generator does not share its event loop): createHttpApp over the run store as
 * src/main.ts wires it (PgRunStore in a CachedRunStore), static token auth, pino
 * request logging into /dev/null, a no-op executor. It runs once per backend:
 * embedded PGlite (in memory) and a real PostgreSQL server (test/support/postgres.ts,
 * loopback, the production configuration). Baseline: the same load, same
 * requests, against bare Fastify returning a fixed JSON.
 *
 * BENCH_API_BACKENDS picks backends (comma-separated): `pglite`, `postgres`
 * (default both and `postgres-before`), and `pglite-nocache`, `postgres-nocache` (the run
 * cache off), `pglite-before`, `postgres-before` (the POST path before issue 24: no
 * certificate parse cache, one INSERT per create) for comparison.
 *
 * Besides latency and errors, each load reports its cost on the server: SQL
 * statements and CPU time per request. Note that autocannon
 * opens its 200 connections at once when a load starts, and libuv (Node 20)
 * accepts one connection per event-loop turn: a server whose loop turns are
 * long accepts slowly, and those requests wait in the kernel's accept queue,
 * inside the latency measured here.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { packageRoot } from '../src/package-paths.js';
import { startPostgres } from '../test/support/postgres.js';
import type { ServerReport, ServerStats } from './api-server.js';
import { sealingCertificate } from './fixtures.js';
import { type Figure, type Suite, onCleanup, runCleanups, verdict } from './support.js';

const CONNECTIONS = 200;
const DURATION_S = 10;
const WARMUP_S = 2;
const SEEDED_RUNS = 200;
const P99_TARGET_MS = 50;
const API = '/api/v1/scaffolds';

interface ServerProcess {
  readonly url: string;
  /** The server's counters so far. */
  stats(): Promise<ServerStats>;
  /** Stops the server; resolves with what it stored and started. */
  stop(): Promise<ServerReport | undefined>;
}

/** Starts bench/api-server.ts in its own node process and waits for its port. */
async function startServer(mode: 'app' | 'baseline', token: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const script = fileURLToPath(new URL('./api-server.ts', import.meta.url));
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', script, mode], {
    cwd: packageRoot(),
    env: { ...process.env, ...env, BENCH_API_TOKEN: token, NODE_ENV: 'production' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const unregister = onCleanup(kill);
  const lines = createInterface({ input: child.stdout });
  const messages: Record<string, unknown>[] = [];
  let notify: (() => void) | undefined;
  lines.on('line', (line) => {
    try {
      messages.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      return; // not ours
    }
    notify?.();
  });
  const waitFor = async (key: string, ms: number): Promise<unknown> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = messages.find((m) => key in m);
      if (found) return found[key];
      if (child.exitCode !== null) throw new Error(`api-server ${mode} exited ${child.exitCode}: ${stderr.trim().slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`api-server ${mode} did not report ${key} within ${ms} ms: ${stderr.trim().slice(-2000)}`);
      await new Promise<void>((resolve) => {
        notify = resolve;
        setTimeout(resolve, 100);
      });
    }
  };
  const port = Number(await waitFor('port', 60_000));
  const statsPort = Number(await waitFor('statsPort', 1_000));
  return {
    url: `http://127.0.0.1:${port}`,
    async stats() {
      const response = await fetch(`http://127.0.0.1:${statsPort}/`);
      return (await response.json()) as ServerStats;
    },
    async stop() {
      child.stdin.end();
      const report = (await waitFor('report', 30_000).catch(() => undefined)) as ServerReport | undefined;
      const timer = setTimeout(kill, 15_000);
      await exited;
      clearTimeout(timer);
      unregister();
      return report;
    },
  };
}

/** One load's outcome. */
interface Load {
  readonly label: string;
  readonly result: autocannon.Result;
  /** POSTs answered 202. */
  readonly accepted: number;
}

let clusterCounter = 0;
const runTag = randomBytes(3).toString('hex');

function createBody(name: string, certificatePem: string): string {
  return JSON.stringify({
    cluster: { name, domain: `${name}.bench.example.net`, region: 'eu-west-1' },
    repository: { url: 'git://127.0.0.1:9/bench.git', branch: 'main' },
    sealing: { certificate: certificatePem },
  });
}

/** POSTs `count` runs one by one and returns their ids. */
async function seedRuns(url: string, token: string, count: number, certificatePem: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${url}${API}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: createBody(`seed-${runTag}-${i}`, certificatePem),
    });
    const body = (await response.json()) as { id?: string };
    if (response.status !== 202 || !body.id) throw new Error(`seeding run ${i}: HTTP ${response.status} ${JSON.stringify(body)}`);
    ids.push(body.id);
  }
  return ids;
}

type Mix = 'GET' | 'POST' | 'GET 90% / POST 10%';
const MIXES: readonly Mix[] = ['GET', 'POST', 'GET 90% / POST 10%'];

async function load(url: string, token: string, mix: Mix, ids: readonly string[], certificatePem: string, seconds: number, connections: number): Promise<Load> {
  let accepted = 0;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const get: autocannon.Request = {
    method: 'GET',
    path: `${API}/${ids[0] ?? 'none'}`,
    headers: { authorization: headers.authorization },
    setupRequest: (request) => ({ ...request, path: `${API}/${ids[Math.floor(Math.random() * ids.length)] ?? 'none'}` }),
  };
  const post: autocannon.Request = {
    method: 'POST',
    path: API,
    headers,
    // Every POST a new cluster: one active run per cluster, a repeat would be a 409.
    setupRequest: (request) => ({ ...request, body: createBody(`load-${runTag}-${(clusterCounter++).toString(36)}`, certificatePem) }),
    onResponse: (status) => {
      if (status === 202) accepted++;
    },
  };
  const requests = mix === 'GET' ? [get] : mix === 'POST' ? [post] : [...Array.from({ length: 9 }, () => get), post];
  const result = await autocannon({ url, connections, duration: seconds, requests });
  return { label: mix, result, accepted };
}

const fmt = (value: number) => `${value.toFixed(value >= 100 ? 0 : 1)} ms`;

/** A load and what it cost the server. */
interface Measured extends Load {
  /** Store round trips (SQL statements) per request answered. */
  readonly statementsPerRequest: number;
  /** Server CPU time per request answered, µs. */
  readonly cpuMicrosPerRequest: number;
  /** Certificate parses the cache answered, of all certificate reads in this load. */
  readonly certificateHits: number;
  readonly certificateReads: number;
}

async function measure(server: ServerProcess, run: () => Promise<Load>): Promise<Measured> {
  const before = await server.stats();
  const outcome = await run();
  const after = await server.stats();
  const requests = Math.max(1, after.requests - before.requests);
  return {
    ...outcome,
    statementsPerRequest: (after.statements - before.statements) / requests,
    cpuMicrosPerRequest: (after.cpuMicros - before.cpuMicros) / requests,
    certificateHits: (after.certificateHits ?? 0) - (before.certificateHits ?? 0),
    certificateReads: (after.certificateHits ?? 0) + (after.certificateParses ?? 0) - (before.certificateHits ?? 0) - (before.certificateParses ?? 0),
  };
}

interface Backend {
  readonly key: string;
  readonly label: string;
  /** Environment of the server process; may start a database first. */
  readonly prepare: () => Promise<Record<string, string>>;
}

const BACKENDS: readonly Backend[] = [
  { key: 'pglite', label: 'PGlite (embedded, in memory) + cache', prepare: async () => ({}) },
  { key: 'postgres', label: 'PostgreSQL (server on loopback) + cache', prepare: async () => ({ BENCH_DATABASE_URL: await postgresUrl() }) },
  // The POST path before issue 24: no certificate parse cache, one INSERT per create.
  { key: 'pglite-before', label: 'PGlite (embedded), POST path before issue 24', prepare: async () => ({ BENCH_BEFORE: '1' }) },
  {
    key: 'postgres-before',
    label: 'PostgreSQL (server), POST path before issue 24',
    prepare: async () => ({ BENCH_DATABASE_URL: await postgresUrl(), BENCH_BEFORE: '1' }),
  },
  { key: 'pglite-nocache', label: 'PGlite, no cache', prepare: async () => ({ BENCH_CACHE: '0' }) },
  { key: 'postgres-nocache', label: 'PostgreSQL, no cache', prepare: async () => ({ BENCH_DATABASE_URL: await postgresUrl(), BENCH_CACHE: '0' }) },
];

/** A fresh database on a throwaway loopback PostgreSQL (or TEST_DATABASE_URL's server), dropped at the end of the suite. */
async function postgresUrl(): Promise<string> {
  const server = await startPostgres();
  onCleanup(() => server.stop());
  return server.url;
}

function selectedBackends(): Backend[] {
  const wanted = (process.env['BENCH_API_BACKENDS'] ?? 'pglite,postgres,postgres-before')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  const unknown = wanted.filter((key) => !BACKENDS.some((b) => b.key === key));
  if (unknown.length > 0) throw new Error(`BENCH_API_BACKENDS: unknown backend(s) ${unknown.join(', ')}; choose from ${BACKENDS.map((b) => b.key).join(', ')}`);
  return wanted.map((key) => BACKENDS.find((b) => b.key === key)!);
}

const perRequest = (m: Measured) =>
  `${m.statementsPerRequest.toFixed(2)} SQL statements, ${m.cpuMicrosPerRequest.toFixed(0)} µs server CPU per request` +
  (m.certificateReads > 0 ? `; certificate cache ${((100 * m.certificateHits) / m.certificateReads).toFixed(0)}% hits of ${m.certificateReads}` : '');

export const apiSuite: Suite = async ({ log }) => {
  const token = randomBytes(24).toString('base64url');
  const { pem } = sealingCertificate();
  const backends = selectedBackends();

  // Baseline first: bare Fastify with the same requests.
  const baselineServer = await startServer('baseline', token);
  await load(baselineServer.url, token, 'GET', ['warm'], pem, WARMUP_S, 50);
  const baseline = new Map<Mix, Measured>();
  for (const mix of MIXES) {
    const outcome = await measure(baselineServer, () => load(baselineServer.url, token, mix, ['baseline'], pem, DURATION_S, CONNECTIONS));
    baseline.set(mix, outcome);
    const r = outcome.result;
    log(
      `api: baseline ${mix}: p50 ${fmt(r.latency.p50)}, p99 ${fmt(r.latency.p99)}, ${r.requests.average.toFixed(0)} req/s, ${r.errors} errors (${r.timeouts} timeouts); ${outcome.cpuMicrosPerRequest.toFixed(0)} µs CPU per request`,
    );
  }
  await baselineServer.stop();

  const figures: Figure[] = [];
  /** POST req/s and CPU per request by backend key, for issue 24's before/after. */
  const posts = new Map<string, Measured>();
  for (const backend of backends) {
    const env = await backend.prepare();
    const appServer = await startServer('app', token, env);
    const ids = await seedRuns(appServer.url, token, SEEDED_RUNS, pem);
    log(`api: ${backend.label}: app up at ${appServer.url}, ${ids.length} runs seeded`);
    await load(appServer.url, token, 'GET', ids, pem, WARMUP_S, 50);
    const measured = new Map<Mix, Measured>();
    for (const mix of MIXES) {
      const outcome = await measure(appServer, () => load(appServer.url, token, mix, ids, pem, DURATION_S, CONNECTIONS));
      measured.set(mix, outcome);
      const r = outcome.result;
      log(
        `api: ${backend.label} ${mix}: p50 ${fmt(r.latency.p50)}, p99 ${fmt(r.latency.p99)}, max ${fmt(r.latency.max)}, ${r.requests.average.toFixed(0)} req/s, ` +
          `${r.errors} errors (${r.timeouts} timeouts), ${r.non2xx} non-2xx of ${r.requests.total}; ${perRequest(outcome)}`,
      );
    }
    posts.set(backend.key, measured.get('POST')!);
    const accepted = [...measured.values()].reduce((sum, l) => sum + l.accepted, 0);
    const report = await appServer.stop();
    log(
      `api: ${backend.label}: ${accepted} POSTs answered 202 under load + ${ids.length} seeded; the server stored ${report?.stored ?? '?'} runs and started ${report?.started ?? '?'} (${report?.startCalls ?? '?'} start calls)`,
    );

    for (const mix of MIXES) {
      const m = measured.get(mix)!;
      const b = baseline.get(mix)!;
      const r = m.result;
      const br = b.result;
      const clean = r.errors === 0 && r.timeouts === 0 && r.non2xx === 0;
      figures.push({
        suite: 'api',
        name: `${backend.label}: ${mix}, ${CONNECTIONS} conns ${DURATION_S} s: p50 / p99 latency`,
        measured: `${fmt(r.latency.p50)} / ${fmt(r.latency.p99)} (${r.requests.average.toFixed(0)} req/s, ${((100 * r.requests.average) / Math.max(1, br.requests.average)).toFixed(0)}% of baseline)`,
        baseline: `bare Fastify ${fmt(br.latency.p50)} / ${fmt(br.latency.p99)} (${br.requests.average.toFixed(0)} req/s)`,
        ratio: r.latency.p99 / br.latency.p99,
        target: `p99 < ${P99_TARGET_MS} ms`,
        verdict: verdict(r.latency.p99 < P99_TARGET_MS),
      });
      const codes = Object.entries(r.statusCodeStats ?? {})
        .map(([code, stat]) => `${code}×${stat.count ?? 0}`)
        .join(' ');
      figures.push({
        suite: 'api',
        name: `${backend.label}: ${mix}: errors / timeouts / non-2xx`,
        measured: `${r.errors} errors (${r.timeouts} timeouts), ${r.non2xx} non-2xx of ${r.requests.total} [${codes}]`,
        baseline: `bare Fastify ${br.errors} errors, ${br.non2xx} non-2xx`,
        target: '0 errors, 0 non-2xx',
        verdict: verdict(clean),
      });
      figures.push({
        suite: 'api',
        name: `${backend.label}: ${mix}: server cost per request`,
        measured: perRequest(m),
        baseline: `bare Fastify ${b.cpuMicrosPerRequest.toFixed(0)} µs CPU`,
        ratio: m.cpuMicrosPerRequest / Math.max(1, b.cpuMicrosPerRequest),
        target: 'report',
        verdict: 'INFO',
      });
    }
    // Requests still in flight when a load ends (or that timed out) may be stored
    // without the client seeing the 202, so stored may exceed what was counted, never the reverse.
    const consistent =
      report !== undefined && report.stored === report.started && report.startCalls === report.started && report.stored >= accepted + ids.length;
    figures.push({
      suite: 'api',
      name: `${backend.label}: every stored run started exactly once; every 202 stored`,
      measured: report
        ? `${report.stored} stored, ${report.started} started (${report.startCalls} calls), ${accepted + ids.length} 202s seen`
        : 'no report from the server',
      target: 'stored = started = calls ≥ 202s',
      verdict: verdict(consistent),
    });
    // Stop the database of this backend before the next one runs.
    await runCleanups(log);
  }
  // The POST path before/after issue 24 in the same run, where both were measured.
  for (const db of ['postgres', 'pglite'] as const) {
    const on = posts.get(db);
    const off = posts.get(`${db}-before`);
    if (!on || !off) continue;
    const name = db === 'postgres' ? 'PostgreSQL (server)' : 'PGlite (embedded)';
    figures.push({
      suite: 'api',
      name: `${name}: POST req/s and server CPU, now vs the POST path before issue 24`,
      measured: `${on.result.requests.average.toFixed(0)} req/s, ${on.cpuMicrosPerRequest.toFixed(0)} µs CPU, p99 ${fmt(on.result.latency.p99)}`,
      baseline: `before (no certificate cache, one INSERT per create) ${off.result.requests.average.toFixed(0)} req/s, ${off.cpuMicrosPerRequest.toFixed(0)} µs CPU, p99 ${fmt(off.result.latency.p99)}`,
      ratio: on.result.requests.average / Math.max(1, off.result.requests.average),
      target: db === 'postgres' ? '≥ 2× POST req/s (issue 24, against the app before it)' : 'report',
      verdict: db === 'postgres' ? verdict(on.result.requests.average >= 2 * off.result.requests.average) : 'INFO',
    });
  }
  return figures;
};
