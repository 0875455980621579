/**
 * 50 scaffold runs at once (BENCH_CONCURRENT), for as many clusters, with the
 * runner's verify gate, into one repository served by
 * `git daemon` on 127.0.0.1. Checks on the remote afterwards: every run
 * succeeded, the history holds two commits per cluster (one per pass), it is
 * linear (no merges), every commit a run reported is on main, and every
 * cluster directory holds the full rendered tree with its SealedSecrets.
 * Reports the wall time against one run alone, measured before and after the
 * concurrent phase into a repository of its own (target under 5×), and against
 * the CPU floor (target at most 1.25×, the floor half of issue 24's), the load average beside each, and where the time went: steps,
 * git commands, push retries, and verifies run or skipped after a rebase.
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { CliGitRemote } from '../src/git/cli-git-remote.js';
import type { Logger } from '../src/logger.js';
import { performance } from 'node:perf_hooks';
import { createWorkTreeVerifier } from '../src/workspace/verify-work-tree.js';
import { runScaffold, verifierFor, type WorkTreeVerifier } from '../src/runner/run-scaffold.js';
import { breakdown } from './run-breakdown.js';
import { installProcessCounter } from './process-shim.js';
import type { RunResult } from '../src/run/run-record.js';
import { startGitDaemon } from '../test/support/git-server.js';
import { GENERATOR_VERSION, bareRepositoryWithClusters, benchCluster, platformRepository, renderInMemory, sealingCertificate } from './fixtures.js';
import { type Suite, cpuMsWithChildren, git, median, ms, onCleanup, processesCpuMs, tempDir, timeMs, verdict } from './support.js';

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
 * floor is half of what it was when the issue was filed (one run then: 2.70 s
 * CPU on this machine, so 50 runs on 2 cores needed 67.5 s at the least).
 */
const FLOOR_TARGET_RATIO = 1.25;
const ISSUE_RUN_CPU_MS = 2_700;

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
  const daemon = await startGitDaemon({ baseDir: serveDir });
  onCleanup(() => daemon.stop());
  const url = daemon.url('shared.git');
  // The server side (upload-pack, receive-pack) runs on the same cores: it is part of what a run costs the machine.
  // git-daemon itself (`git daemon` runs it as a child, and would count it again once it exits).
  const port = `--port=${new URL(url).port}`;
  const daemonCpuMs = () => processesCpuMs((argv) => argv.includes(port) && basename(argv[0] ?? '') === 'git-daemon');
  const events: Record<string, unknown>[] = [];
  // The remote's own log says every time a push lost a race and was rebased, failed runs included.
  // The queue key shared, as the service shares it with its runners: only then does a carrier take others' commits.
  const remote = new CliGitRemote({ logger: recordingLogger(events), queueAuth: { key: randomBytes(32), shared: true, attempt: 1 } });
  // Every git process the runs start, by subcommand (after the daemon started: its upload-packs do not count).
  const counter = await installProcessCounter(join(tmp.path, 'shims'), ['git']);
  onCleanup(() => counter.uninstall());

  // The production gate (the runner's verifier), timed.
  const gate = verifierFor(createWorkTreeVerifier());
  const verifyMs: number[] = [];
  const verify: WorkTreeVerifier = async (dir, cluster, signal) => {
    const started = performance.now();
    try {
      return await gate(dir, cluster, signal);
    } finally {
      verifyMs.push(performance.now() - started);
    }
  };
  const scaffold = (name: string, repository = url): Promise<RunResult> =>
    runScaffold(
      { git: remote, verify, logger: recordingLogger(events), workRoot: tmp.path },
      { id: name, repositoryUrl: repository, cluster: benchCluster(name), certificatePem: pem, generatorVersion: GENERATOR_VERSION },
    );

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
  const single1 = breakdown(
    events.filter((e) => e['run_id'] === `alone-before-${SINGLE_RUNS_EACH_SIDE - 1}`),
    [],
  );
  log(`concurrent-runs: one run alone, steps: ${single1.steps.join('; ')}`);
  const countCommits = async () => Number((await git(bare, ['rev-list', '--count', 'main'])).stdout.trim());
  const before = await countCommits();
  events.length = 0;
  verifyMs.length = 0;
  const loadBefore = loadavg()[0]!;

  await counter.reset();
  const names = Array.from({ length: CONCURRENT }, (_, i) => `concurrent-${String(i + 1).padStart(2, '0')}`);
  let settled: PromiseSettledResult<RunResult>[] = [];
  const cpuAtStart = cpuMsWithChildren();
  const daemonAtStart = daemonCpuMs();
  const wall = await timeMs(async () => {
    settled = await Promise.allSettled(names.map((name) => scaffold(name)));
  });
  const concurrentDaemonMs = daemonCpuMs() - daemonAtStart;
  const concurrentCpuMs = cpuMsWithChildren() - cpuAtStart + concurrentDaemonMs;
  const gitSpawned = (await counter.read()).git;
  counter.uninstall();
  const loadAfter = loadavg()[0]!;
  // The runs alone after the phase log and verify too: kept out of the phase's breakdown.
  const concurrentEvents = events.splice(0);
  const concurrentVerifyMs = verifyMs.splice(0);
  await runsAlone('after');
  events.splice(0, events.length, ...concurrentEvents);
  verifyMs.splice(0, verifyMs.length, ...concurrentVerifyMs);
  const singleMs = median(alone.map((run) => run.wallMs));
  const singleCpuMs = median(alone.map((run) => run.cpuMs));
  const floorMs = (CONCURRENT * singleCpuMs) / cpus().length;
  const issueFloorMs = (CONCURRENT * ISSUE_RUN_CPU_MS) / cpus().length;
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

  const spent = breakdown(events, verifyMs);
  log(`concurrent-runs: steps summed over the runs: ${spent.steps.join('; ')}`);
  log(`concurrent-runs: git commands by time: ${spent.git.join('; ')}`);
  log(
    `concurrent-runs: verify gate ${spent.verifies}× (${(spent.verifyMs / 1000).toFixed(1)} s summed); after a rebase: ${spent.reverifyRun} re-verified, ${spent.reverifySkipped} skipped`,
  );
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
      baseline: `floor when issue 24 was filed ${ms(issueFloorMs)} (one run ${ms(ISSUE_RUN_CPU_MS)} CPU, the git daemon's not counted)`,
      ratio: floorMs / issueFloorMs,
      target: '≤ 0.5× (halved)',
      verdict: verdict(floorMs / issueFloorMs <= 0.5),
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
      measured: `${spent.reverifyRun} re-verified, ${spent.reverifySkipped} skipped; ${spent.verifies} verifies in all, ${(spent.verifyMs / 1000).toFixed(1)} s summed`,
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
