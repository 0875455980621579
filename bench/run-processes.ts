/**
 * What one verified scaffold run spawns, as the scaffold-runner runs it (one
 * verifier a run, so the kustomize build cache lives for the run's two
 * verifies): kubectl and git processes, counted by a PATH shim
 * (process-shim.ts: every process the run starts, the reader's and the
 * verifier's included), the cache's hit rate and the CPU of this process and
 * its children per run. Four kinds of run, interleaved run by run: the cache
 * and build batching off (the kubectl baseline), the cache on and batching
 * off (kustomize/batched-kustomize.ts: the baseline of the batching), both on
 * with a key of the run's own (the CLI), and both on with the service's shared
 * queue key (pass commits MAC'd, pushes fenced: what a runner Job does). The git baseline is plain git
 * making the same clone, two commits and two pushes, counted by the same shim
 * in the same run; the count before issue 24's reductions is printed beside it.
 * Needs kubectl on PATH; without it the suite reports nothing.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CliGitRemote } from '../src/git/cli-git-remote.js';
import type { QueueAuth } from '../src/git/queue-auth.js';
import { installProcessCounter } from './process-shim.js';
import { runScaffold, type WorkTreeVerifier, verifierFor } from '../src/runner/run-scaffold.js';
import { createWorkTreeVerifier } from '../src/workspace/verify-work-tree.js';
import { startGitDaemon } from '../test/support/git-server.js';
import { recordingLogger } from './concurrent-runs.js';
import { plainGitRun } from './runner-scale.js';
import { GENERATOR_VERSION, bareRepositoryWithClusters, benchCluster, platformRepository, renderInMemory, sealingCertificate } from './fixtures.js';
import { type Figure, type Suite, cpuMsWithChildren, exec, median, ms, onCleanup, tempDir, timeMs } from './support.js';

const RUNS = 3;
/**
 * git processes per run before the git-command reduction of issue 24, counted
 * by this suite's shim at that commit (it cannot be rerun from this tree).
 */
const BEFORE_COMMIT = 'eb82b48';
const BEFORE = { gitCli: 33, gitService: 43 } as const;
const EXISTING_CLUSTERS = 10;

/** What one run spent. */
interface RunCost {
  readonly kubectl: number;
  readonly cached: number;
  readonly git: number;
  /** The git commands in the order the run made them ("clone", "sparse-checkout", …), counted by the PATH shim. */
  readonly gitSequence: readonly string[];
  /** kubectl processes counted by the PATH shim (the verifier's own count is `kubectl`). */
  readonly kubectlSpawned: number;
  readonly cpuMs: number;
  readonly wallMs: number;
}

export const runProcessesSuite: Suite = async ({ log }) => {
  const tmp = await tempDir('run-processes');
  onCleanup(() => tmp.remove());
  try {
    await exec('kubectl', ['version', '--client=true'], { cwd: tmp.path, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: tmp.path } });
  } catch {
    log('run-processes: kubectl not on PATH; nothing measured');
    return [];
  }
  const { commit, files } = await platformRepository(join(tmp.path, 'platform'));
  const { pem } = sealingCertificate();
  const template = await renderInMemory(files, benchCluster('tmplcluster'), 'all', commit);
  await bareRepositoryWithClusters(join(tmp.path, 'srv', 'fleet.git'), template, EXISTING_CLUSTERS);
  const daemon = await startGitDaemon({ baseDir: join(tmp.path, 'srv') });
  onCleanup(() => daemon.stop());
  // After the daemon started: only what the runs themselves start is counted.
  const counter = await installProcessCounter(join(tmp.path, 'shims'));
  onCleanup(() => counter.uninstall());
  // As the service's runners run: the queue key shared (pass commits MAC'd, pushes fenced).
  const serviceAuth: QueueAuth = { key: randomBytes(32), shared: true, attempt: 1 };

  const once = async (name: string, buildCache: boolean, batchBuilds: boolean, queueAuth?: QueueAuth): Promise<RunCost> => {
    const events: Record<string, unknown>[] = [];
    const gate = verifierFor(createWorkTreeVerifier({ buildCache, batchBuilds }));
    let kubectl = 0;
    let cached = 0;
    const verify: WorkTreeVerifier = async (dir, cluster, signal) => {
      const report = await gate(dir, cluster, signal);
      kubectl += report.kustomizeBuilds?.run ?? 0;
      cached += report.kustomizeBuilds?.cached ?? 0;
      return report;
    };
    await counter.reset();
    const cpuBefore = cpuMsWithChildren();
    const wallMs = await timeMs(async () => {
      const result = await runScaffold(
        {
          git: new CliGitRemote({ logger: recordingLogger(events), ...(queueAuth ? { queueAuth } : {}) }),
          verify,
          logger: recordingLogger(events),
          workRoot: tmp.path,
        },
        { id: name, repositoryUrl: daemon.url('fleet.git'), cluster: benchCluster(name), certificatePem: pem, generatorVersion: GENERATOR_VERSION },
      );
      if (result.status !== 'succeeded') throw new Error(`run ${name} ended ${result.status}: ${result.message}`);
    });
    const cpuMs = cpuMsWithChildren() - cpuBefore;
    const spawned = await counter.read();
    const gitSequence = spawned.git.map((p) => p.command);
    return { kubectl, cached, git: gitSequence.length, gitSequence, kubectlSpawned: spawned.kubectl.length, cpuMs, wallMs };
  };

  await once('warm', true, true);
  const base: RunCost[] = [];
  const unbatched: RunCost[] = [];
  const cache: RunCost[] = [];
  const service: RunCost[] = [];
  const plain: { git: number; cpuMs: number }[] = [];
  const plainOnce = async (name: string) => {
    const infra = await renderInMemory(files, benchCluster(name), 'infrastructure', commit);
    const all = await renderInMemory(files, benchCluster(name), 'all', commit);
    const work = join(tmp.path, `plain-${name}`);
    await mkdir(work, { recursive: true });
    await counter.reset();
    const cpuBefore = cpuMsWithChildren();
    await plainGitRun(daemon.url('fleet.git'), work, infra, all, true);
    const cpuMs = cpuMsWithChildren() - cpuBefore;
    plain.push({ git: (await counter.read()).git.length, cpuMs });
  };
  // Interleaved, alternating which goes first, so load from elsewhere hits all alike.
  for (let i = 0; i < RUNS; i++) {
    const round = [
      async () => base.push(await once(`base-${i}`, false, false)),
      async () => unbatched.push(await once(`unbatched-${i}`, true, false)),
      async () => cache.push(await once(`cache-${i}`, true, true)),
      async () => service.push(await once(`svc-${i}`, true, true, serviceAuth)),
      () => plainOnce(`plain-${i}`),
    ];
    for (const step of i % 2 === 0 ? round : round.reverse()) await step();
  }
  counter.uninstall();
  await daemon.stop();
  const med = (runs: readonly RunCost[], key: Exclude<keyof RunCost, 'gitSequence'>) => median(runs.map((r) => r[key]));
  const hitRate = (runs: readonly RunCost[]) => {
    const built = med(runs, 'kubectl');
    const kept = med(runs, 'cached');
    return built + kept === 0 ? 0 : kept / (built + kept);
  };
  const plainGit = median(plain.map((p) => p.git));
  const plainCpu = median(plain.map((p) => p.cpuMs));
  log(
    `run-processes: per run, cache and batching off: ${med(base, 'kubectlSpawned')} kubectl, ${med(base, 'git')} git, ${ms(med(base, 'cpuMs'))} CPU; cache on, batching off: ${med(unbatched, 'kubectlSpawned')} kubectl, ${ms(med(unbatched, 'cpuMs'))} CPU; both on: ${med(cache, 'kubectlSpawned')} kubectl (${med(cache, 'cached')} cached), ${med(cache, 'git')} git, ${ms(med(cache, 'cpuMs'))} CPU; service key: ${med(service, 'git')} git, ${ms(med(service, 'cpuMs'))} CPU; plain git: ${plainGit} git, ${ms(plainCpu)} CPU`,
  );
  log(`run-processes: one run's git commands (CLI key), in order: ${cache[0]?.gitSequence.join(', ') ?? ''}`);
  log(`run-processes: one run's git commands (service key), in order: ${service[0]?.gitSequence.join(', ') ?? ''}`);
  const info = (name: string, measured: string, baseline: string, ratio: number | undefined): Figure => ({
    suite: 'run-processes',
    name,
    measured,
    baseline,
    ...(ratio !== undefined ? { ratio } : {}),
    target: 'none (information)',
    verdict: 'INFO',
  });
  const before = (key: keyof typeof BEFORE) => `; before ${BEFORE[key]} (${BEFORE_COMMIT})`;
  return [
    info(
      `kubectl processes per verified run (median of ${RUNS}, PATH shim)`,
      String(med(cache, 'kubectlSpawned')),
      `batching off ${med(unbatched, 'kubectlSpawned')}; cache off too ${med(base, 'kubectlSpawned')}`,
      med(cache, 'kubectlSpawned') / med(unbatched, 'kubectlSpawned'),
    ),
    info(
      'kustomize build cache hit rate per run',
      `${(hitRate(cache) * 100).toFixed(0)} % (${med(cache, 'cached')} of ${med(cache, 'cached') + med(cache, 'kubectl')})`,
      'cache off 0 %',
      undefined,
    ),
    info('git processes per run, CLI key (PATH shim)', String(med(cache, 'git')), `plain git ${plainGit}${before('gitCli')}`, med(cache, 'git') / plainGit),
    info(
      "git processes per run, service key (MAC'd, fenced)",
      String(med(service, 'git')),
      `plain git ${plainGit}${before('gitService')}`,
      med(service, 'git') / plainGit,
    ),
    info(
      'CPU per run, this process + git + kubectl',
      ms(med(cache, 'cpuMs')),
      `batching off ${ms(med(unbatched, 'cpuMs'))}; cache off too ${ms(med(base, 'cpuMs'))}`,
      med(cache, 'cpuMs') / med(unbatched, 'cpuMs'),
    ),
    info('CPU per run, service key', ms(med(service, 'cpuMs')), `plain git ${ms(plainCpu)}`, med(service, 'cpuMs') / plainCpu),
    info(
      'wall time per run',
      ms(med(cache, 'wallMs')),
      `batching off ${ms(med(unbatched, 'wallMs'))}; cache off too ${ms(med(base, 'wallMs'))}`,
      med(cache, 'wallMs') / med(unbatched, 'wallMs'),
    ),
  ];
};
