/**
 * Shared pieces of `npm run bench`: the figure record every suite returns,
 * statistics, timing, a spawn helper with a clean git environment, temp
 * directories that are always removed, and a cleanup stack so a suite that
 * fails (or a Ctrl-C) still stops its servers and daemons.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { devNull, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { packageRoot } from '../src/package-paths.js';
import { bundle } from '../scripts/bundle.mjs';

/** One line of the final table. */
export interface Figure {
  readonly suite: string;
  /** What was measured, e.g. "render + seal, median". */
  readonly name: string;
  /** The measured value, formatted with its unit. */
  readonly measured: string;
  /** The baseline measured in the same run, formatted with its unit, and what it is. */
  readonly baseline?: string;
  /** measured / baseline (or the figure's own ratio when the figure is a ratio). */
  readonly ratio?: number;
  /** The target as text, e.g. "< 100 ms". */
  readonly target: string;
  /** PASS / MISS against the target; INFO when there is no target. */
  readonly verdict: 'PASS' | 'MISS' | 'INFO';
}

/** What a suite gets from the runner. */
export interface SuiteContext {
  /** Prints a progress line (to stderr, so stdout stays the report). */
  readonly log: (message: string) => void;
}

export type Suite = (ctx: SuiteContext) => Promise<Figure[]>;

// ---------------------------------------------------------------------------
// Statistics

/** The value at quantile q (0..1) of the samples, nearest-rank. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export const p95 = (samples: readonly number[]): number => quantile(samples, 0.95);

/** The fields of /proc/<pid>/stat after "pid (comm) ": state is field 0, ppid 1, utime, stime, cutime, cstime 11 to 14. */
function statFields(pid: number | 'self'): string[] {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
}

/** What a process and the children it waited for have used, in ms (clock ticks of 10 ms). */
function statCpuMs(pid: number | 'self'): number {
  const fields = statFields(pid);
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]) * 10, 0);
}

/** The live pids whose process `matches` accepts, given its stat fields and its arguments (Linux; none elsewhere). */
function livePids(matches: (fields: readonly string[], argv: readonly string[]) => boolean): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (matches(statFields(Number(entry)), readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0'))) pids.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return pids;
}

/** What the live processes of `pids` and the children they waited for have used, in ms; one that ended meanwhile counts nothing. */
function sumCpuMs(pids: readonly number[]): number {
  let ms = 0;
  for (const pid of pids) {
    try {
      ms += statCpuMs(pid);
    } catch {
      // It ended between the listing and now: reaped, so its time is among its parent's children's.
    }
  }
  return ms;
}

/** Idle and total clock ticks of the whole machine so far (/proc/stat's first line; undefined elsewhere). */
function machineTicks(): { readonly idle: number; readonly iowait: number; readonly total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are cores with nothing to run, iowait while a disk write was pending.
    return { idle: fields[3]! + fields[4]!, iowait: fields[4]!, total: fields.reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

/**
 * Samples how idle the machine's cores are, every `everyMs`, until stopped:
 * where a phase left cores with nothing to run (Linux; no samples elsewhere).
 * Each sample is the idle share of the cores over the interval that ended at `atMs` (performance.now()), and the part of it in I/O wait.
 */
export function idleSampler(everyMs = 250): { stop(): { readonly atMs: number; readonly idle: number; readonly iowait: number }[] } {
  const samples: { atMs: number; idle: number; iowait: number }[] = [];
  let last = machineTicks();
  const timer = setInterval(() => {
    const now = machineTicks();
    if (now && last && now.total > last.total) {
      const total = now.total - last.total;
      samples.push({ atMs: performance.now(), idle: (now.idle - last.idle) / total, iowait: (now.iowait - last.iowait) / total });
    }
    last = now;
  }, everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return samples;
    },
  };
}

/**
 * The live spawn helpers of this process (src/process/spawn-helper.ts): they
 * start its git and kubectl, so what those cost reaches this process's
 * accounts only when a helper ends. Linux only; none elsewhere.
 */
export function spawnHelperPids(): number[] {
  return livePids((fields, argv) => Number(fields[1]) === process.pid && argv.some((arg) => arg.includes('spawn-helper-main')));
}

/**
 * What the live processes whose arguments `matches` accepts, and the children
 * they waited for, have used so far, in ms (Linux; 0 elsewhere):
 * a server this process did not start directly, such as `git daemon` with the
 * upload-packs and receive-packs it forked and reaped.
 */
export function processesCpuMs(matches: (argv: readonly string[]) => boolean): number {
  return sumCpuMs(livePids((_, argv) => matches(argv)));
}

/** CPU of this process and of its children (those it waited for, and its live spawn helpers'), apart (Linux; elsewhere all of it is this process's). */
export function cpuMsApart(): { readonly own: number; readonly children: number } {
  try {
    const fields = statFields('self');
    const ms = (i: number) => Number(fields[i]) * 10;
    return { own: ms(11) + ms(12), children: ms(13) + ms(14) + sumCpuMs(spawnHelperPids()) };
  } catch {
    const { user, system } = process.cpuUsage();
    return { own: (user + system) / 1000, children: 0 };
  }
}

/**
 * CPU time this process and its children (git, kubectl: those it waited for,
 * and those its live spawn helpers started) have used so far, in ms: from
 * /proc where there is one (clock ticks of 10 ms), else this process alone.
 */
export function cpuMsWithChildren(): number {
  try {
    return statCpuMs('self') + sumCpuMs(spawnHelperPids());
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
}

/** Milliseconds an async call takes. */
export async function timeMs(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Runs `work` `warmup` times untimed, then `iterations` times timed; returns the samples in ms. */
export async function sample(iterations: number, warmup: number, work: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await work(-1 - i);
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) samples.push(await timeMs(() => work(i)));
  return samples;
}

// ---------------------------------------------------------------------------
// Formatting

export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 100 ? `${value.toFixed(0)} ms` : value >= 10 ? `${value.toFixed(1)} ms` : `${value.toFixed(2)} ms`;
}

export function ratio(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '';
  return `${value >= 10 ? value.toFixed(1) : value.toFixed(2)}×`;
}

export function verdict(pass: boolean): 'PASS' | 'MISS' {
  return pass ? 'PASS' : 'MISS';
}

// ---------------------------------------------------------------------------
// Cleanup

type Cleanup = () => Promise<void> | void;
const cleanups: Cleanup[] = [];

/** Registers `fn` to run at the end of the current suite (last registered runs first). Returns an unregister function. */
export function onCleanup(fn: Cleanup): () => void {
  cleanups.push(fn);
  return () => {
    const i = cleanups.lastIndexOf(fn);
    if (i >= 0) cleanups.splice(i, 1);
  };
}

/** Runs and clears every registered cleanup; errors are reported, not thrown. */
export async function runCleanups(report: (message: string) => void = () => {}): Promise<void> {
  while (cleanups.length > 0) {
    const fn = cleanups.pop() as Cleanup;
    try {
      await fn();
    } catch (error) {
      report(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** A fresh temp directory, removed by the suite's cleanup (or earlier, by the returned remove()). */
export async function tempDir(prefix: string): Promise<{ readonly path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `gs-bench-${prefix}-`));
  const remove = async () => {
    unregister();
    await rm(path, { recursive: true, force: true });
  };
  const unregister = onCleanup(() => rm(path, { recursive: true, force: true }));
  return { path, remove };
}

// ---------------------------------------------------------------------------
// Processes

/** The environment the bench's own git commands run with: no system or user configuration. */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    ...(process.env['TMPDIR'] ? { TMPDIR: process.env['TMPDIR'] } : {}),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: devNull,
    HOME: devNull,
    XDG_CONFIG_HOME: devNull,
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@localhost',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@localhost',
    ...extra,
  };
}

export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Spawns `command args` (no shell); rejects with its stderr when it exits non-zero. */
export async function exec(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env?: Record<string, string>; readonly input?: string | Buffer } = { cwd: process.cwd() },
): Promise<ExecResult> {
  const { stdout, stderr, exit } = await runProcess(command, args, { ...options, env: options.env ?? gitEnv() });
  if (exit !== 0) throw new Error(`${command} ${args.slice(0, 2).join(' ')} exited ${exit}: ${stderr.trim().slice(-1000)}`);
  return { stdout, stderr };
}

/** Runs `command` to its end (`input` on its stdin) and answers what it printed and how it ended, whatever the exit code. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env: Record<string, string>; readonly input?: string | Buffer },
): Promise<ExecResult & { readonly exit: number | string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), exit: code ?? signal ?? 'unknown' }),
    );
    child.stdin.on('error', () => {});
    child.stdin.end(options.input);
  });
}

/** `git args` in `cwd` with the bench's clean environment. */
export function git(cwd: string, args: readonly string[], input?: string | Buffer): Promise<ExecResult> {
  return exec('git', args, { cwd, env: gitEnv(), ...(input !== undefined ? { input } : {}) });
}

/** The newest modification time of a file under `dir`. */
async function newestUnder(dir: string): Promise<number> {
  let latest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? await newestUnder(path) : (await stat(path)).mtimeMs);
  }
  return latest;
}

/**
 * The built `dist/src` directory, built first (tsc) when missing or older than
 * any file under src/, and the bundle of the short-lived binaries (dist/bundle,
 * scripts/bundle.mjs) likewise: a whole-process figure never measures stale
 * code, nor tsx compiling TypeScript at every start.
 */
export async function builtDist(log: (message: string) => void): Promise<string> {
  const root = packageRoot();
  const builtAt = (file: string) =>
    stat(file).then(
      (s) => s.mtimeMs,
      () => 0,
    );
  const sources = await newestUnder(join(root, 'src'));
  if ((await builtAt(join(root, 'dist', 'src', 'main.js'))) < sources) {
    log('building dist/ (tsc -p tsconfig.build.json): whole-process figures run what a Job runs');
    // tsc reports type errors on stdout: run through a shell so they reach the error message.
    await exec('sh', ['-c', `'${process.execPath}' node_modules/typescript/bin/tsc -p tsconfig.build.json 1>&2`], {
      cwd: root,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    });
  }
  if ((await builtAt(join(root, 'dist', 'bundle', 'runner-cli.js'))) < sources) {
    log('bundling dist/bundle (scripts/bundle.mjs): what the bins and the runner image run');
    await bundle();
  }
  return join(root, 'dist', 'src');
}

/** package.json's bins by name, as absolute paths, built first: what `npx <bin>` and the images run. */
export async function builtBins(log: (message: string) => void): Promise<Readonly<Record<string, string>>> {
  await builtDist(log);
  const root = packageRoot();
  const { bin } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  return Object.fromEntries(Object.entries(bin).map(([name, file]) => [name, join(root, file)]));
}

/** How to start scaffold-runner as a Job does: node on package.json's scaffold-runner bin (the bundle). */
export async function builtRunner(log: (message: string) => void): Promise<{ command: string; args: string[] }> {
  return { command: process.execPath, args: [(await builtBins(log))['scaffold-runner']!] };
}
