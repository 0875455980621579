/**
 * `upgrade --dry-run` over a fleet of generated clusters (1,000 by default,
 * BENCH_FLEET_CLUSTERS to change it): the reference environment's overlay
 * patch is edited and committed, then every cluster is planned again from it
 * through upgradeWorkTree, as `generate-gitops-env upgrade --dry-run` does
 * (one worker thread per core). Wall time and CPU time are both printed: on a
 * machine shared with other work the CPU time says what the run itself costs.
 *
 * Baseline, measured in the same run: the obvious way, one renderCluster per
 * cluster over a fresh FsRepoReader of the work tree (so base/ and the
 * reference are read and parsed again for every cluster), timed over a sample
 * of the fleet and scaled to its size. The ratio is shared / obvious.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { upgradeWorkTree } from '../src/workspace/upgrade-work-tree.js';
import { FsRepoReader } from '../src/git/fs-repo-reader.js';
import { renderCluster } from '../src/gitops/render-cluster.js';
import { parseProvenance } from '../src/gitops/provenance.js';
import { GENERATOR_VERSION, fleetBehindReference } from './fixtures.js';
import { type Figure, type Suite, ms, tempDir, verdict } from './support.js';

const TARGET_S = 60;
const BASELINE_SAMPLE = 50;

export const upgradeSuite: Suite = async ({ log }) => {
  const count = Number(process.env['BENCH_FLEET_CLUSTERS'] ?? 1000);
  const dir = await tempDir('upgrade');
  const bare = join(dir.path, 'fleet.git');
  const repo = join(dir.path, 'work');
  // The platform changes: the reference's carried-over patch is edited, so every cluster is behind.
  await fleetBehindReference(dir.path, bare, repo, count, (m) => log(`upgrade: ${m}`));

  log(`upgrade: upgrade --dry-run over ${count} clusters`);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const outcomes = await upgradeWorkTree(repo, { dryRun: true, generatorVersion: GENERATOR_VERSION });
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  // CPU time of this process and its worker threads: what the run costs on an idle machine, whatever else shares it.
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const changed = outcomes.filter((o) => o.status === 'changed' && o.modified.some((p) => p.endsWith('/apps/tcr-api-replicas.yaml'))).length;
  const failed = outcomes.filter((o) => o.status === 'failed');
  if (failed.length > 0) throw new Error(`upgrade failed for ${failed.length} cluster(s), e.g. ${failed[0]!.name}: ${failed[0]!.message ?? ''}`);
  if (changed !== count) throw new Error(`expected all ${count} clusters to change, ${changed} did`);
  const rate = count / (elapsed / 1000);
  log(`upgrade: ${count} clusters in ${ms(elapsed)} (${ms(cpuMs)} CPU), ${rate.toFixed(1)} clusters/s; all ${changed} would change, sealed credentials kept`);

  // Baseline: a fresh reader and a full render per cluster, over a sample.
  const reader = () => new FsRepoReader(repo);
  const names = outcomes.slice(0, BASELINE_SAMPLE).map((o) => o.name);
  const baseStarted = performance.now();
  const baseCpuBefore = process.cpuUsage();
  for (const name of names) {
    const provenance = parseProvenance(await reader().read(`clusters/${name}/provenance.yaml`))!;
    await renderCluster(reader(), {
      cluster: provenance.cluster,
      pass: provenance.pass,
      random: (size) => randomBytes(size),
      generatorVersion: GENERATOR_VERSION,
    });
  }
  const perCluster = (performance.now() - baseStarted) / names.length;
  const baseCpu = process.cpuUsage(baseCpuBefore);
  const baseCpuPerCluster = (baseCpu.user + baseCpu.system) / 1000 / names.length;
  const baseline = perCluster * count;
  log(
    `upgrade: obvious way ${ms(perCluster)} (${ms(baseCpuPerCluster)} CPU) per cluster over ${names.length}, ${(1000 / perCluster).toFixed(1)} clusters/s, ` +
      `${ms(baseline)} scaled to ${count}; CPU per cluster shared / obvious = ${(cpuMs / count / baseCpuPerCluster).toFixed(2)}`,
  );
  await dir.remove();

  return [
    {
      suite: 'upgrade',
      name: `upgrade --dry-run, ${count} clusters (${rate.toFixed(1)} clusters/s)`,
      measured: `${ms(elapsed)} (CPU ${ms(cpuMs)})`,
      baseline: `render each from a fresh reader ${ms(baseline)} (CPU ${ms(baseCpuPerCluster * count)}, ${(1000 / perCluster).toFixed(1)} clusters/s)`,
      ratio: elapsed / baseline,
      target: `< ${TARGET_S} s for 1000`,
      verdict: verdict(elapsed / 1000 < (TARGET_S * count) / 1000),
    } satisfies Figure,
  ];
};
