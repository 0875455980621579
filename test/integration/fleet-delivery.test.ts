/**
 * Upgrades and removals delivered like scaffold runs: the real HTTP app and
 * RolloutService, the real GitFleetSource writing with native git to a real
 * git daemon on loopback whose `main` is protected (GitHub's GH006 through a
 * pre-receive hook), and the forge double in front of the same bare
 * repository, driven through Octokit. Rollouts in PGlite. The service calls
 * the forge with its token, or with its GitHub App (the double checks the
 * App's signed JWT before minting the installation token).
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { forgeChangeDeliveries, serviceForgeAuth } from '../../src/delivery/change-delivery.js';
import type { ForgeAuth } from '../../src/delivery/create-delivery.js';
import { PgRunStore } from '../../src/db/pg-run-store.js';
import { CliGitRemote } from '../../src/git/cli-git-remote.js';
import { renderWorkTree } from '../../src/git/render-work-tree.js';
import { initPlatformRepository } from '../../src/git/seed-repository.js';
import { createHttpApp } from '../../src/http/create-http-app.js';
import { platformDir } from '../../src/package-paths.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { ScaffoldService } from '../../src/service/scaffold-service.js';
import { StaticTokenAuthenticator } from '../../src/service/static-token-authenticator.js';
import { GitFleetSource } from '../../src/sources/git-fleet-source.js';
import { type ForgeDouble, startForgeDouble } from '../support/forge-double.js';
import { type GitDaemon, startGitDaemon } from '../support/git-server.js';
import { git } from '../support/git.js';
import { protectMain } from '../support/protected-branch.js';
import { capturingLogger, eventually } from '../support/runner.js';
import { unusedExecutor, unusedPreviewer } from '../support/unused-executor.js';

const API_TOKEN = 'fleet-delivery-token-0123456789';
const AUTH = { authorization: `Bearer ${API_TOKEN}` };
const FORGE_TOKEN = 'forge-token-0123456789';
/** What the double mints for the service's GitHub App (and then the only token it accepts). */
const INSTALLATION_TOKEN = 'ghs_fleet-installation-token';
const OWNER = 'acme';
const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid'];
const CLUSTERS = ['eu-1', 'eu-2', 'eu-3'];
const PATCH = 'clusters/development/apps/tcr-api-replicas.yaml';

interface RequestBody {
  number: number;
  url: string;
  state: string;
}
interface RolloutBody {
  id: string;
  state: string;
  delivery: { mode: string; auto_merge: boolean; forge?: string };
  requests: (RequestBody & { wave: number })[];
  clusters: { name: string; wave: number; status: string; outcome?: string; commit?: string; message?: string }[];
  failure?: { wave: number; failed: string[]; not_started: string[] };
}

let scratch: string;
let served: string;
/** Three generated clusters, all behind the reference (its API replicas patch was edited after they were rendered). */
let template: string;
let daemon: GitDaemon;
let store: PgRunStore;
let app: FastifyInstance;
let appDeps: Parameters<typeof createHttpApp>[0];
let repoCount = 0;
/** The forge API the service's token belongs to: the current test's double (a service has one). */
let serviceForgeApi = '';
/** The service's forge credentials: its token, or (one test) its GitHub App. */
let serviceAuth: ForgeAuth = { kind: 'token', token: FORGE_TOKEN };
/** Everything the fleet source and its deliveries log. */
const logs = capturingLogger();
const doubles: ForgeDouble[] = [];

interface Remote {
  readonly dir: string;
  readonly url: string;
  readonly seedSha: string;
  readonly forge: ForgeDouble;
}

/** A copy of the template at `acme/<name>.git`, its main protected, with a GitHub double in front (with `githubApp`: the App installed there, minting INSTALLATION_TOKEN). */
async function newRemote(githubApp?: { readonly appId: string; readonly installationId: string; readonly publicKey: KeyObject }): Promise<Remote> {
  const name = `fleet-${++repoCount}`;
  const dir = join(served, OWNER, `${name}.git`);
  await git(scratch, 'clone', '--quiet', '--bare', template, dir);
  for (const [key, value] of [['uploadpack.allowFilter', 'true'], ['uploadpack.allowAnySHA1InWant', 'true']] as const) await git(dir, 'config', key, value);
  await protectMain(dir);
  const forge = await startForgeDouble({ forge: 'github', repoDir: dir, owner: OWNER, repo: name, token: githubApp ? INSTALLATION_TOKEN : FORGE_TOKEN, ...(githubApp ? { githubApp } : {}) });
  doubles.push(forge);
  serviceForgeApi = forge.apiUrl;
  return { dir, url: daemon.url(`${OWNER}/${name}.git`), seedSha: await git(dir, 'rev-parse', 'main'), forge };
}

const pullRequests = (remote: Remote, autoMerge = false) => ({ mode: 'pull_request', forge: 'github', api_url: remote.forge.apiUrl, auto_merge: autoMerge });

const rolloutOf = async (id: string): Promise<RolloutBody> => {
  const response = await app.inject({ method: 'GET', url: `/api/v1/upgrades/${id}`, headers: AUTH });
  assert.equal(response.statusCode, 200, response.body);
  return response.json<RolloutBody>();
};

const startRollout = async (body: object): Promise<RolloutBody> => {
  const response = await app.inject({ method: 'POST', url: '/api/v1/upgrades', headers: AUTH, payload: body });
  assert.equal(response.statusCode, 202, response.body);
  return response.json<RolloutBody>();
};

const finished = (id: string) =>
  eventually(
    `rollout ${id} to finish`,
    async () => {
      const rollout = await rolloutOf(id);
      return rollout.state === 'running' ? undefined : rollout;
    },
    120_000,
    100,
  );

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-fleet-delivery-'));
  served = join(scratch, 'served');
  await mkdir(join(served, OWNER), { recursive: true });
  const work = join(scratch, 'work');
  template = join(scratch, 'template.git');
  await initPlatformRepository(work, platformDir());
  const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
  for (const name of CLUSTERS) {
    await renderWorkTree(work, { cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' }, pass: 'all', certificate, generatorVersion: 'test' });
  }
  await git(work, 'add', '--all');
  await git(work, ...IDENTITY, 'commit', '--quiet', '-m', 'Three clusters');
  const patch = join(work, PATCH);
  await writeFile(patch, (await readFile(patch, 'utf8')).replace('replicas: 3', 'replicas: 4'));
  await git(work, 'add', '--all');
  await git(work, ...IDENTITY, 'commit', '--quiet', '-m', '4 API replicas');
  await git(scratch, 'clone', '--quiet', '--bare', work, template);
  daemon = await startGitDaemon({ baseDir: served });

  store = await PgRunStore.open();
  const service = new ScaffoldService({ store, executor: unusedExecutor, previewer: unusedPreviewer, reference: 'development' });
  // Verification is not what these tests are about (upgrade-routes.test runs the real one): every render passes.
  const fleetSource = new GitFleetSource({
    git: new CliGitRemote({}),
    reference: 'development',
    workRoot: scratch,
    ttlMs: 0,
    logger: logs,
    verify: async () => ({ findings: [], notes: [], kustomizationsChecked: 0, summary: 'verified' }),
    deliveries: (settings, url) => forgeChangeDeliveries({ auth: serviceAuth, apiUrl: serviceForgeApi, pollIntervalMs: 50, logger: logs })(settings, url),
  });
  appDeps = { service, authenticator: new StaticTokenAuthenticator([API_TOKEN]), store, fleetSource, rolloutStore: store.rollouts() };
  app = await createHttpApp(appDeps);
});

after(async () => {
  await app?.close();
  await store?.close();
  await Promise.all(doubles.map((d) => d.stop()));
  await daemon?.stop();
  await rm(scratch, { recursive: true, force: true });
});

describe('upgrades delivered through pull requests', () => {
  it('opens one request per wave and starts the second wave only once the first request is merged', async () => {
    const remote = await newRemote();
    const started = await startRollout({ clusters: 'all', wave_size: 2, repository_url: remote.url, delivery: pullRequests(remote) });
    assert.deepEqual(started.delivery, { mode: 'pull_request', auto_merge: false, forge: 'github', api_url: remote.forge.apiUrl });

    // Wave 1's request is open and named by the rollout; wave 2 waits for it.
    const waiting = await eventually('the first request in the rollout', async () => {
      const rollout = await rolloutOf(started.id);
      return rollout.requests.length === 1 ? rollout : undefined;
    });
    const [first] = remote.forge.pulls;
    assert.ok(first);
    assert.deepEqual(
      waiting.requests.map((r) => [r.wave, r.number, r.state]),
      [[0, first.number, 'open']],
    );
    assert.match(waiting.requests[0]?.url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/acme\/fleet-\d+\/pull\/1$/);
    assert.equal(first.head, `scaffold/upgrade/${started.id}/wave-1`);
    assert.equal(first.base, 'main');
    assert.match(first.title, /Upgrade 2 clusters from development \(wave 1 of 2\)/);
    assert.match(first.body, /\*\*eu-1\*\*, \*\*eu-2\*\*/);
    assert.match(first.body, /## eu-1\n\n0 file\(s\) added, 2 modified, 0 removed; 4 sealed credential\(s\) kept byte for byte/);
    assert.match(first.body, /clusters\/eu-1\/apps\/tcr-api-replicas\.yaml/);
    assert.deepEqual(first.labels, ['gitops-scaffolder', 'scaffold-action:upgrade']);
    assert.deepEqual(
      waiting.clusters.map((c) => [c.name, c.status]),
      [['eu-1', 'running'], ['eu-2', 'running'], ['eu-3', 'pending']],
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(remote.forge.pulls.length, 1, 'wave 2 does not start while wave 1 is under review');
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seedSha, 'nothing reached main unreviewed');

    let firstMergedWhenSecondOpened: boolean | undefined;
    remote.forge.onOpened = (pull) => {
      firstMergedWhenSecondOpened = first.merged;
      setTimeout(() => void remote.forge.merge(pull.number), 100);
    };
    await remote.forge.merge(first.number);
    const rollout = await finished(started.id);

    assert.equal(rollout.state, 'succeeded', JSON.stringify(rollout));
    assert.equal(remote.forge.pulls.length, 2);
    const second = remote.forge.pulls[1];
    assert.ok(second?.merged);
    assert.equal(firstMergedWhenSecondOpened, true, 'the second request was opened after the first was merged');
    assert.equal(second.head, `scaffold/upgrade/${started.id}/wave-2`);
    assert.match(second.title, /Upgrade cluster eu-3 from development \(wave 2 of 2\)/);
    assert.deepEqual(
      rollout.requests.map((r) => [r.wave, r.number, r.state]),
      [[0, first.number, 'merged'], [1, second.number, 'merged']],
    );
    // Each cluster's own commit is on main, under the merges.
    for (const cluster of rollout.clusters) {
      assert.equal(cluster.outcome, 'upgraded');
      assert.ok(cluster.commit);
      await git(remote.dir, 'merge-base', '--is-ancestor', cluster.commit, 'main');
      assert.match(await git(remote.dir, 'log', '-1', '--format=%B', cluster.commit), new RegExp(`Scaffold-Cluster: ${cluster.name}`));
    }
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), second.mergeSha);
    assert.equal(await git(remote.dir, 'branch', '--list', 'scaffold/*'), '', 'the merged branches are deleted');
  });

  it('fails the wave and stops the rollout when its request is closed without being merged', async () => {
    const remote = await newRemote();
    remote.forge.onOpened = (pull) => void setTimeout(() => remote.forge.close(pull.number), 100);
    const started = await startRollout({ clusters: ['eu-1', 'eu-2'], wave_size: 1, repository_url: remote.url, delivery: pullRequests(remote) });
    const rollout = await finished(started.id);

    assert.equal(rollout.state, 'failed');
    assert.deepEqual(rollout.failure, { wave: 0, failed: ['eu-1'], not_started: ['eu-2'] });
    const eu1 = rollout.clusters.find((c) => c.name === 'eu-1');
    assert.match(eu1?.message ?? '', /request #1 for wave 1 of 2 of upgrade [\w-]+ \(http:\/\/127\.0\.0\.1:\d+\/acme\/fleet-\d+\/pull\/1\) was closed without being merged, so the upgrade of eu-1 never reached main/);
    assert.deepEqual(
      rollout.requests.map((r) => [r.wave, r.number, r.state]),
      [[0, 1, 'closed']],
    );
    assert.equal(rollout.clusters.find((c) => c.name === 'eu-2')?.status, 'pending');
    assert.equal(remote.forge.pulls.length, 1, 'wave 2 never started');
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seedSha);
  });

  it('a service stopped while a wave waits for its request leaves the rollout running; started again, it reuses the open request', async () => {
    const remote = await newRemote();
    const started = await startRollout({ clusters: ['eu-1'], repository_url: remote.url, delivery: pullRequests(remote) });
    await eventually('the request in the rollout', async () => ((await rolloutOf(started.id)).requests.length === 1 ? true : undefined));
    const closing = Date.now();
    await app.close();
    assert.ok(Date.now() - closing < 10_000, 'closing does not wait for a review');
    const stored = await store.rollouts().getRollout(started.id);
    assert.equal(stored?.state, 'running');
    assert.equal(stored?.requests?.['0']?.state, 'open');

    const lookups = () => remote.forge.calls.filter((c) => c.method === 'GET' && /\/pulls\?/.test(c.path)).length;
    const lookedUp = lookups();
    app = await createHttpApp(appDeps);
    // The resumed wave renders and commits again, then looks for its open request before waiting on it.
    await eventually('the resumed wave to look for its request', () => (lookups() > lookedUp ? true : undefined), 60_000);
    await eventually('the resumed wave to wait', async () => ((await rolloutOf(started.id)).requests[0]?.state === 'open' ? true : undefined));
    await remote.forge.merge(1);
    const rollout = await finished(started.id);
    assert.equal(rollout.state, 'succeeded', JSON.stringify(rollout));
    assert.equal(remote.forge.pulls.length, 1, 'the resumed wave reused its open request');
    assert.deepEqual(
      rollout.requests.map((r) => [r.wave, r.number, r.state]),
      [[0, 1, 'merged']],
    );
    assert.equal(rollout.clusters[0]?.outcome, 'upgraded');
  });

  it('a direct push to the protected main fails the wave with the error that points at pull_request mode', async () => {
    const remote = await newRemote();
    const started = await startRollout({ clusters: ['eu-1'], repository_url: remote.url });
    assert.deepEqual(started.delivery, { mode: 'push', auto_merge: false });
    const rollout = await finished(started.id);
    assert.equal(rollout.state, 'failed');
    const message = rollout.clusters[0]?.message ?? '';
    assert.match(message, /the remote refused a direct push to main, which is protected/);
    assert.match(message, /GH006: Protected branch update failed/);
    assert.match(message, /delivery\.mode "pull_request"/);
    assert.equal(remote.forge.pulls.length, 0);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seedSha);
  });
});

describe('removals delivered through pull requests', () => {
  const remove = (remote: Remote, cluster: string, body?: object) =>
    app.inject({ method: 'DELETE', url: `/api/v1/clusters/${cluster}?confirm=${cluster}&repository_url=${encodeURIComponent(remote.url)}`, headers: AUTH, ...(body ? { payload: body } : {}) });

  it('removes a cluster through a merged request (auto_merge) and names it', async () => {
    const remote = await newRemote();
    const response = await remove(remote, 'eu-2', { delivery: pullRequests(remote, true) });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json<{ cluster: string; commit: string; removed: string[]; delivery: { mode: string }; request?: RequestBody }>();
    const [pull] = remote.forge.pulls;
    assert.ok(pull?.merged);
    assert.equal(pull.head, 'scaffold/remove/eu-2');
    assert.equal(pull.title, 'Remove cluster eu-2');
    assert.match(pull.body, /Decommissions \*\*eu-2\*\*/);
    assert.match(pull.body, /### Files removed \(\d+\)/);
    assert.deepEqual(body.request, { number: pull.number, url: body.request?.url, state: 'merged' });
    assert.match(body.request?.url ?? '', /\/acme\/fleet-\d+\/pull\/1$/);
    assert.equal(body.delivery.mode, 'pull_request');
    assert.equal(body.commit, await git(remote.dir, 'rev-parse', 'main'));
    assert.equal(body.commit, pull.mergeSha);
    const left = await git(remote.dir, 'ls-tree', '--name-only', 'main', 'clusters/');
    assert.deepEqual(left.split('\n'), ['clusters/development', 'clusters/eu-1', 'clusters/eu-3']);
  });

  it('removes a cluster through a request the service’s GitHub App opens and merges, with the installation token it mints', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const remote = await newRemote({ appId: '123456', installationId: '7890123', publicKey });
    // As the service reads it at start-up; the forge double only accepts the installation token it mints.
    const configured = await serviceForgeAuth({
      SCAFFOLD_FORGE_GITHUB_APP_ID: '123456',
      SCAFFOLD_FORGE_GITHUB_APP_INSTALLATION_ID: '7890123',
      SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY: pem,
      SCAFFOLD_FORGE_API_URL: remote.forge.apiUrl,
    });
    assert.equal(configured.auth?.kind, 'app');
    serviceAuth = configured.auth as ForgeAuth;
    try {
      const response = await remove(remote, 'eu-2', { delivery: pullRequests(remote, true) });
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json<{ commit: string; request?: RequestBody }>();
      const [pull] = remote.forge.pulls;
      assert.ok(pull?.merged);
      assert.equal(pull.head, 'scaffold/remove/eu-2');
      assert.deepEqual(body.request, { number: pull.number, url: body.request?.url, state: 'merged' });
      assert.equal(body.commit, await git(remote.dir, 'rev-parse', 'main'));
      assert.equal(body.commit, pull.mergeSha);
      assert.deepEqual((await git(remote.dir, 'ls-tree', '--name-only', 'main', 'clusters/')).split('\n'), ['clusters/development', 'clusters/eu-1', 'clusters/eu-3']);
      const calls = remote.forge.calls.map((c) => `${c.method} ${c.path.replace(/\?.*/, '')} ${c.status}`);
      assert.equal(calls[0], 'POST /app/installations/7890123/access_tokens 201', 'the App signed its JWT and got an installation token first');
      assert.ok(!calls.some((c) => / 401$/.test(c)), calls.join('\n'));
      assert.ok(calls.includes('POST /repos/acme/fleet-' + String(repoCount) + '/pulls 201'), calls.join('\n'));
      assert.ok(!logs.text().includes('PRIVATE KEY') && !logs.text().includes(INSTALLATION_TOKEN), 'neither the key nor the installation token is logged');
    } finally {
      serviceAuth = { kind: 'token', token: FORGE_TOKEN };
    }
  });

  it('answers 409 when the removal request is closed without being merged', async () => {
    const remote = await newRemote();
    remote.forge.onOpened = (pull) => void setTimeout(() => remote.forge.close(pull.number), 100);
    const response = await remove(remote, 'eu-1', { delivery: pullRequests(remote) });
    assert.equal(response.statusCode, 409, response.body);
    assert.match(response.body, /request #1 for the removal of eu-1 \(.*\/pull\/1\) was closed without being merged, so clusters\/eu-1\/ is still on main/);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seedSha);
  });

  it('a direct push to the protected main answers 403 pointing at pull_request mode', async () => {
    const remote = await newRemote();
    const response = await remove(remote, 'eu-1');
    assert.equal(response.statusCode, 403, response.body);
    assert.match(response.body, /the remote refused a direct push to main, which is protected/);
    assert.match(response.body, /delivery\.mode \\"pull_request\\"/);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seedSha);
  });

  it('refuses pull_request without a forge, by the same rule as a run, for removals and upgrades', async () => {
    const remote = await newRemote();
    const response = await remove(remote, 'eu-1', { delivery: { mode: 'pull_request' } });
    assert.equal(response.statusCode, 400, response.body);
    assert.match(response.body, /"field":"delivery\.forge"/);
    const upgrade = await app.inject({ method: 'POST', url: '/api/v1/upgrades', headers: AUTH, payload: { clusters: 'all', repository_url: remote.url, delivery: { mode: 'pull_request', forge: 'github', api_url: 'http://forge.example.net/api' } } });
    assert.equal(upgrade.statusCode, 400, upgrade.body);
    assert.match(upgrade.body, /"field":"delivery\.api_url"/);
    assert.equal(remote.forge.pulls.length, 0);
  });

  it('never sends the service forge token to another API than its own', async () => {
    const remote = await newRemote();
    const elsewhere = { ...pullRequests(remote), api_url: 'https://forge.attacker.example/api/v3' };
    const response = await remove(remote, 'eu-1', { delivery: elsewhere });
    assert.equal(response.statusCode, 400, response.body);
    assert.match(response.body, /the service's forge token is only sent to http:\/\/127\.0\.0\.1:\d+/);
    const upgrade = await app.inject({ method: 'POST', url: '/api/v1/upgrades', headers: AUTH, payload: { clusters: 'all', repository_url: remote.url, delivery: elsewhere } });
    assert.equal(upgrade.statusCode, 400, upgrade.body);
    assert.equal(remote.forge.calls.length, 0);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seedSha);
  });
});
