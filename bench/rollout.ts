/**
 * A verified rollout of N generated clusters (1,000 by default,
 * BENCH_ROLLOUT_CLUSTERS to change it) through the service, as issue 24 asks:
 * the embedded-mode service (startService, as src/main.ts and the fleet-upgrade
 * e2e test compose it: PGlite, static API token, EXECUTOR=local, so each
 * upgrade is a real scaffold-runner child process, verify on) upgrades every
 * cluster of a repository served by `git daemon` on 127.0.0.1, after one
 * commit to the reference put them all behind. One POST /api/v1/upgrades with
 * one wave of all N; the suite polls until the rollout ends.
 *
 * The service is loaded from dist/, built first when older than src/ (bench/support.ts
 * builtDist): its runner is the bundle dist/bundle/runner-cli.js, what a Job runs.
 *
 * Checks afterwards: every cluster succeeded with a commit; the branch gained
 * exactly N commits since the reference change, each touching one cluster
 * directory and each directory touched once; and every run verified. An
 * upgrade run logs no "verified" event (run-fleet-change's gate drops the
 * report), so a kubectl shim first on PATH records the parent of each
 * `kubectl kustomize` (the runner: batched builds run in a shared temp
 * directory, so the directory does not name the run): every runner process
 * must have run one, and there must be at least N (each cluster's own tree
 * is its own input: no cache answers it). A pushed rollout hands each run a
 * batch of clusters (rollout-service.ts), so the runs are fewer than the clusters.
 *
 * Runners copy trees for kustomize into memory (/dev/shm, passed as the
 * service's SCAFFOLD_SCRATCH_DIR), as a runner Job mounts its scratch volume;
 * BENCH_ROLLOUT_SCRATCH=disk leaves them in the OS temp dir.
 *
 * Reports the wall time from POST to finished, CPU of this process and every
 * child it waited for (service, PGlite, runners and their git and kubectl;
 * the git daemon's server side separately), CPU per cluster and clusters per
 * minute. Baseline: the CPU floor, CPU per cluster × N / CPUs.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { startGitDaemon } from '../test/support/git-server.js';
import { installProcessCounter } from './process-shim.js';
import { fleetBehindReference } from './fixtures.js';
import { type Figure, type Suite, builtDist, cpuMsApart, cpuMsWithChildren, git, ms, onCleanup, tempDir, verdict } from './support.js';

const TARGET_MS = 5 * 60_000;
const POLL_MS = 250;

type ServiceModule = typeof import('../src/main.js');
type ConfigModule = typeof import('../src/service/service-config.js');
type PinoModule = typeof import('../src/pino-logger.js');

/** The service modules from dist/ (built first when stale): its runner is then dist/bundle/runner-cli.js, what a Job runs. */
async function serviceModules(log: (m: string) => void): Promise<{ main: ServiceModule; config: ConfigModule; pino: PinoModule }> {
  const dist = await builtDist(log);
  log('rollout: service and runner from dist/ (runner: node dist/bundle/runner-cli.js, as a Job runs it)');
  const load = (p: string) => import(pathToFileURL(join(dist, p)).href);
  return {
    main: (await load('main.js')) as ServiceModule,
    config: (await load('service/service-config.js')) as ConfigModule,
    pino: (await load('pino-logger.js')) as PinoModule,
  };
}

interface WireCluster {
  readonly name: string;
  readonly status: string;
  readonly run_id?: string;
  readonly outcome?: string;
  readonly commit?: string;
  readonly message?: string;
}
interface WireRollout {
  readonly id: string;
  readonly state: string;
  readonly clusters: readonly WireCluster[];
  readonly created_at: string;
  readonly finished_at?: string;
}
interface WireRun {
  readonly id: string;
  readonly status: string;
  readonly created_at: string;
  readonly started_at: string | null;
  readonly finished_at: string | null;
}

export const rolloutSuite: Suite = async ({ log }) => {
  const count = Number(process.env['BENCH_ROLLOUT_CLUSTERS'] ?? 1000);
  const cores = cpus().length;
  const dir = await tempDir('rollout');

  // 1. The fleet, and one reference change that puts every cluster behind.
  const repos = join(dir.path, 'repos');
  const bare = join(repos, 'fleet.git');
  const work = join(dir.path, 'work');
  await fleetBehindReference(dir.path, bare, work, count, (m) => log(`rollout: ${m}`));
  await git(work, ['push', '--quiet', 'origin', 'HEAD:main']);
  const referenceChange = (await git(bare, ['rev-parse', 'main'])).stdout.trim();

  // 2. The daemon and the service.
  const daemon = await startGitDaemon({ baseDir: repos });
  onCleanup(() => daemon.stop());
  const shim = await installProcessCounter(join(dir.path, 'shim'), ['kubectl']);
  onCleanup(() => shim.uninstall());
  // verify's copies in memory, as a runner Job mounts its scratch volume: the local
  // executor's runners take the service's SCAFFOLD_SCRATCH_DIR (BENCH_ROLLOUT_SCRATCH=disk: the OS temp dir).
  const memoryScratch =
    process.env['BENCH_ROLLOUT_SCRATCH'] === 'disk' ? undefined : await mkdtemp(join('/dev/shm', 'bench-rollout-scratch-')).catch(() => undefined);
  const scratchBefore = process.env['SCAFFOLD_SCRATCH_DIR'];
  if (memoryScratch !== undefined) {
    process.env['SCAFFOLD_SCRATCH_DIR'] = memoryScratch;
    onCleanup(async () => {
      if (scratchBefore === undefined) delete process.env['SCAFFOLD_SCRATCH_DIR'];
      else process.env['SCAFFOLD_SCRATCH_DIR'] = scratchBefore;
      await rm(memoryScratch, { recursive: true, force: true });
    });
  }
  log(
    `rollout: runners' scratch (verify's copies) ${memoryScratch !== undefined ? `in memory, ${memoryScratch}, as a runner Job mounts it` : 'in the OS temp dir'}`,
  );
  const modules = await serviceModules(log);
  const token = `bench-${randomBytes(18).toString('hex')}`;
  const config = modules.config.loadServiceConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    API_TOKENS: token,
    DATA_DIR: join(dir.path, 'data'),
    EXECUTOR: 'local',
    AUTH_MODE: 'static',
    LOG_LEVEL: 'warn',
    DEFAULT_GITOPS_REPO_URL: daemon.url('fleet.git'),
  });
  const service = await modules.main.startService(config, { logger: modules.pino.createPino({ level: 'warn', pretty: false }), notice: () => {} });
  onCleanup(() => service.close());
  log(
    `rollout: service at ${service.address}; executor concurrency 4 (the LocalExecutor's default: startService takes no setting, ` +
      `so ${cores} = CPUs would need src/main.ts to pass one), rollout maxActiveRuns 20 and poll 1 s (RolloutService defaults)`,
  );
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${service.address}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  };

  // 3. One rollout of every cluster, one wave.
  log(`rollout: POST /api/v1/upgrades, ${count} clusters in one wave`);
  const cpuBefore = cpuMsWithChildren();
  const apartBefore = cpuMsApart();
  const started = performance.now();
  const created = await api<WireRollout>('POST', '/api/v1/upgrades', { clusters: 'all', wave_size: count });
  const postMs = performance.now() - started;
  let lastReport = performance.now();
  for (;;) {
    const { rollouts } = await api<{ rollouts: { id: string; state: string; clusters: Record<string, number> }[] }>('GET', '/api/v1/upgrades?limit=5');
    const mine = rollouts.find((r) => r.id === created.id);
    if (mine === undefined) throw new Error(`rollout ${created.id} is not listed`);
    if (mine.state !== 'running') break;
    if (performance.now() - lastReport > 30_000) {
      lastReport = performance.now();
      log(`rollout: ${((performance.now() - started) / 1000).toFixed(0)} s: ${JSON.stringify(mine.clusters)}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const wallMs = performance.now() - started;
  const cpuMs = cpuMsWithChildren() - cpuBefore;
  const apartAfter = cpuMsApart();
  // The service runs in this process (PGlite, the run monitor storing every runner line, the rollout driver); the runners are its children.
  const serviceCpuMs = apartAfter.own - apartBefore.own;
  const runnersCpuMs = apartAfter.children - apartBefore.children;
  const rollout = await api<WireRollout>('GET', `/api/v1/upgrades/${created.id}`);
  // The git daemon's server side (upload-pack, receive-pack) is counted once it is stopped and waited for.
  const beforeDaemon = cpuMsWithChildren();
  await daemon.stop();
  const daemonCpuMs = cpuMsWithChildren() - beforeDaemon;

  // 4. Checks.
  const failed = rollout.clusters.filter((c) => c.status !== 'succeeded' || c.outcome !== 'upgraded' || c.commit === undefined);
  if (rollout.state !== 'succeeded' || failed.length > 0) {
    throw new Error(
      `rollout ${rollout.state}: ${failed.length} of ${rollout.clusters.length} cluster(s) not upgraded, e.g. ` +
        failed
          .slice(0, 3)
          .map((c) => `${c.name} ${c.status}${c.message ? `: ${c.message}` : ''}`)
          .join('; '),
    );
  }
  if (rollout.clusters.length !== count) throw new Error(`the rollout covered ${rollout.clusters.length} clusters, not ${count}`);
  const history = (await git(bare, ['log', '--format=%x1e%H', '--name-only', `${referenceChange}..main`])).stdout
    .split('\x1e')
    .filter((c) => c.trim() !== '')
    .map((c) => {
      const [sha, ...paths] = c.trim().split('\n');
      return { sha: sha!, clusters: new Set(paths.filter((p) => p !== '').map((p) => p.split('/')[1])) };
    });
  if (history.length !== count) throw new Error(`main gained ${history.length} commits since the reference change, not one per cluster (${count})`);
  const touched = new Map<string, number>();
  for (const c of history) {
    if (c.clusters.size !== 1) throw new Error(`commit ${c.sha} touches ${c.clusters.size} cluster directories: ${[...c.clusters].join(', ')}`);
    const name = [...c.clusters][0]!;
    touched.set(name, (touched.get(name) ?? 0) + 1);
  }
  const notOnce = rollout.clusters.filter((c) => touched.get(c.name) !== 1);
  if (notOnce.length > 0) throw new Error(`${notOnce.length} cluster(s) not touched exactly once, e.g. ${notOnce[0]!.name}`);
  const commits = new Set(history.map((c) => c.sha));
  const stray = rollout.clusters.filter((c) => !commits.has(c.commit!));
  if (stray.length > 0) throw new Error(`${stray.length} reported commit(s) not on main, e.g. ${stray[0]!.name} ${stray[0]!.commit}`);
  // kubectl's parent is the runner (spawned without a shell); each run is its own runner process, and each cluster's tree its own build.
  const runIds = [...new Set(rollout.clusters.map((c) => c.run_id))];
  const kubectlProcesses = (await shim.read({ anyParent: true })).kubectl;
  const verifyingRunners = new Set(kubectlProcesses.map((p) => p.parent)).size;
  if (verifyingRunners < runIds.length) throw new Error(`only ${verifyingRunners} runner process(es) ran kubectl kustomize (verify), not all ${runIds.length}`);
  // Every cluster verified, from its run's log: a `verified` event names it (its builds may all come from the run's cache).
  const verifiedEvents = (
    await Promise.all(
      runIds.map(async (id) => {
        const response = await fetch(`${service.address}/api/v1/scaffolds/${id}/logs`, { headers: { authorization: `Bearer ${token}` } });
        return (await response.text())
          .split('\n')
          .filter((line) => line.includes('"event":"verified"'))
          .map((line) => JSON.parse(line) as { cluster: string; batch_cluster?: string; kustomize_run?: number; kustomize_cached?: number });
      }),
    )
  ).flat();
  const verifiedClusters = new Set(verifiedEvents.map((event) => event.batch_cluster ?? event.cluster));
  const unverified = rollout.clusters.filter((c) => !verifiedClusters.has(c.name));
  if (unverified.length > 0) throw new Error(`${unverified.length} cluster(s) with no verify in their run's log, e.g. ${unverified[0]!.name}`);
  const builds = verifiedEvents.reduce((sum, event) => ({ run: sum.run + (event.kustomize_run ?? 0), cached: sum.cached + (event.kustomize_cached ?? 0) }), {
    run: 0,
    cached: 0,
  });

  // Where the time went, from the run records.
  const runs = await Promise.all(runIds.map((id) => api<WireRun>('GET', `/api/v1/scaffolds/${id}`)));
  const t = (s: string | null) => (s === null ? Number.NaN : Date.parse(s));
  const queued = runs.map((r) => t(r.started_at) - t(r.created_at));
  const running = runs.map((r) => t(r.finished_at) - t(r.started_at));
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const firstCreated = Math.min(...runs.map((r) => t(r.created_at)));
  const lastCreated = Math.max(...runs.map((r) => t(r.created_at)));
  const lastFinished = Math.max(...runs.map((r) => t(r.finished_at)));
  const recordedMs = t(rollout.finished_at ?? null) - t(rollout.created_at);

  const perCluster = cpuMs / count;
  const perClusterAll = (cpuMs + daemonCpuMs) / count;
  const floorMs = (perClusterAll * count) / cores;
  const perMinute = count / (wallMs / 60_000);
  const thousandMs = (wallMs * 1000) / count;
  const projected = count !== 1000;
  log(
    `rollout: ${count} clusters in ${ms(wallMs)} (${(wallMs / 60_000).toFixed(2)} min; POST answered in ${ms(postMs)}), ${perMinute.toFixed(1)} clusters/min; ` +
      `CPU ${ms(cpuMs)} service + runners (service ${ms(serviceCpuMs)}, runners with their git and kubectl ${ms(runnersCpuMs)}), ${ms(daemonCpuMs)} git daemon; ` +
      `per cluster ${ms(perCluster)} + ${ms(daemonCpuMs / count)} (service ${ms(serviceCpuMs / count)}, runner ${ms(runnersCpuMs / count)})`,
  );
  log(
    `rollout: checked: ${count} commits on main since ${referenceChange.slice(0, 12)}, one per cluster directory, each the one its run reported; ` +
      `${runIds.length} runs (${(count / runIds.length).toFixed(1)} clusters a run); ` +
      `every cluster verified (${verifiedEvents.length} verifies: ${builds.run} kustomize builds run, ${builds.cached} from the run's cache); ` +
      `${kubectlProcesses.length} kubectl processes from ${verifyingRunners} runner processes`,
  );
  log(
    `rollout: runs queued in the executor ${ms(avg(queued))} on average (max ${ms(Math.max(...queued))}), ran ${ms(avg(running))} on average; ` +
      `runs created over ${ms(lastCreated - firstCreated)}; first run created ${ms(firstCreated - t(rollout.created_at))} after the rollout, ` +
      `rollout recorded finished ${ms(t(rollout.finished_at ?? null) - lastFinished)} after the last run; service's own record ${ms(recordedMs)}`,
  );
  if (projected) log(`rollout: projected (linear) to 1,000 clusters: ${ms(thousandMs)} (${(thousandMs / 60_000).toFixed(2)} min)`);
  await dir.remove();

  return [
    {
      suite: 'rollout',
      name: `verified rollout of ${count} clusters (${perMinute.toFixed(1)} clusters/min${projected ? `; projected to 1000: ${(thousandMs / 60_000).toFixed(2)} min` : ''})`,
      measured: `${ms(wallMs)} (CPU ${ms(cpuMs + daemonCpuMs)})`,
      baseline: `CPU floor ${ms(floorMs)} (CPU / ${cores} CPUs)`,
      ratio: wallMs / floorMs,
      target: '< 5 min for 1000 clusters',
      verdict: verdict(thousandMs < TARGET_MS),
    } satisfies Figure,
    {
      suite: 'rollout',
      name: 'CPU per cluster (service + runner + git daemon)',
      measured: `${ms(perClusterAll)} (runner side ${ms(perCluster)}, daemon ${ms(daemonCpuMs / count)})`,
      target: '',
      verdict: 'INFO',
    } satisfies Figure,
  ];
};
