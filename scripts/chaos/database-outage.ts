/**
 * Trial 2, a PostgreSQL outage: the service (as `serve` runs it, local
 * executor, real scaffold-runners) on a PostgreSQL server of the trial's own;
 * six runs are started, and once the first push reaches the remote the server
 * is stopped for `outageSeconds` while the runners go on (their pushes are let
 * through at once). Afterwards every succeeded run has its whole step timeline
 * and every line its runner wrote to its output file, stored once, in order;
 * and the generated passwords are nowhere in plaintext: not in any git object
 * (unreachable ones included), not in a runner's output or the service's log,
 * not in a dump of the database.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { heldPushRemote } from '../../test/support/held-push-remote.js';
import { postgresBinOf, startOwnPostgres } from '../../test/support/own-postgres.js';
import { eventually, sealedSecretsIn, secretNeedles, treeAt, unsealAll } from '../../test/support/runner.js';
import { startServiceProcess, type ServiceProcess } from '../../test/support/service-process.js';
import { allGitObjects, doubledRuns, lostPushes, misreportedRuns, needlesIn, nonLinearHistory, stuckRuns, type RecordedRun } from './invariants.js';
import { invariant, type Trial } from './report.js';

const exec = promisify(execFile);
const API_TOKEN = 'chaos-outage-token-0123456789';

interface RunView {
  id: string;
  status: string;
  message: string;
  attempt?: number;
  cluster: { name: string };
  commits: { pass: string; sha: string }[];
  steps: { step: number; name: string; status: string }[];
}

async function api<T>(service: ServiceProcess, path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`${service.address}${path}`, { ...init, headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${text}`);
  return (path.includes('format=json') ? text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown) : JSON.parse(text)) as T;
}

export function databaseOutageTrial(runCount = 6, outageSeconds = 30): Trial {
  return {
    name: 'PostgreSQL outage',
    async run() {
      const scratch = await mkdtemp(join(tmpdir(), 'gs-chaos-outage-'));
      const server = await startOwnPostgres();
      const certificate = createTestCertificate();
      let service: ServiceProcess | undefined;
      try {
        const remote = await heldPushRemote(scratch);
        const dataDir = join(scratch, 'service-data');
        service = await startServiceProcess({ API_TOKENS: API_TOKEN, AUTH_MODE: 'static', EXECUTOR: 'local', DATA_DIR: dataDir, DATABASE_URL: server.url, DEFAULT_GITOPS_REPO_URL: `file://${remote.path}` }, 120_000);
        const ids: string[] = [];
        for (let i = 0; i < runCount; i++) {
          const cluster = { name: `outage-${i}`, domain: `outage-${i}.example.net`, region: 'eu-west-1' };
          ids.push((await api<{ id: string }>(service, '/api/v1/scaffolds', { method: 'POST', body: JSON.stringify({ cluster, sealing: { certificate: certificate.certificatePem } }) })).id);
        }
        await remote.pushed(300_000);
        await server.stopServer();
        const down = performance.now();
        await remote.release();
        // The outage's length is the fault itself, not a wait for an event.
        await sleep(Math.max(0, outageSeconds * 1000 - (performance.now() - down)));
        await server.startServer();
        const outage = (performance.now() - down) / 1000;

        const live = service;
        const views = await eventually('every run to end', async () => {
          const all = await Promise.all(ids.map((id) => api<RunView>(live, `/api/v1/scaffolds/${id}`).catch(() => undefined)));
          return all.every((v) => v !== undefined && v.status !== 'pending' && v.status !== 'running') ? (all as RunView[]) : undefined;
        }, 900_000, 1_000).catch(async () => Promise.all(ids.map((id) => api<RunView>(live, `/api/v1/scaffolds/${id}`))));
        const runs: RecordedRun[] = views.map((v) => ({ id: v.id, cluster: v.cluster.name, attempt: v.attempt ?? 1, status: v.status, commits: v.commits }));

        const timelines: string[] = [];
        const logs: string[] = [];
        let lines = 0;
        const outputs: string[] = [];
        for (const view of views) {
          const output = await readFile(join(dataDir, 'runs', view.id, 'output.log'), 'utf8').catch(() => '');
          outputs.push(output);
          if (view.status !== 'succeeded') continue;
          const open = view.steps.filter((s) => s.status !== 'succeeded' && s.status !== 'skipped');
          if (open.length > 0 || view.steps.length === 0) timelines.push(`${view.id}: steps ${open.map((s) => `${s.step} ${s.name} ${s.status}`).join(', ') || 'none recorded'}`);
          const stored = await api<{ seq: number; line: string }[]>(live, `/api/v1/scaffolds/${view.id}/logs?format=json`);
          const written = output.split('\n').filter((line) => line !== '');
          lines += written.length;
          const seqGap = stored.findIndex((l, i) => l.seq !== i + 1);
          const differs = written.findIndex((line, i) => stored[i]?.line !== line);
          if (seqGap !== -1) logs.push(`${view.id}: seq ${stored[seqGap]?.seq} at position ${seqGap + 1}`);
          else if (differs !== -1 || stored.length !== written.length) logs.push(`${view.id}: ${stored.length} lines stored, ${written.length} written; first difference at line ${differs === -1 ? Math.min(stored.length, written.length) + 1 : differs + 1}`);
        }
        const succeeded = views.filter((v) => v.status === 'succeeded').length;

        // The generated values, read back from what the runs pushed (their clusters' directories) with the sealing key's private half.
        const values = new Map<string, string>();
        for (const view of views) {
          for (const [key, value] of unsealAll(sealedSecretsIn(await treeAt(remote.path, 'main', `clusters/${view.cluster.name}`)), certificate.privateKey)) values.set(`${view.cluster.name}/${key}`, value);
        }
        const needles = secretNeedles(values);
        const { stdout: dump } = await exec(join(await postgresBinOf(server), 'pg_dump'), ['--data-only', server.url], { maxBuffer: 512 * 1024 * 1024 });
        const plaintext = [
          ...(needles.length === 0 ? ['no SealedSecret value found on main to look for'] : []),
          ...needlesIn(await allGitObjects(remote.path), needles, 'a git object'),
          ...outputs.flatMap((output, i) => needlesIn(output, needles, `runner output of ${ids[i]}`)),
          ...needlesIn(service.output(), needles, 'the service log'),
          ...needlesIn(dump, needles, 'the database dump'),
        ];
        return {
          trial: this.name,
          faults: `PostgreSQL stopped ${outage.toFixed(0)} s while ${runCount} runs work (service on PostgreSQL, local executor)`,
          runs: ids.length,
          invariants: [
            invariant('no stuck run', stuckRuns(runs), `${runs.length} runs ended, ${succeeded} succeeded`),
            invariant('full step timeline', timelines, `${succeeded} succeeded runs: every step succeeded or skipped`),
            invariant('every log line stored', logs, `${lines} lines written by the runners = stored, in order, seq without a gap`),
            invariant('no doubled run', await doubledRuns(remote.path, 'main', runs), 'no pass landed twice'),
            invariant('nothing pushed lost', await lostPushes(remote.path, 'main', runs), `${succeeded} succeeded runs' commits on main`),
            invariant('linear history', await nonLinearHistory(remote.path, 'main'), 'no merge commit'),
            invariant('reports = branch', await misreportedRuns(remote.path, 'main', runs), 'each run reports exactly its commits on main'),
            invariant('no plaintext', plaintext, `${values.size} generated values (${needles.length} needles) absent from all git objects, runner output, service log, database dump`),
          ],
        };
      } finally {
        await service?.kill();
        await server.destroy().catch(() => undefined);
        await rm(scratch, { recursive: true, force: true });
      }
    },
  };
}
