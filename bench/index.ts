/**
 * `npm run bench [suite ...]`: runs the benchmark suites in order (render,
 * runner-scale, run-processes, concurrent-runs, api, upgrade, rollout), or the ones named, and prints every
 * figure beside the baseline measured in the same run, the ratio, the target
 * and PASS/MISS. Benchmarks report, they don't gate: the exit code is 0 even on
 * MISS, and non-zero only when a suite could not run.
 */
import { cpus, loadavg } from 'node:os';
import { apiSuite } from './api.js';
import { concurrentRunsSuite } from './concurrent-runs.js';
import { renderSuite } from './render.js';
import { rolloutSuite } from './rollout.js';
import { runProcessesSuite } from './run-processes.js';
import { runnerScaleSuite } from './runner-scale.js';
import { upgradeSuite } from './upgrade.js';
import { type Figure, type Suite, ratio, runCleanups } from './support.js';

const SUITES: readonly (readonly [string, Suite])[] = [
  ['render', renderSuite],
  ['runner-scale', runnerScaleSuite],
  ['run-processes', runProcessesSuite],
  ['concurrent-runs', concurrentRunsSuite],
  ['api', apiSuite],
  ['upgrade', upgradeSuite],
  ['rollout', rolloutSuite],
];

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => (row[c] ?? '').length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join(' | ')
      .trimEnd();
  const [head, ...body] = rows;
  return [line(head!), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n');
}

async function main(): Promise<number> {
  const requested = process.argv.slice(2).filter((arg) => arg !== '--');
  const unknown = requested.filter((name) => !SUITES.some(([n]) => n === name));
  if (unknown.length > 0) {
    log(`unknown suite(s): ${unknown.join(', ')}; choose from ${SUITES.map(([n]) => n).join(', ')}`);
    return 2;
  }
  const selected = requested.length === 0 ? SUITES : SUITES.filter(([name]) => requested.includes(name));

  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log(`${signal}: cleaning up`);
    void runCleanups(log).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const figures: Figure[] = [];
  const failures: string[] = [];
  const started = Date.now();
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  const loadAtStart = load();
  log(`${cpus().length} CPUs, load average ${loadAtStart}; suites: ${selected.map(([n]) => n).join(', ')}`);
  for (const [name, suite] of selected) {
    const suiteStarted = Date.now();
    log(`suite ${name}: starting`);
    try {
      figures.push(...(await suite({ log })));
      log(`suite ${name}: done in ${((Date.now() - suiteStarted) / 1000).toFixed(1)} s`);
    } catch (error) {
      failures.push(name);
      log(`suite ${name}: ERROR ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    } finally {
      await runCleanups(log);
    }
  }

  const rows = [
    ['suite', 'figure', 'measured', 'baseline', 'ratio', 'target', 'result'],
    ...figures.map((f) => [f.suite, f.name, f.measured, f.baseline ?? '', ratio(f.ratio), f.target, f.verdict]),
    ...failures.map((name) => [name, '(suite failed, see the log above)', '', '', '', '', 'ERROR']),
  ];
  process.stdout.write(
    `\ngitops-scaffolder benchmarks: ${((Date.now() - started) / 1000).toFixed(1)} s total, ${cpus().length} CPUs, ` +
      `load average ${loadAtStart} at start, ${load()} at end (1/5/15 min)\n` +
      'times in milliseconds (ms); ratio = measured / baseline, PASS/MISS against the target; benchmarks report, they do not gate\n\n' +
      `${table(rows)}\n`,
  );
  const missed = figures.filter((f) => f.verdict === 'MISS').length;
  process.stdout.write(`\n${figures.filter((f) => f.verdict === 'PASS').length} PASS, ${missed} MISS, ${failures.length} ERROR\n`);
  return failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`ERROR ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    void runCleanups(log).finally(() => process.exit(1));
  },
);
