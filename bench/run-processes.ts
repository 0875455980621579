/**
 * What one verified scaffold run spawns, as the scaffold-runner runs it (one
 * verifier a run, so the kustomize build cache lives for the run's two
 * verifies): kubectl processes, git commands, the cache's hit rate and the CPU
 * of this process and its children per run. The baseline, measured in the same
 * suite and interleaved run by run, is the same run with the cache off.
 * Needs kubectl on PATH; without it the suite reports nothing.
 */
import { join } from 'node:path';
import { CliGitRemote } from '../src/git/cli-git-remote.js';
import { runScaffold, type WorkTreeVerifier, verifierFor } from '../src/runner/run-scaffold.js';
import { createWorkTreeVerifier } from '../src/workspace/verify-work-tree.js';
import { startGitDaemon } from '../test/support/git-server.js';
import { recordingLogger } from './concurrent-runs.js';
import { GENERATOR_VERSION, bareRepositoryWithClusters, benchCluster, platformRepository, renderInMemory, sealingCertificate } from './fixtures.js';
import { type Figure, type Suite, cpuMsWithChildren, exec, median, ms, onCleanup, tempDir, timeMs } from './support.js';

const RUNS = 3;
const EXISTING_CLUSTERS = 10;

/** What one run spent. */
interface RunCost {
  readonly kubectl: number;
  readonly cached: number;
  readonly git: number;
  /** The git commands in the order the run made them ("clone", "sparse-checkout", …). */
  readonly gitSequence: readonly string[];
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

  const once = async (name: string, buildCache: boolean): Promise<RunCost> => {
    const events: Record<string, unknown>[] = [];
    const gate = verifierFor(createWorkTreeVerifier({ buildCache }));
    let kubectl = 0;
    let cached = 0;
    const verify: WorkTreeVerifier = async (dir, cluster, signal) => {
      const report = await gate(dir, cluster, signal);
      kubectl += report.kustomizeBuilds?.run ?? 0;
      cached += report.kustomizeBuilds?.cached ?? 0;
      return report;
    };
    const cpuBefore = cpuMsWithChildren();
    const wallMs = await timeMs(async () => {
      const result = await runScaffold(
        { git: new CliGitRemote({ logger: recordingLogger(events) }), verify, logger: recordingLogger(events), workRoot: tmp.path },
        { id: name, repositoryUrl: daemon.url('fleet.git'), cluster: benchCluster(name), certificatePem: pem, generatorVersion: GENERATOR_VERSION },
      );
      if (result.status !== 'succeeded') throw new Error(`run ${name} ended ${result.status}: ${result.message}`);
    });
    const gitSequence = events.filter((e) => e['message'] === 'git').map((e) => String(e['git']));
    return { kubectl, cached, git: gitSequence.length, gitSequence, cpuMs: cpuMsWithChildren() - cpuBefore, wallMs };
  };

  await once('warm', true);
  const base: RunCost[] = [];
  const cache: RunCost[] = [];
  // Interleaved, alternating which goes first, so load from elsewhere hits both alike.
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      base.push(await once(`base-${i}`, false));
      cache.push(await once(`cache-${i}`, true));
    } else {
      cache.push(await once(`cache-${i}`, true));
      base.push(await once(`base-${i}`, false));
    }
  }
  await daemon.stop();
  const med = (runs: readonly RunCost[], key: Exclude<keyof RunCost, 'gitSequence'>) => median(runs.map((r) => r[key]));
  const hitRate = (runs: readonly RunCost[]) => {
    const built = med(runs, 'kubectl');
    const kept = med(runs, 'cached');
    return built + kept === 0 ? 0 : kept / (built + kept);
  };
  log(`run-processes: per run, cache off: ${med(base, 'kubectl')} kubectl, ${med(base, 'git')} git, ${ms(med(base, 'cpuMs'))} CPU; cache on: ${med(cache, 'kubectl')} kubectl (${med(cache, 'cached')} cached), ${med(cache, 'git')} git, ${ms(med(cache, 'cpuMs'))} CPU`);
  log(`run-processes: one run's git commands, in order: ${cache[0]?.gitSequence.join(', ') ?? ''}`);
  const info = (name: string, measured: string, baseline: string, ratio: number | undefined): Figure => ({
    suite: 'run-processes',
    name,
    measured,
    baseline,
    ...(ratio !== undefined ? { ratio } : {}),
    target: 'none (information)',
    verdict: 'INFO',
  });
  return [
    info(`kubectl processes per verified run (median of ${RUNS})`, String(med(cache, 'kubectl')), `cache off ${med(base, 'kubectl')}`, med(cache, 'kubectl') / med(base, 'kubectl')),
    info('kustomize build cache hit rate per run', `${(hitRate(cache) * 100).toFixed(0)} % (${med(cache, 'cached')} of ${med(cache, 'cached') + med(cache, 'kubectl')})`, 'cache off 0 %', undefined),
    info('git commands per run', String(med(cache, 'git')), `cache off ${med(base, 'git')}`, med(cache, 'git') / med(base, 'git')),
    info('CPU per run, this process + git + kubectl', ms(med(cache, 'cpuMs')), `cache off ${ms(med(base, 'cpuMs'))}`, med(cache, 'cpuMs') / med(base, 'cpuMs')),
    info('wall time per run', ms(med(cache, 'wallMs')), `cache off ${ms(med(base, 'wallMs'))}`, med(cache, 'wallMs') / med(base, 'wallMs')),
  ];
};
