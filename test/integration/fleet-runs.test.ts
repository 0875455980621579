/**
 * Upgrades and removals as runs, end to end: the real HTTP app, RolloutService
 * and GitFleetSource; each upgrade or removal a real `scaffold-runner` process
 * under the LocalExecutor and the RunMonitor (runs in PGlite), pushing with
 * native git to real repositories, with real verification. Pull requests go
 * through the forge double (driven by the runner through Octokit) in front of a
 * smart-HTTP git server on loopback whose `main` is protected.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FleetRunSecrets } from '../../src/delivery/fleet-run-secrets.js';
import { type ForgeDouble, startForgeDouble } from '../support/forge-double.js';
import { createGeneratedFleet, editReferenceReplicas } from '../support/generated-fleet.js';
import { type GitHttpServer, startGitHttpServer } from '../support/git-server.js';
import { git } from '../support/git.js';
import { startLocalFleetService, type LocalFleetService } from '../support/local-fleet-service.js';
import { protectMain } from '../support/protected-branch.js';
import { eventually, filesAt } from '../support/runner.js';

const API_TOKEN = 'fleet-runs-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${API_TOKEN}` };
const FORGE_TOKEN = 'forge-token-0123456789';
const CLUSTERS = ['eu-1', 'eu-2', 'eu-3'];
const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid'];

interface RolloutBody {
  id: string;
  state: string;
  clusters: { name: string; wave: number; status: string; run_id?: string; outcome?: string; commit?: string; modified?: number; message?: string }[];
  failure?: { wave: number; failed: string[]; not_started: string[] };
}
interface RunBody {
  id: string;
  action: string;
  status: string;
  message: string;
  sealing: string;
  cluster: { name: string };
  commits: { pass: string; sha: string; cluster?: string }[];
  batch: string[] | null;
  changes: { added: number; modified: number; removed: number; credentials_kept?: number; kept?: string[] } | null;
  review_requests: { pass: string; number: number; state: string; branch?: string }[];
  steps: { name: string; status: string }[];
}

let scratch: string;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-fleet-runs-'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Calls on one service. */
function client(fleet: () => LocalFleetService) {
  const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    fleet().app.inject({ method, url, headers: AUTH, ...(payload ? { payload } : {}) });
  const get = async <T>(url: string): Promise<T> => {
    const response = await inject('GET', url);
    assert.equal(response.statusCode, 200, response.body);
    return response.json<T>();
  };
  const run = (id: string) => get<RunBody>(`/api/v1/scaffolds/${id}`);
  return {
    inject,
    run,
    rollout: (id: string) => get<RolloutBody>(`/api/v1/upgrades/${id}`),
    startRollout: async (body: object): Promise<RolloutBody> => {
      const response = await inject('POST', '/api/v1/upgrades', body);
      assert.equal(response.statusCode, 202, response.body);
      return response.json<RolloutBody>();
    },
    finished: (id: string) =>
      eventually(
        `rollout ${id} to finish`,
        async () => {
          const body = await get<RolloutBody>(`/api/v1/upgrades/${id}`);
          return body.state === 'running' ? undefined : body;
        },
        180_000,
        200,
      ),
    runEnded: (id: string) =>
      eventually(
        `run ${id} to end`,
        async () => {
          const body = await run(id);
          return body.status === 'pending' || body.status === 'running' ? undefined : body;
        },
        180_000,
        200,
      ),
  };
}

describe('upgrades and removals as runs, pushed', () => {
  let work: string;
  let bare: string;
  let fleet: LocalFleetService;
  const api = client(() => fleet);
  const head = () => git(bare, 'rev-parse', 'main');
  /** Every sealed credential of the fleet, as `mode type blob path` lines. */
  const sealed = async () => (await git(bare, 'ls-tree', '-r', 'main', 'clusters')).split('\n').filter((line) => line.includes('/sealed/sealed-'));

  before(async () => {
    work = join(scratch, 'push-work');
    bare = join(scratch, 'push-gitops.git');
    await createGeneratedFleet(work, bare, { clusters: CLUSTERS, fluxBootstrapped: ['eu-3'] });
    fleet = await startLocalFleetService({ dataDir: join(scratch, 'push-data'), apiToken: API_TOKEN, defaultRepositoryUrl: pathToFileURL(bare).href });
  });
  after(async () => fleet?.close());

  it('a dry run lists exactly the behind clusters; the upgrade runs a batch run per wave, one commit per cluster, credentials kept; a second upgrade writes nothing', async () => {
    const before = await head();
    const sealedBefore = await sealed();
    const preview = await api.inject('POST', '/api/v1/upgrades', { clusters: 'all', dry_run: true });
    assert.equal(preview.statusCode, 200, preview.body);
    const planned = preview.json<{ clusters: { name: string; status: string; files: { modified: string[] } }[] }>().clusters;
    assert.deepEqual(
      planned.map((c) => [c.name, c.status]),
      CLUSTERS.map((name) => [name, 'changed']),
    );
    for (const cluster of planned)
      assert.ok(
        cluster.files.modified.some((path) => path.startsWith(`clusters/${cluster.name}/apps/`)),
        JSON.stringify(cluster.files),
      );
    assert.equal(await head(), before, 'a dry run writes nothing');

    const started = await api.startRollout({ clusters: 'all', wave_size: 2 });
    const rollout = await api.finished(started.id);
    assert.equal(rollout.state, 'succeeded', JSON.stringify(rollout));
    assert.deepEqual(
      rollout.clusters.map((c) => [c.name, c.wave, c.status, c.outcome]),
      [
        ['eu-1', 0, 'succeeded', 'upgraded'],
        ['eu-2', 0, 'succeeded', 'upgraded'],
        ['eu-3', 1, 'succeeded', 'upgraded'],
      ],
    );

    // One commit per cluster, on a linear history, each touching its own cluster only, each its run's.
    const landed = (await git(bare, 'log', '--format=%H %P', `${before}..main`)).split('\n');
    assert.equal(landed.length, 3);
    for (const line of landed) assert.equal(line.split(' ').length, 2, 'no merge commits');
    // A pushed rollout hands each run a batch of its wave: wave 0's two clusters share one run, each with its own commit.
    assert.equal(rollout.clusters[0]?.run_id, rollout.clusters[1]?.run_id);
    assert.notEqual(rollout.clusters[1]?.run_id, rollout.clusters[2]?.run_id);
    for (const cluster of rollout.clusters) {
      const run = await api.run(cluster.run_id!);
      assert.equal(run.action, 'upgrade');
      assert.equal(run.sealing, 'none');
      const batched = run.batch !== null;
      assert.deepEqual(
        run.commits.filter((c) => (c.cluster ?? run.cluster.name) === cluster.name),
        [{ pass: 'upgrade', sha: cluster.commit, ...(batched ? { cluster: cluster.name } : {}) }],
      );
      assert.deepEqual(
        run.steps.map((s) => [s.name, s.status]),
        [
          ['clone', 'succeeded'],
          ['render-upgrade', 'succeeded'],
          ['push-upgrade', 'succeeded'],
        ],
      );
      // A batch run's counts are its clusters' together; each cluster's own are on the rollout.
      if (batched) assert.ok((run.changes?.modified ?? 0) >= (cluster.modified ?? 0) && (cluster.modified ?? 0) > 0);
      else assert.equal(run.changes?.modified, cluster.modified);
      assert.ok((run.changes?.credentials_kept ?? 0) > 0, 'it kept the sealed credentials');
      const files = (await git(bare, 'show', '--name-only', '--format=', cluster.commit!)).split('\n');
      assert.ok(
        files.every((file) => file.startsWith(`clusters/${cluster.name}/`)),
        files.join(', '),
      );
      assert.match(
        await git(bare, 'log', '-1', '--format=%B', cluster.commit!),
        new RegExp(`Scaffold-Id: ${run.id}[\\s\\S]*Scaffold-Cluster: ${cluster.name}`),
      );
    }
    assert.deepEqual(await sealed(), sealedBefore, 'every sealed credential byte for byte');

    const after = await head();
    const again = await api.finished((await api.startRollout({ clusters: 'all', wave_size: 3 })).id);
    assert.equal(again.state, 'succeeded', JSON.stringify(again));
    assert.deepEqual(
      again.clusters.map((c) => c.outcome),
      ['up_to_date', 'up_to_date', 'up_to_date'],
    );
    assert.equal(await head(), after, 'an up-to-date fleet gets no commit');
  });

  it('a cluster whose upgrade fails stops the rollout after its wave, saying which and why; later waves never start', async () => {
    await editReferenceReplicas(work, bare, 4, 5);
    // eu-1 lost a sealed credential: rendering it again would seal a new one, which an upgrade never does.
    await git(work, 'pull', '--quiet', '--ff-only', bare, 'main');
    const [lost] = (await git(work, 'ls-files', 'clusters/eu-1')).split('\n').filter((path) => path.includes('/sealed/sealed-'));
    assert.ok(lost);
    await git(work, 'rm', '--quiet', lost);
    await git(work, ...IDENTITY, 'commit', '--quiet', '-m', 'lose a sealed credential of eu-1');
    await git(work, 'push', '--quiet', bare, 'main:main');
    const before = await head();

    const rollout = await api.finished((await api.startRollout({ clusters: 'all', wave_size: 2 })).id);
    assert.equal(rollout.state, 'failed');
    assert.deepEqual(rollout.failure, { wave: 0, failed: ['eu-1'], not_started: ['eu-3'] });
    const [eu1, eu2, eu3] = rollout.clusters;
    assert.match(eu1?.message ?? '', /(sealed|certificate)/);
    // eu-1 and eu-2 shared a batch run: it failed for eu-1, and eu-2 after it landed its commit all the same.
    assert.equal(eu1?.run_id, eu2?.run_id);
    const failedRun = await api.run(eu1!.run_id!);
    assert.equal(failedRun.status, 'failed');
    assert.deepEqual(failedRun.commits, [{ pass: 'upgrade', sha: eu2?.commit, cluster: 'eu-2' }]);
    assert.equal(eu2?.outcome, 'upgraded');
    assert.deepEqual([eu3?.status, eu3?.run_id], ['pending', undefined]);
    assert.deepEqual((await git(bare, 'log', '--format=%H', `${before}..main`)).split('\n'), [eu2?.commit], 'only eu-2 landed');
  });

  it('DELETE removes a cluster through a run: one commit, only the generated files, flux-system/ kept, everything else untouched', async () => {
    const untouched = async () =>
      Promise.all(['base', 'clusters/development', 'clusters/eu-1', 'clusters/eu-2'].map((p) => git(bare, 'rev-parse', `main:${p}`)));
    const before = await untouched();
    const response = await api.inject('DELETE', '/api/v1/clusters/eu-3?confirm=eu-3');
    assert.equal(response.statusCode, 202, response.body);
    const answer = response.json<{ run: { id: string }; removed: string[]; kept: string[] }>();
    const run = await api.runEnded(answer.run.id);
    assert.equal(run.status, 'succeeded', run.message);
    assert.equal(run.action, 'remove');
    assert.deepEqual(run.commits, [{ pass: 'remove', sha: await head() }]);
    // Steps 2-3 lift the data's protection: skipped, the data stays unless delete_data is asked for.
    assert.deepEqual(
      run.steps.map((s) => s.status),
      ['succeeded', 'skipped', 'skipped', 'succeeded', 'succeeded'],
    );
    assert.deepEqual(run.changes?.kept, answer.kept);
    assert.equal(run.changes?.removed, answer.removed.length);
    // The sync path stays: the entry point is rewritten to list only flux-system/, so Flux prunes the layers.
    assert.deepEqual(await filesAt(bare, 'main', 'clusters/eu-3'), [...answer.kept, 'clusters/eu-3/kustomization.yaml'].sort());
    assert.ok(answer.kept.every((path) => path.startsWith('clusters/eu-3/flux-system/')));
    assert.match(await git(bare, 'show', 'main:clusters/eu-3/kustomization.yaml'), /resources:\n\s+- flux-system\s*$/);
    assert.deepEqual(await untouched(), before);
    assert.match(await git(bare, 'log', '-1', '--format=%B', 'main'), /^Remove cluster eu-3[\s\S]*Scaffold-Action: remove/);
    const listed = await api.inject('GET', '/api/v1/clusters');
    assert.equal(listed.json<{ clusters: { name: string; kind: string }[] }>().clusters.find((c) => c.name === 'eu-3')?.kind, 'unmanaged');
  });
});

describe('upgrades and removals as runs, through pull requests', () => {
  let fleet: LocalFleetService;
  let http: GitHttpServer;
  let forge: ForgeDouble;
  let remote: { dir: string; url: string; seed: string };
  const api = client(() => fleet);
  const pullRequests = (autoMerge = false) => ({ mode: 'pull_request', forge: 'github', api_url: forge.apiUrl, auto_merge: autoMerge });

  before(async () => {
    const served = join(scratch, 'served');
    await mkdir(join(served, 'acme'), { recursive: true });
    const dir = join(served, 'acme', 'fleet.git');
    const seed = await createGeneratedFleet(join(scratch, 'pr-work'), dir, { clusters: CLUSTERS });
    await protectMain(dir);
    // A public repository: the service reads the fleet anonymously; runs push with the service's token.
    http = await startGitHttpServer({ baseDir: served, username: 'x-access-token', password: FORGE_TOKEN, publicRead: true });
    forge = await startForgeDouble({ forge: 'github', repoDir: dir, owner: 'acme', repo: 'fleet', token: FORGE_TOKEN });
    remote = { dir, url: http.url('acme/fleet.git'), seed };
    // The service's token for the double and the git server (which runs get is service-forge-auth.test's).
    const secrets: FleetRunSecrets = () => ({ repositoryCredentials: { token: FORGE_TOKEN } });
    fleet = await startLocalFleetService({
      dataDir: join(scratch, 'pr-data'),
      apiToken: API_TOKEN,
      defaultRepositoryUrl: remote.url,
      fleetRunSecrets: secrets,
      runnerEnv: { SCAFFOLD_MERGE_POLL_INTERVAL: '100ms' },
    });
  });
  after(async () => {
    await fleet?.close();
    await forge?.stop();
    await http?.stop();
  });

  it('a direct push to the protected main fails the run with the error that points at pull_request mode', async () => {
    const rollout = await api.finished((await api.startRollout({ clusters: ['eu-1'] })).id);
    assert.equal(rollout.state, 'failed');
    const message = rollout.clusters[0]?.message ?? '';
    assert.match(message, /the remote refused a direct push to main, which is protected/);
    assert.match(message, /delivery\.mode "pull_request"/);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seed);
  });

  it('cancelling a rollout whose run waits for its request stops that runner and starts no later wave; the request stays open for a retry', async () => {
    const started = await api.startRollout({ clusters: ['eu-1', 'eu-2'], wave_size: 1, delivery: pullRequests() });
    const [opened] = await eventually('eu-1’s request', () => (forge.pulls.length === 1 ? [...forge.pulls] : undefined), 120_000);
    assert.equal(opened?.head, 'scaffold/eu-1/upgrade');
    const runId = (await api.rollout(started.id)).clusters[0]!.run_id!;
    assert.equal((await api.run(runId)).status, 'running', 'the run waits for the merge');
    // The waiting runner polls its request (every 100 ms here).
    const polls = () => forge.calls.filter((c) => c.method === 'GET' && c.path.endsWith(`/pulls/${opened!.number}`)).length;
    await eventually('the runner polling its request', () => (polls() >= 2 ? true : undefined));

    const response = await api.inject('POST', `/api/v1/upgrades/${started.id}/cancel`, {});
    assert.equal(response.statusCode, 200, response.body);
    const cancelled = response.json<RolloutBody>();
    assert.equal(cancelled.state, 'cancelled');
    assert.deepEqual(
      cancelled.clusters.map((c) => [c.name, c.status]),
      [
        ['eu-1', 'cancelled'],
        ['eu-2', 'pending'],
      ],
    );
    assert.match(cancelled.clusters[0]?.message ?? '', /^cancelled by /);
    const run = await api.runEnded(runId);
    assert.equal(run.status, 'cancelled');
    // Its process was stopped: after a last poll in flight, no more.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const polled = polls();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(polls(), polled, 'the runner no longer polls its request');
    assert.deepEqual(
      forge.pulls.map((p) => [p.head, p.state]),
      [['scaffold/eu-1/upgrade', 'open']],
      'eu-2 never opened one; eu-1’s stays open',
    );
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seed);
    // Abandoned: closed by hand, as the docs say, so the next rollout opens a request of its own.
    forge.close(opened!.number);
  });

  it('each upgrade run opens its own request; the second wave starts only once every request of the first is merged', async () => {
    const earlier = forge.pulls.length;
    const started = await api.startRollout({ clusters: 'all', wave_size: 2, delivery: pullRequests() });
    const opened = await eventually(
      'the first wave’s two requests',
      () => (forge.pulls.length === earlier + 2 ? forge.pulls.slice(earlier) : undefined),
      120_000,
    );
    assert.deepEqual(opened.map((p) => p.head).sort(), ['scaffold/eu-1/upgrade', 'scaffold/eu-2/upgrade']);
    for (const pull of opened) assert.match(pull.title, /^Upgrade eu-\d/);
    const waiting = await api.rollout(started.id);
    assert.deepEqual(
      waiting.clusters.map((c) => [c.name, c.status]),
      [
        ['eu-1', 'running'],
        ['eu-2', 'running'],
        ['eu-3', 'pending'],
      ],
    );
    const run = await eventually('the run to name its request', async () => {
      const body = await api.run(waiting.clusters[0]!.run_id!);
      return body.review_requests.length > 0 ? body : undefined;
    });
    assert.deepEqual(
      run.review_requests.map((r) => [r.pass, r.state, r.branch]),
      [['upgrade', 'open', 'scaffold/eu-1/upgrade']],
    );
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seed, 'nothing reached main unreviewed');

    await forge.merge(opened[0]!.number);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(forge.pulls.length, earlier + 2, 'wave 2 waits for the whole of wave 1');
    forge.onOpened = (pull) => void setTimeout(() => void forge.merge(pull.number), 100);
    await forge.merge(opened[1]!.number);
    const rollout = await api.finished(started.id);
    assert.equal(rollout.state, 'succeeded', JSON.stringify(rollout));
    assert.equal(forge.pulls.length, earlier + 3);
    assert.equal(forge.pulls[earlier + 2]?.head, 'scaffold/eu-3/upgrade');
    for (const cluster of rollout.clusters) {
      assert.equal(cluster.outcome, 'upgraded');
      await git(remote.dir, 'merge-base', '--is-ancestor', cluster.commit!, 'main');
    }
  });

  it('DELETE with pull_request removes the cluster through a request the run opens and merges (auto_merge)', async () => {
    const response = await api.inject('DELETE', '/api/v1/clusters/eu-2?confirm=eu-2', { delivery: pullRequests(true) });
    assert.equal(response.statusCode, 202, response.body);
    const run = await api.runEnded(response.json<{ run: { id: string } }>().run.id);
    assert.equal(run.status, 'succeeded', run.message);
    assert.deepEqual(
      run.review_requests.map((r) => [r.pass, r.state, r.branch]),
      [['remove', 'merged', 'scaffold/eu-2/remove']],
    );
    // Only the rewritten entry point stays, so a sync pointed at the path prunes instead of failing on a missing path.
    assert.deepEqual((await git(remote.dir, 'ls-tree', '-r', '--name-only', 'main', 'clusters/eu-2')).split('\n'), ['clusters/eu-2/kustomization.yaml']);
  });
});
