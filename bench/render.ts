/**
 * Render + seal one cluster in process: renderCluster with pass `all` and a
 * 4096-bit certificate, over the reference platform in memory and on disk.
 * Baseline: copying the reference environment with `cp -r` (spawned), which
 * is the least a "make a new cluster directory" could cost.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { FsRepoReader } from '../src/git/fs-repo-reader.js';
import { renderCluster, type RenderOptions } from '../src/gitops/render-cluster.js';
import { memoryRepoReader } from '../src/gitops/repo-reader.js';
import { GENERATOR_VERSION, benchCluster, platformRepository, sealingCertificate } from './fixtures.js';
import { type Figure, type Suite, exec, median, ms, p95, sample, tempDir, timeMs, verdict } from './support.js';

const ITERATIONS = 60;
const WARMUP = 10;
const CP_ITERATIONS = 20;
const TARGET_MS = 100;

export const renderSuite: Suite = async ({ log }) => {
  const dir = await tempDir('render');
  const repo = join(dir.path, 'repo');
  const { commit, files } = await platformRepository(repo);
  log(`render: platform repository with ${files.size} files; generating a 4096-bit sealing key`);
  const certificate = sealingCertificate().parsed;
  const options = (i: number): RenderOptions => ({
    cluster: benchCluster(`bench-render-${Math.abs(i)}`),
    pass: 'all',
    certificate,
    random: (size) => randomBytes(size),
    generatorVersion: GENERATOR_VERSION,
    platformCommit: commit,
  });

  const memory = memoryRepoReader(files);
  let fileCount = 0;
  let sealedCount = 0;
  const inMemory = await sample(ITERATIONS, WARMUP, async (i) => {
    const result = await renderCluster(memory, options(i));
    fileCount = result.tree.size;
    sealedCount = result.credentials.length;
  });
  log(`render: in memory ${ms(median(inMemory))} median over ${ITERATIONS} (${fileCount} files, ${sealedCount} credentials sealed)`);

  const onDisk = new FsRepoReader(repo);
  const fromDisk = await sample(ITERATIONS, WARMUP, (i) => renderCluster(onDisk, options(i)));
  log(`render: from disk ${ms(median(fromDisk))} median over ${ITERATIONS}`);

  // Baseline: `cp -r` of the reference environment, spawned like git is; the
  // previous copy is removed before each one, outside the timed part.
  const target = join(repo, 'clusters', 'x');
  const copyEnv = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
  const cleanCopies: number[] = [];
  for (let i = -3; i < CP_ITERATIONS; i++) {
    await rm(target, { recursive: true, force: true });
    const elapsed = await timeMs(() => exec('cp', ['-r', 'clusters/development', 'clusters/x'], { cwd: repo, env: copyEnv }));
    if (i >= 0) cleanCopies.push(elapsed);
  }
  const cp = median(cleanCopies);
  log(`render: cp -r baseline ${ms(cp)} median over ${CP_ITERATIONS}`);
  await dir.remove();

  const figures: Figure[] = [];
  for (const [label, samples] of [
    ['render + seal, memoryRepoReader', inMemory],
    ['render + seal, FsRepoReader', fromDisk],
  ] as const) {
    figures.push({
      suite: 'render',
      name: `${label}: median (p95)`,
      measured: `${ms(median(samples))} (p95 ${ms(p95(samples))})`,
      baseline: `cp -r ${ms(cp)}`,
      ratio: median(samples) / cp,
      // "Well under 100 ms" is about the typical render; p95 is shown for the tail.
      target: `median < ${TARGET_MS} ms`,
      verdict: verdict(median(samples) < TARGET_MS),
    });
  }
  return figures;
};
