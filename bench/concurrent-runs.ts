/**
 * 50 scaffold runs at once (BENCH_CONCURRENT), for as many clusters, with the
 * runner's verify gate, into one repository served by `git daemon` on
 * 127.0.0.1. Each run is a scaffold-runner process of its own, as each runner
 * Job (or local executor child) is, with the service's queue key. Checks on the
 * remote afterwards: every run succeeded, the history holds two commits per
 * cluster (one per pass), it is linear (no merges), every commit a run reported
 * is on main, and every cluster directory holds the full rendered tree with its
 * SealedSecrets. Reports the wall time against one run alone, measured before
 * and after the concurrent phase into a repository of its own (target under
 * 5×), and against the CPU floor (target at most 1.25×, the floor half of issue
 * 24's), the load average beside each; where the cores stood idle; the same
 * runs at once, each into a repository of its own (concurrency without the
 * landing queue); and where the time went: steps, git commands, push retries,
 * and verifies run or skipped after a rebase.
 */
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { RUNNER_ENV } from '../src/run-contract/runner-inputs.js';
import { generateQueueKey } from '../src/git/queue-auth.js';
import { cpus, loadavg } from 'node:os';
import { basename, join } from 'node:path';
import type { Logger } from '../src/logger.js';
import { performance } from 'node:perf_hooks';
import { breakdown } from './run-breakdown.js';
import { installProcessCounter } from './process-shim.js';
import type { RunResult } from '../src/run/run-record.js';
import { startGitDaemon } from '../test/support/git-server.js';
import { bareRepositoryWithClusters, benchCluster, platformRepository, renderInMemory, sealingCertificate } from './fixtures.js';
import {
  type Suite,
  builtRunner,
  cpuMsWithChildren,
  git,
  idleSampler,
  median,
  ms,
  onCleanup,
  processesCpuMs,
  runProcess,
  tempDir,
  timeMs,
  verdict,
} from './support.js';

/** 50 by default (the issue's figure); BENCH_CONCURRENT overrides it for a quicker look. */
const CONCURRENT = Number(process.env['BENCH_CONCURRENT'] ?? 50);
/**
 * Runs alone on each side of the concurrent phase: this VM's speed drifts by
 * ±15-30% from one minute to the next, and a floor measured only before the
 * phase judged it by whatever minute that was (one run alone measured 0.72 to
 * 1.48 CPU-s on one evening). The floor is the median of both sides.
 */
const SINGLE_RUNS_EACH_SIDE = 3;
/** The issue's target: 50 concurrent runs take under 5× one run alone. */
const TARGET_RATIO = 5;
/**
 * git processes under concurrency before issue 24's reductions: this suite at
 * BENCH_CONCURRENT=10, run on the tree of that commit (the same shim, the
 * shared key), on this 2-core machine at load 25-30. The polls grow with the
 * wall time, so compare at a like load.
 */
const BEFORE = { commit: 'eb82b48', runs: 10, perRun: 156, lsRemote: 445 } as const;
/**
 * Issue 24's targets for the CPU floor: 50 runs take at most 1.25× it, and the
 * floor is half of what it was when the issue was filed. One run then, on this
 * machine: 6-7 CPU-s as a whole scaffold-runner process, start-up included (what
 * each run here is), and 2.70 CPU-s inside the bench's process, where the runs
 * of that day ran (50 runs on 2 cores: 150 s and 67.5 s at the least). The
 * floor is judged against the like run, the whole process (its low end), and
 * printed against both.
 */
const FLOOR_TARGET_RATIO = 1.25;
const ISSUE_WHOLE_RUN_CPU_MS = 6_000;
const ISSUE_IN_PROCESS_RUN_CPU_MS = 2_700;

/** A Logger that keeps every event's fields, with the bindings of its children. */
export function recordingLogger(events: Record<string, unknown>[], bindings: Record<string, unknown> = {}): Logger {
  const record = (fields: Record<string, unknown>, message: string) => events.push({ ...bindings, ...fields, message });
  return {
    // The remote logs each git command with its duration at debug: where the git time goes.
    debug: record,
    info: record,
    warn: record,
    error: record,
    child: (more) => recordingLogger(events, { ...bindings, ...more }),
  };
}

/** "3× a; 1× b": how often each string occurs, in order of first occurrence. */
function tally(items: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return [...counts].map(([item, n]) => `${n}× ${item}`).join('; ');
}

/** Reads `main:<path>` blobs from a bare repository in one `git cat-file --batch`. */
async function readBlobs(repo: string, paths: readonly string[]): Promise<Map<string, string | undefined>> {
  const { stdout } = await git(repo, ['cat-file', '--batch'], paths.map((p) => `main:${p}\n`).join(''));
  const buffer = Buffer.from(stdout, 'utf8');
  const out = new Map<string, string | undefined>();
  let offset = 0;
  for (const path of paths) {
    const end = buffer.indexOf(0x0a, offset);
    const header = buffer.subarray(offset, end).toString('utf8');
    offset = end + 1;
    const match = /^[0-9a-f]+ blob (\d+)$/.exec(header);
    if (!match) {
      out.set(path, undefined); // "<object> missing"
      continue;
    }
    const size = Number(match[1]);
    out.set(path, buffer.subarray(offset, offset + size).toString('utf8'));
    offset += size + 1;
  }
  return out;
}

export const concurrentRunsSuite: Suite = async ({ log }) => {
  const tmp = await tempDir('concurrent');
  const { commit, files } = await platformRepository(join(tmp.path, 'platform'));
  const { pem } = sealingCertificate();
  const template = await renderInMemory(files, benchCluster('tmplcluster'), 'all', commit);
  const expectedFiles = [...template.tree.keys()].map((path) => path.slice(template.gitopsPath.length + 1)).sort();
  const expectedSealed = expectedFiles.filter((rel) => /\/sealed\/sealed-[^/]+\.yaml$/.test(rel));

  const serveDir = join(tmp.path, 'srv');
  const bare = join(serveDir, 'shared.git');
  await bareRepositoryWithClusters(bare, template, 10);
  // The runs alone go into a repository of their own, as the concurrent ones start: 10 clusters (plus the runs alone so far).
  await bareRepositoryWithClusters(join(serveDir, 'alone.git'), template, 10);
  // Fifty runners at once outnumber git daemon's 32 connections, past which it kills one in flight (a push too): not what a forge does.
  const daemon = await startGitDaemon({ baseDir: serveDir, maxConnections: 0 });
  onCleanup(() => daemon.stop());
  const url = daemon.url('shared.git');
  // The server side (upload-pack, receive-pack) runs on the same cores: it is part of what a run costs the machine.
  // git-daemon itself (`git daemon` runs it as a child, and would count it again once it exits).
  const port = `--port=${new URL(url).port}`;
  const daemonCpuMs = () => processesCpuMs((argv) => argv.includes(port) && basename(argv[0] ?? '') === 'git-daemon');
  const events: Record<string, unknown>[] = [];
  // Every git process the runs start, by subcommand (after the daemon started: its upload-packs do not count).
  const counter = await installProcessCounter(join(tmp.path, 'shims'), ['git']);
  onCleanup(() => counter.uninstall());
  const runner = await builtRunner(log);
  // The queue key shared, as the service shares it with its runners: only then does a carrier take others' commits.
  const queueKey = generateQueueKey();
  // As a runner Job's scratch volume is (emptyDir medium Memory): tmpfs, where this machine has one.
  const memoryScratch = await mkdtemp(join('/dev/shm', 'bench-scratch-')).catch(() => undefined);
  if (memoryScratch !== undefined) onCleanup(() => rm(memoryScratch, { recursive: true, force: true }));
  /**
   * One run as a runner Job makes it: a scaffold-runner process of its own
   * (start-up included), the service's queue key in its environment, its log
   * lines kept as events. Runs in one process would share one event loop: with
   * fifty of them rendering at once it is busy 90-99% of the time while a core
   * stands idle, which no runner Job ever sees.
   */
  const scaffold = async (name: string, repository = url): Promise<RunResult> => {
    const resultFile = join(tmp.path, `result-${name}.json`);
    const { stdout, stderr, exit } = await runProcess(runner.command, runner.args, {
      cwd: tmp.path,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: tmp.path,
        TMPDIR: tmp.path,
        [RUNNER_ENV.id]: name,
        [RUNNER_ENV.repoUrl]: repository,
        [RUNNER_ENV.branch]: 'main',
        [RUNNER_ENV.cluster]: name,
        [RUNNER_ENV.domain]: benchCluster(name).domain,
        [RUNNER_ENV.region]: benchCluster(name).region,
        [RUNNER_ENV.certificatePem]: pem,
        [RUNNER_ENV.queueKey]: queueKey,
        [RUNNER_ENV.workDir]: join(tmp.path, `work-${name}`),
        [RUNNER_ENV.resultFile]: resultFile,
        ...(memoryScratch !== undefined ? { [RUNNER_ENV.scratchDir]: memoryScratch } : {}),
      },
    });
    for (const line of stdout.split('\n')) {
      if (line.startsWith('{')) events.push({ ...(JSON.parse(line) as Record<string, unknown>), run_id: name });
    }
    const result = await readFile(resultFile, 'utf8').catch(() => undefined);
    if (result === undefined) throw new Error(`scaffold-runner ${name} exited ${exit} without a result: ${stderr.trim().slice(-500)}`);
    return JSON.parse(result) as RunResult;
  };

  // Baseline: one run with a repository to itself (after an untimed warm-up), on each side of the concurrent phase.
  const alone: { readonly wallMs: number; readonly cpuMs: number }[] = [];
  const runsAlone = async (side: string) => {
    for (let i = 0; i < SINGLE_RUNS_EACH_SIDE; i++) {
      const cpuBefore = cpuMsWithChildren() + daemonCpuMs();
      const wallMs = await timeMs(() => scaffold(`alone-${side}-${i}`, daemon.url('alone.git')));
      // What one run costs the machine (this process, git, kubectl, the git daemon): 50 of them cannot finish before the cores have done that work 50 times.
      alone.push({ wallMs, cpuMs: cpuMsWithChildren() + daemonCpuMs() - cpuBefore });
    }
  };
  await scaffold('alone-warm', daemon.url('alone.git'));
  await runsAlone('before');
  const loadSingle = loadavg()[0]!;
  const single1 = breakdown(events.filter((e) => e['run_id'] === `alone-before-${SINGLE_RUNS_EACH_SIDE - 1}`));
  log(`concurrent-runs: one run alone, steps: ${single1.steps.join('; ')}`);
  const countCommits = async () => Number((await git(bare, ['rev-list', '--count', 'main'])).stdout.trim());
  const before = await countCommits();
  events.length = 0;
  const loadBefore = loadavg()[0]!;

  await counter.reset();
  const names = Array.from({ length: CONCURRENT }, (_, i) => `concurrent-${String(i + 1).padStart(2, '0')}`);
  let settled: PromiseSettledResult<RunResult>[] = [];
  const cpuAtStart = cpuMsWithChildren();
  const daemonAtStart = daemonCpuMs();
  const idle = idleSampler();
  const phaseStart = performance.now();
  const finishedAt: number[] = [];
  const wall = await timeMs(async () => {
    settled = await Promise.allSettled(names.map((name) => scaffold(name).finally(() => finishedAt.push(performance.now() - phaseStart))));
  });
  const idleSamples = idle.stop().map((s) => ({ ...s, atMs: s.atMs - phaseStart }));
  const concurrentDaemonMs = daemonCpuMs() - daemonAtStart;
  const concurrentCpuMs = cpuMsWithChildren() - cpuAtStart + concurrentDaemonMs;
  // A runner's git processes are its own children, not this process's.
  const gitSpawned = (await counter.read({ anyParent: true })).git;
  const loadAfter = loadavg()[0]!;
  // The runs alone after the phase log and verify too: kept out of the phase's breakdown.
  const concurrentEvents = events.splice(0);
  await runsAlone('after');
  // The same number of runs at once, each into a repository of its own: what the cores make of fifty runs
  // without the landing queue. Whatever the shared repository costs beyond this, coordination costs.
  const ownRepos = await Promise.all(
    names.map(async (name) => {
      await cp(join(serveDir, 'alone.git'), join(serveDir, `own-${name}.git`), { recursive: true });
      return daemon.url(`own-${name}.git`);
    }),
  );
  const ownCpuAtStart = cpuMsWithChildren() + daemonCpuMs();
  let ownSettled: PromiseSettledResult<RunResult>[] = [];
  const ownWall = await timeMs(async () => {
    ownSettled = await Promise.allSettled(names.map((name, i) => scaffold(`own-${name}`, ownRepos[i])));
  });
  const ownCpuMs = cpuMsWithChildren() + daemonCpuMs() - ownCpuAtStart;
  const ownSucceeded = ownSettled.filter((s) => s.status === 'fulfilled' && s.value.status === 'succeeded').length;
  events.splice(0, events.length, ...concurrentEvents);
  const singleMs = median(alone.map((run) => run.wallMs));
  const singleCpuMs = median(alone.map((run) => run.cpuMs));
  const floorMs = (CONCURRENT * singleCpuMs) / cpus().length;
  const issueFloorMs = (CONCURRENT * ISSUE_WHOLE_RUN_CPU_MS) / cpus().length;
  const issueInProcessFloorMs = (CONCURRENT * ISSUE_IN_PROCESS_RUN_CPU_MS) / cpus().length;
  const sideCpu = (side: number) => ms(median(alone.slice(side * SINGLE_RUNS_EACH_SIDE, (side + 1) * SINGLE_RUNS_EACH_SIDE).map((run) => run.cpuMs)));
  log(
    `concurrent-runs: one run alone ${ms(singleMs)} (median of ${alone.length}), ${ms(singleCpuMs)} CPU (median before the concurrent runs ${sideCpu(0)}, after ${sideCpu(1)}); ${CONCURRENT} runs need ${ms(floorMs)} on ${cpus().length} cores at the least`,
  );
  const gitByKind = new Map<string, number>();
  for (const p of gitSpawned) gitByKind.set(p.command, (gitByKind.get(p.command) ?? 0) + 1);
  const kinds = [...gitByKind].sort((a, b) => b[1] - a[1]);
  log(
    `concurrent-runs: git processes: ${gitSpawned.length} (${(gitSpawned.length / CONCURRENT).toFixed(1)} per run): ${kinds.map(([k, n]) => `${n}× ${k}`).join('; ')}`,
  );
  if (idleSamples.length > 0) {
    // Where cores had nothing to run, by tenth of the phase, beside when the runs finished.
    const idleShare = (from: number, to: number) => {
      const inside = idleSamples.filter((s) => s.atMs > from && s.atMs <= to);
      return inside.length === 0 ? 0 : inside.reduce((sum, s) => sum + s.idle, 0) / inside.length;
    };
    const tenths = Array.from({ length: 10 }, (_, i) => `${Math.round(100 * idleShare((i * wall) / 10, ((i + 1) * wall) / 10))}%`);
    // In the order the runs finished, so already sorted.
    const at = (q: number) => ms(finishedAt[Math.min(finishedAt.length - 1, Math.ceil(q * finishedAt.length) - 1)] ?? 0);
    const coreMs = (share: (s: (typeof idleSamples)[number]) => number) =>
      idleSamples.reduce((sum, s, i) => sum + share(s) * (s.atMs - (idleSamples[i - 1]?.atMs ?? 0)), 0) * cpus().length;
    log(
      `concurrent-runs: idle cores by tenth of the phase: ${tenths.join(' ')} (${ms(coreMs((s) => s.idle))} core-time in all, ${ms(coreMs((s) => s.iowait))} of it in I/O wait); runs finished: first ${at(1 / finishedAt.length)}, half ${at(0.5)}, 90% ${at(0.9)}, last ${at(1)}`,
    );
  }
  const failures = settled.flatMap((s, i) =>
    s.status === 'rejected'
      ? [`${names[i]}: ${s.reason instanceof Error ? s.reason.message : String(s.reason)}`]
      : s.value.status !== 'succeeded'
        ? [`${names[i]}: ${s.value.message}`]
        : [],
  );
  const succeeded = CONCURRENT - failures.length;
  log(
    `concurrent-runs: ${CONCURRENT} runs at once: ${succeeded} succeeded in ${ms(wall)}, ${ms(concurrentCpuMs)} CPU, ${ms(concurrentDaemonMs)} of it the git daemon's (${(concurrentCpuMs / (CONCURRENT * singleCpuMs)).toFixed(2)}× ${CONCURRENT} runs alone)`,
  );
  for (const failure of failures) log(`concurrent-runs: FAILED ${failure}`);
  log(
    `concurrent-runs: ${CONCURRENT} runs at once, each into a repository of its own: ${ownSucceeded} succeeded in ${ms(ownWall)}, ${ms(ownCpuMs)} CPU (${(ownCpuMs / (CONCURRENT * singleCpuMs)).toFixed(2)}× ${CONCURRENT} runs alone); sharing one repository cost ${ms(concurrentCpuMs - ownCpuMs)} CPU more (${ms((concurrentCpuMs - ownCpuMs) / CONCURRENT)} a run)`,
  );
  // Why pushes were turned down, and why queued commits were left for their owners: "3× reason; 1× other".
  const rejections = events.flatMap((e) =>
    e['push'] === 'rejected'
      ? (e['lines'] as string[]).map(
          (line) => `${Number(e['carrying']) > 0 ? 'carrying' : 'alone'}: ${line.replace(/^!\t\S+\t/, '').replace(/refs\/scaffold-queue\S+/, 'queue ref')}`,
        )
      : [],
  );
  const leftReasons = events.flatMap((e) => (e['push'] === 'left' ? (e['left'] as string[]).map((item) => item.replace(/^[^:]*: /, '')) : []));
  if (rejections.length > 0) log(`concurrent-runs: rejected push lines: ${tally(rejections)}`);
  if (leftReasons.length > 0) log(`concurrent-runs: queued commits left for their owners: ${tally(leftReasons)}`);

  const spent = breakdown(events);
  log(`concurrent-runs: steps summed over the runs: ${spent.steps.join('; ')}`);
  log(`concurrent-runs: git commands by time: ${spent.git.join('; ')}`);
  log(`concurrent-runs: verify gate ${spent.verifies}×; after a rebase: ${spent.reverifyRun} re-verified, ${spent.reverifySkipped} skipped`);
  const { pushesLanded, rejectedAttempts: retries, maxAttempts } = spent;
  const gaveUp = events.filter((e) => typeof e['message'] === 'string' && /overtaken by concurrent pushes/.test(e['message'])).length;

  // The remote, as git sees it.
  const problems: string[] = [];
  const added = (await countCommits()) - before;
  if (added !== 2 * CONCURRENT) problems.push(`main gained ${added} commits, expected ${2 * CONCURRENT}`);
  const merges = (await git(bare, ['rev-list', '--merges', 'main'])).stdout.trim();
  if (merges !== '') problems.push(`main has merge commits: ${merges.split('\n').length}`);
  const onMain = new Set((await git(bare, ['rev-list', 'main'])).stdout.trim().split('\n'));
  const trailers = (
    await git(bare, [
      'log',
      `-${2 * CONCURRENT + 5}`,
      '--format=%(trailers:key=Scaffold-Cluster,valueonly,separator=)%x09%(trailers:key=Scaffold-Pass,valueonly,separator=)',
      'main',
    ])
  ).stdout;
  const passesOf = new Map<string, string[]>();
  for (const line of trailers.split('\n').filter(Boolean)) {
    const [cluster = '', pass = ''] = line.split('\t').map((s) => s.trim());
    passesOf.set(cluster, [...(passesOf.get(cluster) ?? []), pass]);
  }
  const listed = (await git(bare, ['ls-tree', '-r', '--name-only', 'main', '--', 'clusters/'])).stdout.split('\n');
  const sealedPaths = names.flatMap((name) => expectedSealed.map((rel) => `clusters/${name}/${rel}`));
  const sealedBlobs = await readBlobs(bare, sealedPaths);
  for (const [i, name] of names.entries()) {
    const outcome = settled[i];
    if (outcome?.status === 'fulfilled') {
      for (const c of outcome.value.commits ?? []) if (!onMain.has(c.sha)) problems.push(`${name}: its ${c.pass} commit ${c.sha.slice(0, 12)} is not on main`);
    }
    const passes = (passesOf.get(name) ?? []).sort().join(',');
    if (passes !== 'all,infrastructure') problems.push(`${name}: commits on main for passes [${passes}], expected [all,infrastructure]`);
    const prefix = `clusters/${name}/`;
    const present = listed
      .filter((p) => p.startsWith(prefix))
      .map((p) => p.slice(prefix.length))
      .sort();
    const missing = expectedFiles.filter((rel) => !present.includes(rel));
    if (missing.length > 0) problems.push(`${name}: ${missing.length} files missing, e.g. ${missing.slice(0, 3).join(', ')}`);
    for (const rel of expectedSealed) {
      const text = sealedBlobs.get(`${prefix}${rel}`);
      if (text === undefined || !/^kind: SealedSecret$/m.test(text) || !/encryptedData:/.test(text))
        problems.push(`${name}: ${rel} is missing or not a SealedSecret`);
    }
  }
  for (const problem of problems.slice(0, 20)) log(`concurrent-runs: PROBLEM ${problem}`);
  log(
    `concurrent-runs: ${added} commits added, ${merges === '' ? 'no merges' : 'MERGES'}, ${pushesLanded} pushes landed, ${retries} races lost, ${spent.carriedCommits} commits carried by ${spent.carryingPushes} pushes, ${gaveUp} runs gave up (max ${maxAttempts} attempts for a push that landed)`,
  );
  await daemon.stop();
  await tmp.remove();

  return [
    {
      suite: 'concurrent-runs',
      name: `${CONCURRENT} runs at once into one repository: runs succeeded`,
      measured: `${succeeded}/${CONCURRENT}`,
      target: `${CONCURRENT}/${CONCURRENT}`,
      verdict: verdict(succeeded === CONCURRENT),
    },
    {
      suite: 'concurrent-runs',
      name: 'remote history: all commits, linear, nothing lost',
      measured:
        problems.length === 0
          ? `${added} commits, 0 merges, ${CONCURRENT} full trees + ${expectedSealed.length} SealedSecrets each`
          : `${problems.length} problem(s): ${problems[0]}`,
      target: `${2 * CONCURRENT} commits, linear, all trees`,
      verdict: verdict(problems.length === 0),
    },
    {
      suite: 'concurrent-runs',
      name: `wall time of ${CONCURRENT} concurrent runs (load ${loadBefore.toFixed(1)}→${loadAfter.toFixed(1)})`,
      measured: ms(wall),
      baseline: `1 run alone ${ms(singleMs)} (load ${loadSingle.toFixed(1)}; ×${CONCURRENT} serial ${ms(singleMs * CONCURRENT)})`,
      ratio: wall / singleMs,
      target: `< ${TARGET_RATIO}× one run`,
      verdict: verdict(wall / singleMs < TARGET_RATIO),
    },
    {
      suite: 'concurrent-runs',
      name: `wall time against the CPU floor (${CONCURRENT} × one run's CPU, the git daemon's included, / ${cpus().length} cores): what coordination costs`,
      measured: ms(wall),
      baseline: `floor ${ms(floorMs)} (one run ${ms(singleCpuMs)} CPU; the floor alone is ${(floorMs / singleMs).toFixed(1)}× one run)`,
      ratio: wall / floorMs,
      target: `≤ ${FLOOR_TARGET_RATIO}× the floor`,
      verdict: verdict(wall / floorMs <= FLOOR_TARGET_RATIO),
    },
    {
      suite: 'concurrent-runs',
      name: `CPU floor of ${CONCURRENT} runs, and what they used together`,
      measured: `floor ${ms(floorMs)}; the ${CONCURRENT} runs used ${ms(concurrentCpuMs)} CPU, ${ms(concurrentDaemonMs)} of it the git daemon's (${(concurrentCpuMs / (CONCURRENT * singleCpuMs)).toFixed(2)}× as much as alone)`,
      baseline: `floor when issue 24 was filed ${ms(issueFloorMs)} (one whole runner process ${ms(ISSUE_WHOLE_RUN_CPU_MS)} CPU, the git daemon's not counted; ${(floorMs / issueInProcessFloorMs).toFixed(2)}× its in-process floor of ${ms(issueInProcessFloorMs)}, a run that started no process)`,
      ratio: floorMs / issueFloorMs,
      target: '≤ 0.5× (halved)',
      verdict: verdict(floorMs / issueFloorMs <= 0.5),
    },
    {
      suite: 'concurrent-runs',
      name: `${CONCURRENT} runs at once, each into a repository of its own (no landing queue): what concurrency alone costs`,
      measured: `${ms(ownWall)}, ${ownSucceeded}/${CONCURRENT} succeeded; ${ms(ownCpuMs)} CPU (${(ownCpuMs / (CONCURRENT * singleCpuMs)).toFixed(2)}× as much as alone)`,
      baseline: `floor ${ms(floorMs)}; one repository for all: ${ms(wall)}, ${ms(concurrentCpuMs)} CPU`,
      ratio: ownWall / floorMs,
      target: 'none (information)',
      verdict: 'INFO',
    },
    {
      suite: 'concurrent-runs',
      name: 'git processes per run under concurrency (PATH shim)',
      measured: `${(gitSpawned.length / CONCURRENT).toFixed(1)}: ${['ls-remote', 'fetch', 'push'].map((k) => `${gitByKind.get(k) ?? 0} ${k}`).join(', ')} for ${2 * CONCURRENT} commits`,
      baseline: `before (${BEFORE.commit}, ${BEFORE.runs} runs): ${BEFORE.perRun} per run, ${BEFORE.lsRemote} ls-remote`,
      ...(CONCURRENT === BEFORE.runs ? { ratio: gitSpawned.length / CONCURRENT / BEFORE.perRun } : {}),
      target: 'none (information)',
      verdict: 'INFO',
    },
    {
      suite: 'concurrent-runs',
      name: 'verify gate after a rebase (skipped when only other clusters changed)',
      measured: `${spent.reverifyRun} re-verified, ${spent.reverifySkipped} skipped; ${spent.verifies} verifies in all`,
      target: 'none (information)',
      verdict: 'INFO',
    },
    {
      suite: 'concurrent-runs',
      name: 'push races lost, and commits carried by the landing queue',
      measured: `${retries} races lost; ${pushesLanded}/${2 * CONCURRENT} pass commits landed (max ${maxAttempts} attempts), ${spent.carriedCommits} of them carried by ${spent.carryingPushes} other runs' pushes${gaveUp > 0 ? `, ${gaveUp} runs gave up` : ''}`,
      target: 'none (information)',
      verdict: 'INFO',
    },
  ];
};
