/**
 * The HTTP API under 200 concurrent connections on loopback, 10 s per mix,
 * driven by autocannon: GET /api/v1/scaffolds/{id} of existing runs, POST
 * /api/v1/scaffolds with a unique cluster per request (one active run per
 * cluster, so a repeated name would get 409) and a 90/10 mix of the two.
 *
 * The server is the real app (bench/api-server.ts, its own process, so the load
 * generator does not share its event loop): createHttpApp over PGlite, static
 * token auth, pino request logging into /dev/null, a no-op executor. Baseline:
 * the same load, same requests, against bare Fastify returning a fixed JSON.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { packageRoot } from '../src/package-paths.js';
import type { ServerReport } from './api-server.js';
import { sealingCertificate } from './fixtures.js';
import { type Figure, type Suite, onCleanup, verdict } from './support.js';

const CONNECTIONS = 200;
const DURATION_S = 10;
const WARMUP_S = 2;
const SEEDED_RUNS = 200;
const P99_TARGET_MS = 50;
const API = '/api/v1/scaffolds';

interface ServerProcess {
  readonly url: string;
  /** Stops the server; resolves with what it stored and started. */
  stop(): Promise<ServerReport | undefined>;
}

/** Starts bench/api-server.ts in its own node process and waits for its port. */
async function startServer(mode: 'app' | 'baseline', token: string): Promise<ServerProcess> {
  const script = fileURLToPath(new URL('./api-server.ts', import.meta.url));
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', script, mode], {
    cwd: packageRoot(),
    env: { ...process.env, BENCH_API_TOKEN: token, NODE_ENV: 'production' },
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
  return {
    url: `http://127.0.0.1:${port}`,
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

export const apiSuite: Suite = async ({ log }) => {
  const token = randomBytes(24).toString('base64url');
  const { pem } = sealingCertificate();

  // Baseline first: bare Fastify with the same requests.
  const baselineServer = await startServer('baseline', token);
  await load(baselineServer.url, token, 'GET', ['warm'], pem, WARMUP_S, 50);
  const baseline = new Map<Mix, Load>();
  for (const mix of MIXES) {
    const outcome = await load(baselineServer.url, token, mix, ['baseline'], pem, DURATION_S, CONNECTIONS);
    baseline.set(mix, outcome);
    log(`api: baseline ${mix}: p50 ${fmt(outcome.result.latency.p50)}, p99 ${fmt(outcome.result.latency.p99)}, ${outcome.result.requests.average.toFixed(0)} req/s`);
  }
  await baselineServer.stop();

  const appServer = await startServer('app', token);
  const ids = await seedRuns(appServer.url, token, SEEDED_RUNS, pem);
  log(`api: app up at ${appServer.url}, ${ids.length} runs seeded`);
  await load(appServer.url, token, 'GET', ids, pem, WARMUP_S, 50);
  const measured = new Map<Mix, Load>();
  for (const mix of MIXES) {
    const outcome = await load(appServer.url, token, mix, ids, pem, DURATION_S, CONNECTIONS);
    measured.set(mix, outcome);
    const r = outcome.result;
    log(`api: app ${mix}: p50 ${fmt(r.latency.p50)}, p99 ${fmt(r.latency.p99)}, ${r.requests.average.toFixed(0)} req/s, ${r.errors} errors, ${r.non2xx} non-2xx of ${r.requests.total}`);
  }
  const accepted = [...measured.values()].reduce((sum, l) => sum + l.accepted, 0);
  const report = await appServer.stop();
  log(`api: ${accepted} POSTs answered 202 under load + ${ids.length} seeded; the server stored ${report?.stored ?? '?'} runs and started ${report?.started ?? '?'} (${report?.startCalls ?? '?'} start calls)`);

  const figures: Figure[] = [];
  for (const mix of MIXES) {
    const r = measured.get(mix)!.result;
    const b = baseline.get(mix)!.result;
    const clean = r.errors === 0 && r.timeouts === 0 && r.non2xx === 0;
    figures.push({
      suite: 'api',
      name: `${mix}, ${CONNECTIONS} conns ${DURATION_S} s: p50 / p99 latency`,
      measured: `${fmt(r.latency.p50)} / ${fmt(r.latency.p99)} (${r.requests.average.toFixed(0)} req/s)`,
      baseline: `bare Fastify ${fmt(b.latency.p50)} / ${fmt(b.latency.p99)} (${b.requests.average.toFixed(0)} req/s)`,
      ratio: r.latency.p99 / b.latency.p99,
      target: `p99 < ${P99_TARGET_MS} ms`,
      verdict: verdict(r.latency.p99 < P99_TARGET_MS),
    });
    const codes = Object.entries(r.statusCodeStats ?? {})
      .map(([code, stat]) => `${code}×${stat.count ?? 0}`)
      .join(' ');
    figures.push({
      suite: 'api',
      name: `${mix}: errors / non-2xx`,
      measured: `${r.errors} errors (${r.timeouts} timeouts), ${r.non2xx} non-2xx of ${r.requests.total} [${codes}]`,
      baseline: `bare Fastify ${b.errors} errors, ${b.non2xx} non-2xx`,
      target: '0 errors, 0 non-2xx',
      verdict: verdict(clean),
    });
  }
  // Requests still in flight when a load ends (or that timed out) may be stored
  // without the client seeing the 202, so stored may exceed what was counted, never the reverse.
  const consistent = report !== undefined && report.stored === report.started && report.startCalls === report.started && report.stored >= accepted + ids.length;
  figures.push({
    suite: 'api',
    name: 'every stored run started exactly once; every 202 stored',
    measured: report ? `${report.stored} stored, ${report.started} started (${report.startCalls} calls), ${accepted + ids.length} 202s seen` : 'no report from the server',
    target: 'stored = started = calls ≥ 202s',
    verdict: verdict(consistent),
  });
  return figures;
};
