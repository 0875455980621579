/**
 * A runner that outlives its service loses no output. The real service
 * (local executor) starts a real scaffold-runner, is killed (SIGKILL) while
 * the runner's push is held, and the runner then finishes alone. The next
 * service process reads the runner's output from its run directory: the run
 * is recorded succeeded with its whole step timeline and the lines printed
 * while no service was up.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunEvent } from '../../src/run-contract/run-events.js';
import { processAlive, readLease } from '../../src/run-contract/run-lease.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { heldPushRemote } from '../support/held-push-remote.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { commitsOf, eventually } from '../support/runner.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const API_TOKEN = 'outlived-token-0123456789';
const CLUSTER = { name: 'eu-outlived-1', domain: 'eu-outlived-1.example.net', region: 'eu-west-1' };
const certificate = createTestCertificate();

let scratch: string;
let postgres: TestPostgres;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-outlived-'));
  postgres = await startPostgres();
});
after(async () => {
  await postgres?.stop();
  await rm(scratch, { recursive: true, force: true });
});

async function get<T>(service: ServiceProcess, path: string): Promise<T> {
  const response = await fetch(`${service.address}${path}`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as T;
}

interface RunView {
  status: string;
  message: string;
  commits: { sha: string }[];
  steps: { step: number; status: string }[];
}

describe('a runner that outlives the service', { timeout: 240_000 }, () => {
  it('has the output it printed while no service was up read from its run directory: the timeline is complete', async () => {
    const remote = await heldPushRemote(scratch);
    const dataDir = join(scratch, 'service-data');
    const env = {
      API_TOKENS: API_TOKEN,
      AUTH_MODE: 'static',
      EXECUTOR: 'local',
      DATA_DIR: dataDir,
      DATABASE_URL: postgres.url,
      DEFAULT_GITOPS_REPO_URL: `file://${remote.path}`,
    };

    let service = await startServiceProcess(env);
    let id: string;
    let pid: number;
    try {
      const created = await fetch(`${service.address}/api/v1/scaffolds`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cluster: CLUSTER, sealing: { certificate: certificate.certificatePem } }),
      });
      assert.equal(created.status, 202, await created.clone().text());
      id = ((await created.json()) as { id: string }).id;
      await remote.pushed();
      pid = (await eventually('the lease', () => readLease(join(dataDir, 'runs', id, 'lease.json'))))!.pid;
    } finally {
      await service.kill();
    }

    // The runner finishes while no service is up.
    await remote.release();
    await eventually('the runner to exit', () => (processAlive(pid) ? undefined : true), 60_000);
    assert.ok(existsSync(join(dataDir, 'runs', id, 'result.json')), 'the runner wrote its result');

    service = await startServiceProcess(env);
    try {
      const done = await eventually(
        'the run to be recorded',
        async () => {
          const view = await get<RunView>(service, `/api/v1/scaffolds/${id}`);
          return view.status === 'running' || view.status === 'pending' ? undefined : view;
        },
        60_000,
      );
      assert.equal(done.status, 'succeeded', done.message);
      assert.deepEqual(
        done.steps.filter((s) => s.status !== 'succeeded' && s.status !== 'skipped'),
        [],
        `every step is done, including those after the restart: ${JSON.stringify(done.steps)}`,
      );
      const [head] = await commitsOf(remote.path, 'main');
      const text = await (await fetch(`${service.address}/api/v1/scaffolds/${id}/logs`, { headers: { authorization: `Bearer ${API_TOKEN}` } })).text();
      const events = text
        .split('\n')
        .map((line) => parseRunEvent(line))
        .filter((e) => e !== undefined);
      const started = events.filter((e) => e.event === 'step_started').map((e) => (e as { step?: number }).step);
      assert.deepEqual(started, [...new Set(started)], 'no line stored twice (the output is read again from its start)');
      assert.ok(
        events.some((e) => e.event === 'commit' && (e as { sha?: string }).sha === head?.sha),
        'the commit event printed while no service was up is stored',
      );
      assert.equal(events.at(-1)?.event, 'run_finished');
    } finally {
      await service.kill();
    }
  });
});
