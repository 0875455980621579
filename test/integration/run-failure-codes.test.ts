/**
 * A caller tells a run worth retrying from one that will fail again by the
 * `error_code` and `transient` of `GET /api/v1/scaffolds/{id}`, not by its
 * message. The real service (local executor, PGlite, real runner child
 * processes, real git): one run's repository links its cluster directory out
 * of the work tree, which the runner refuses (permanent), another names a git
 * server that is down (transient: a retry once it is up may succeed).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { startService, type RunningService } from '../../src/main.js';
import { platformDir } from '../../src/package-paths.js';
import { createPino } from '../../src/pino-logger.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { loadServiceConfig } from '../../src/service/service-config.js';
import { gitSync as git } from '../support/git.js';
import { closedPort } from '../support/net.js';

const TOKEN = 'failure-codes-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };

interface RunView {
  readonly status: string;
  readonly step: number;
  readonly message: string;
  readonly error_code: string | null;
  readonly transient: boolean | null;
}

describe('a failed run says whether retrying it may help', { timeout: 300_000 }, () => {
  let root: string;
  let service: RunningService;
  let linkedClusterUrl: string;
  let downServerUrl: string;
  const certificate = createTestCertificate({}).certificatePem;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'failure-codes-'));
    // A repository whose cluster directory is a symbolic link out of the work tree:
    // the runner refuses it at its clone, and every run against it fails the same way.
    const bare = join(root, 'linked-cluster.git');
    await ensureSeededBareRepository(bare, platformDir('default'));
    const work = join(root, 'linked-cluster-work');
    git(root, 'clone', '--quiet', bare, work);
    await mkdir(join(root, 'elsewhere'));
    await symlink(join(root, 'elsewhere'), join(work, 'clusters', 'eu-prod-7'));
    git(work, 'add', '-A');
    git(work, 'commit', '--quiet', '-m', 'link the cluster out of the tree');
    git(work, 'push', '--quiet', 'origin', 'HEAD:main');
    linkedClusterUrl = pathToFileURL(bare).href;
    // Nothing listens here: the git server is down.
    downServerUrl = `git://127.0.0.1:${await closedPort()}/fleet.git`;

    const config = loadServiceConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      API_TOKENS: TOKEN,
      DATA_DIR: join(root, 'data'),
      EXECUTOR: 'local',
      AUTH_MODE: 'static',
      LOG_LEVEL: 'silent',
      ALLOWED_REPOSITORY_URLS: `${linkedClusterUrl},${downServerUrl}`,
    });
    service = await startService(config, { logger: createPino({ level: 'silent', pretty: false }) });
  });

  after(async () => {
    await service?.close();
    await rm(root, { recursive: true, force: true });
  });

  async function runTo(url: string, name: string): Promise<RunView> {
    const accepted = await service.app.inject({
      method: 'POST',
      url: '/api/v1/scaffolds',
      headers: auth,
      payload: { cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' }, repository: { url }, sealing: { certificate } },
    });
    assert.equal(accepted.statusCode, 202, accepted.body);
    const id = accepted.json().id as string;
    // Polled: the run is a child process the test has no event from; each read is the API a caller would poll.
    for (let i = 0; i < 1200; i++) {
      const run = (await service.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}`, headers: auth })).json() as RunView;
      if (!['pending', 'running'].includes(run.status)) return run;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`run ${id} did not finish`);
  }

  it("a run refused for its repository's content is permanent, with the refusal's code", async () => {
    const run = await runTo(linkedClusterUrl, 'eu-prod-7');
    assert.equal(run.status, 'failed', run.message);
    assert.equal(run.step, 1, run.message);
    assert.deepEqual([run.error_code, run.transient], ['invalid_input', false], run.message);
  });

  it('a run whose git server is down is transient, with code unavailable', async () => {
    const run = await runTo(downServerUrl, 'eu-prod-8');
    assert.equal(run.status, 'failed', run.message);
    assert.equal(run.step, 1, run.message);
    assert.deepEqual([run.error_code, run.transient], ['unavailable', true], run.message);
  });

  it('a run that did not fail has neither', async () => {
    const list = (await service.app.inject({ method: 'GET', url: '/api/v1/scaffolds?limit=100', headers: auth })).json() as { items: RunView[] };
    assert.ok(list.items.length >= 2);
    for (const run of list.items) assert.equal(run.status === 'failed', run.error_code !== null, `${run.status}: ${String(run.error_code)}`);
  });
});
