/**
 * One full scaffold run (runScaffold with the real CliGitRemote, certificate
 * supplied so steps 4–5 are skipped) against bare repositories served by
 * `git daemon` on 127.0.0.1 holding 10, 100 and 1,000 existing clusters.
 *
 * Figures: time(1000)/time(10), and each size against a plain-git floor doing
 * the same partial + sparse clone, two commits of the same files and two
 * pushes with the git CLI directly. Optionally (kubectl on PATH) the same run
 * with the pre-push verify gate wired, as the scaffold-runner CLI does.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CliGitRemote } from '../src/git/cli-git-remote.js';
import type { RenderResult } from '../src/gitops/render-cluster.js';
import { silentLogger } from '../src/logger.js';
import { runScaffold, verifierFor } from '../src/runner/run-scaffold.js';
import { createWorkTreeVerifier } from '../src/workspace/verify-work-tree.js';
import { startGitDaemon } from '../test/support/git-server.js';
import { GENERATOR_VERSION, bareRepositoryWithClusters, benchCluster, platformRepository, renderInMemory, sealingCertificate } from './fixtures.js';
import { type Figure, type Suite, exec, git, median, ms, onCleanup, tempDir, timeMs, verdict } from './support.js';

const SIZES = [10, 100, 1000] as const;
/** The sizes the flatness figure compares. */
const FLAT_SIZES = [10, 1000] as const;
const RUNS = 5;
const VERIFY_RUNS = 2;
const FLAT_TARGET = 1.25;
const FLOOR_TARGET = 1.3;

/** Writes a rendered tree into a working copy (the floor's stand-in for the render step). */
async function writeFiles(root: string, tree: ReadonlyMap<string, string>): Promise<void> {
  for (const [path, content] of tree) {
    const file = join(root, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

/**
 * The floor: what any scaffold run must at least do, with git directly. Same
 * clone flags and sparse paths as CliGitRemote, the same two trees committed
 * (pre-rendered outside the timing), two pushes, the working copy removed.
 */
export async function plainGitRun(url: string, work: string, infra: RenderResult, all: RenderResult, sparseIndex = false): Promise<void> {
  const dir = join(work, 'repo');
  const path = infra.gitopsPath;
  await git(work, ['clone', '--quiet', '--filter=blob:none', '--no-checkout', '--single-branch', '--no-tags', '--branch', 'main', '--', url, dir]);
  await git(dir, ['sparse-checkout', 'set', '--cone', ...(sparseIndex ? ['--sparse-index'] : []), '--', 'base', 'clusters/development', path]);
  await git(dir, ['checkout', '--quiet', 'main', '--']);
  for (const [pass, result] of [
    ['infrastructure', infra],
    ['all', all],
  ] as const) {
    await writeFiles(dir, result.tree);
    await git(dir, ['add', '--all', '--', path]);
    await git(dir, ['commit', '--quiet', '--no-verify', `--message=Scaffold ${result.cluster.name}: ${pass}`]);
    await git(dir, ['push', '--quiet', '--no-verify', 'origin', 'HEAD:refs/heads/main']);
  }
  await rm(dir, { recursive: true, force: true });
}

export const runnerScaleSuite: Suite = async ({ log }) => {
  const tmp = await tempDir('runner-scale');
  const { commit, files } = await platformRepository(join(tmp.path, 'platform'));
  const { pem } = sealingCertificate();
  const template = await renderInMemory(files, benchCluster('tmplcluster'), 'all', commit);

  const serveDir = join(tmp.path, 'srv');
  for (const size of SIZES) {
    const elapsed = await timeMs(() => bareRepositoryWithClusters(join(serveDir, `clusters-${size}.git`), template, size));
    const objects = (await git(join(serveDir, `clusters-${size}.git`), ['count-objects', '-v'])).stdout.match(/size-pack: (\d+)/)?.[1];
    log(`runner-scale: repository with ${size} existing clusters (${template.tree.size * size} files, pack ${objects ?? '?'} KiB) made in ${ms(elapsed)}`);
  }
  const daemon = await startGitDaemon({ baseDir: serveDir });
  onCleanup(() => daemon.stop());

  const remote = new CliGitRemote({});
  let verifyWired: ReturnType<typeof verifierFor> | undefined;
  try {
    await exec('kubectl', ['version', '--client=true'], { cwd: tmp.path, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: tmp.path } });
    verifyWired = verifierFor(createWorkTreeVerifier());
  } catch {
    log('runner-scale: kubectl not on PATH; the run with verify is not measured');
  }

  const scaffold = async (size: number, name: string, verify: boolean) => {
    const result = await runScaffold(
      { git: remote, logger: silentLogger, workRoot: tmp.path, ...(verify && verifyWired ? { verify: verifyWired } : {}) },
      { id: name, repositoryUrl: daemon.url(`clusters-${size}.git`), cluster: benchCluster(name), certificatePem: pem, generatorVersion: GENERATOR_VERSION },
    );
    if (result.status !== 'succeeded' || result.commits?.length !== 2)
      throw new Error(`run ${name} ended ${result.status} with ${result.commits?.length ?? 0} commits: ${result.message}`);
  };

  // The floor's trees are rendered before the clock starts: rendering is part of
  // what the runner adds over plain git.
  const floorRun = async (size: number, name: string, sparseIndex: boolean): Promise<number> => {
    const infra = await renderInMemory(files, benchCluster(name), 'infrastructure', commit);
    const all = await renderInMemory(files, benchCluster(name), 'all', commit);
    const work = join(tmp.path, name);
    await mkdir(work);
    return timeMs(() => plainGitRun(daemon.url(`clusters-${size}.git`), work, infra, all, sparseIndex));
  };

  const runner = new Map<number, number[]>(SIZES.map((size) => [size, []]));
  const floor = new Map<number, number[]>(SIZES.map((size) => [size, []]));
  // The same floor with a sparse index (the index holds only the sparse cone,
  // not one entry per file of every other cluster): what the floor could be.
  const sparseIndexFloor = new Map<number, number[]>(FLAT_SIZES.map((size) => [size, []]));
  const verified = new Map<number, number[]>();
  // Round-robin: each round runs every size, runner and floor back to back, so
  // load from elsewhere on the machine hits all sizes and both sides alike; odd
  // rounds go in the opposite order so that drift within a round cancels.
  // Round -1 is an untimed warm-up.
  for (let round = -1; round < RUNS; round++) {
    const tag = round < 0 ? 'warm' : String(round);
    const forward = round % 2 === 0;
    for (const size of forward ? SIZES : [...SIZES].reverse()) {
      const runnerOnce = () => timeMs(() => scaffold(size, `run-${size}-${tag}`, false));
      const floorOnce = () => floorRun(size, `floor-${size}-${tag}`, false);
      let t: number;
      let f: number;
      if (forward) {
        t = await runnerOnce();
        f = await floorOnce();
      } else {
        f = await floorOnce();
        t = await runnerOnce();
      }
      if (round >= 0) {
        runner.get(size)!.push(t);
        floor.get(size)!.push(f);
      }
      if ((FLAT_SIZES as readonly number[]).includes(size)) {
        const si = await floorRun(size, `sparse-index-${size}-${tag}`, true);
        if (round >= 0) sparseIndexFloor.get(size)!.push(si);
      }
    }
  }
  for (const size of SIZES) {
    const r = runner.get(size)!;
    const f = floor.get(size)!;
    log(
      `runner-scale: ${size} clusters: runScaffold ${ms(median(r))}, plain git ${ms(median(f))} (medians of ${RUNS}; samples ${r.map((x) => x.toFixed(0)).join(' ')} / ${f.map((x) => x.toFixed(0)).join(' ')} ms)`,
    );
  }
  log(`runner-scale: plain git with --sparse-index: ${FLAT_SIZES.map((size) => `${size} clusters ${ms(median(sparseIndexFloor.get(size)!))}`).join(', ')}`);
  if (verifyWired) {
    for (const size of FLAT_SIZES) {
      const samples: number[] = [];
      for (let i = 0; i < VERIFY_RUNS; i++) samples.push(await timeMs(() => scaffold(size, `verified-${size}-${i}`, true)));
      verified.set(size, samples);
      log(`runner-scale: ${size} clusters with verify: runScaffold ${ms(median(samples))} (median of ${VERIFY_RUNS})`);
    }
  }
  await daemon.stop();
  await tmp.remove();

  const at = (m: Map<number, number[]>, size: number) => median(m.get(size) ?? []);
  // Ratios are medians of per-round ratios (paired samples taken back to back),
  // which cancels load that comes and goes on a shared machine better than a
  // ratio of two medians would.
  const paired = (a: readonly number[], b: readonly number[]) => median(a.map((x, i) => x / (b[i] as number)));
  const [small, large] = FLAT_SIZES;
  const flat = paired(runner.get(large)!, runner.get(small)!);
  const floorFlat = paired(floor.get(large)!, floor.get(small)!);
  const figures: Figure[] = [
    {
      suite: 'runner-scale',
      name: `run time ${large} clusters / ${small} clusters`,
      measured: `${ms(at(runner, large))} / ${ms(at(runner, small))}`,
      baseline: `plain git ${ms(at(floor, large))} / ${ms(at(floor, small))}: ${floorFlat.toFixed(2)}×`,
      ratio: flat,
      target: `ratio ≤ ${FLAT_TARGET}`,
      verdict: verdict(flat <= FLAT_TARGET),
    },
  ];
  for (const size of SIZES) {
    const r = paired(runner.get(size)!, floor.get(size)!);
    figures.push({
      suite: 'runner-scale',
      name: `runScaffold vs plain git, ${size} clusters (median of ${RUNS})`,
      measured: ms(at(runner, size)),
      baseline: `plain git ${ms(at(floor, size))}`,
      ratio: r,
      target: `ratio ≤ ${FLOOR_TARGET}`,
      verdict: verdict(r <= FLOOR_TARGET),
    });
  }
  const indexFlat = paired(sparseIndexFloor.get(large)!, sparseIndexFloor.get(small)!);
  figures.push({
    suite: 'runner-scale',
    name: `plain git with --sparse-index, ${large} clusters / ${small} clusters`,
    measured: `${ms(at(sparseIndexFloor, large))} / ${ms(at(sparseIndexFloor, small))}`,
    baseline: `without ${floorFlat.toFixed(2)}×`,
    ratio: indexFlat,
    target: 'none (information)',
    verdict: 'INFO',
  });
  for (const [size, samples] of verified) {
    figures.push({
      suite: 'runner-scale',
      name: `runScaffold with verify (kubectl kustomize), ${size} clusters (median of ${VERIFY_RUNS})`,
      measured: ms(median(samples)),
      baseline: `no verify ${ms(at(runner, size))}`,
      ratio: median(samples) / at(runner, size),
      target: 'none (information)',
      verdict: 'INFO',
    });
  }
  return figures;
};
