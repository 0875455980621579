/**
 * A PostgreSQL outage loses no run progress. The real service (local
 * executor, a real scaffold-runner) runs on a PostgreSQL server this test
 * owns (scripts/ci/start-postgres.sh); the server is stopped while the
 * runner works, the runner finishes during the outage, and the server is
 * started again. Afterwards the run is succeeded with its whole step timeline,
 * its commit, and every line the runner printed, each once and in order; and
 * during the outage the pending-writes gauge showed what was waiting.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunEvent } from '../../src/run-contract/run-events.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { heldPushRemote } from '../support/held-push-remote.js';
import { startOwnPostgres, type OwnPostgres } from '../support/own-postgres.js';
import { commitsOf, eventually } from '../support/runner.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const API_TOKEN = 'db-outage-token-0123456789';
const CLUSTER = { name: 'eu-outage-1', domain: 'eu-outage-1.example.net', region: 'eu-west-1' };
const certificate = createTestCertificate();

let server: OwnPostgres;
let scratch: string;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-db-outage-'));
  server = await startOwnPostgres();
});
after(async () => {
  await server?.destroy().catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
});

const stopDatabase = (): Promise<void> => server.stopServer();
// The same address as start-postgres.sh gave it: the service keeps its DATABASE_URL.
const startDatabase = (): Promise<void> => server.startServer();

async function api<T>(service: ServiceProcess, path: string): Promise<T> {
  const response = await fetch(`${service.address}${path}`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
  assert.equal(response.status, 200, await response.clone().text());
  return (
    path.includes('format=json')
      ? (await response.text())
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as unknown)
      : await response.json()
  ) as T;
}

async function pendingWrites(service: ServiceProcess): Promise<number> {
  const response = await fetch(`${service.address}/metrics`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
  assert.equal(response.status, 200);
  const value = /^gitops_scaffolder_run_progress_pending (\S+)$/m.exec(await response.text())?.[1];
  assert.ok(value !== undefined, 'the pending-writes gauge is exported');
  return Number(value);
}

interface RunView {
  status: string;
  message: string;
  commits: { pass: string; sha: string }[];
  started_at?: string;
  finished_at?: string;
  steps: { step: number; name: string; status: string }[];
}

describe('a PostgreSQL outage during a run', { timeout: 240_000 }, () => {
  it('loses no line and no step of the run: all are stored once the database is back', async () => {
    const remote = await heldPushRemote(scratch);
    const dataDir = join(scratch, 'service-data');
    const service = await startServiceProcess({
      API_TOKENS: API_TOKEN,
      AUTH_MODE: 'static',
      EXECUTOR: 'local',
      DATA_DIR: dataDir,
      DATABASE_URL: server.url,
      DEFAULT_GITOPS_REPO_URL: `file://${remote.path}`,
    });
    try {
      const created = await fetch(`${service.address}/api/v1/scaffolds`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cluster: CLUSTER, sealing: { certificate: certificate.certificatePem } }),
      });
      assert.equal(created.status, 202, await created.clone().text());
      const id = ((await created.json()) as { id: string }).id;
      await remote.pushed();

      await stopDatabase();
      await remote.release();
      // The runner finishes with the database away: its result is written, its lease removed once it has exited.
      const runDir = join(dataDir, 'runs', id);
      await eventually(
        'the runner to exit',
        () => (existsSync(join(runDir, 'result.json')) && !existsSync(join(runDir, 'lease.json')) ? true : undefined),
        60_000,
      );
      await eventually('the gauge to show the writes waiting for the database', async () => ((await pendingWrites(service)) > 0 ? true : undefined), 20_000);
      await startDatabase();

      const done = await eventually(
        'the run to be recorded',
        async () => {
          const view = await api<RunView>(service, `/api/v1/scaffolds/${id}`);
          return view.status === 'running' || view.status === 'pending' ? undefined : view;
        },
        60_000,
      );
      assert.equal(done.status, 'succeeded', done.message);
      assert.ok(done.started_at !== undefined && done.finished_at !== undefined);
      // The whole timeline: no step left pending or running for want of its events.
      assert.deepEqual(
        done.steps.filter((s) => s.status !== 'succeeded' && s.status !== 'skipped'),
        [],
        `every step is done: ${JSON.stringify(done.steps)}`,
      );
      const [head] = await commitsOf(remote.path, 'main');
      assert.ok(head !== undefined && done.commits.some((c) => c.sha === head.sha), `the pushed commit is recorded: ${JSON.stringify(done.commits)}`);

      // Every line, each once, numbered without a gap, ending with the runner's last event.
      const lines = await api<{ seq: number; line: string }[]>(service, `/api/v1/scaffolds/${id}/logs?format=json`);
      assert.deepEqual(
        lines.map((l) => l.seq),
        lines.map((_, i) => i + 1),
      );
      const events = lines.map((l) => parseRunEvent(l.line)).filter((e) => e !== undefined);
      const started = events.filter((e) => e.event === 'step_started').map((e) => (e as { step?: number }).step);
      assert.deepEqual(started, [...new Set(started)], 'no step started twice in the stored log');
      assert.equal(events.at(-1)?.event, 'run_finished');
      assert.equal(events.filter((e) => e.event === 'run_finished').length, 1);
      assert.ok(
        events.some((e) => e.event === 'commit' && (e as { sha?: string }).sha === head.sha),
        'the commit event printed during the outage is stored',
      );
      assert.equal(await pendingWrites(service), 0, 'nothing waits once stored');
    } finally {
      await service.kill();
    }
  });
});
