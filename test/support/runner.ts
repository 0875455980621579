/**
 * Test support for the scaffold runner: spawn the real `scaffold-runner` CLI
 * (`node --import tsx src/runner-cli.ts`) with a clean environment, collect its
 * stdout as JSON events and its result file; read what landed on a bare remote;
 * unseal what a run sealed. Every process started here is killed after a
 * deadline, so none outlives a test.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { devNull } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { runGit } from '../../src/git/git-process.js';
import { git } from './git.js';
import type { Logger } from '../../src/logger.js';
import { scopeLabel } from '../../src/sealing/seal.js';
import { unsealValue } from '../../src/sealing/unseal.js';
import type { RunResult } from '../../src/run/run-record.js';

/** The repository root (where package.json and src/ live). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** One line of the runner's stdout, parsed. */
export type RunnerEvent = Record<string, unknown> & { readonly event?: string; readonly step?: number; readonly msg?: string };

/** How a runner process ended. */
export interface RunnerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running (or finished) runner process. */
export interface RunnerProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every stdout line that parsed as JSON, in order. */
  readonly events: RunnerEvent[];
  /** Lines of stdout that were NOT a JSON object (should stay empty). */
  readonly nonJsonLines: string[];
  /** Raw output so far. */
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<RunnerExit>;
  /** Resolves with the first event (already seen or still to come) matching `predicate`; rejects when the process ends first or after `timeoutMs`. */
  waitForEvent(predicate: (event: RunnerEvent) => boolean, timeoutMs?: number): Promise<RunnerEvent>;
  kill(signal?: NodeJS.Signals): void;
}

/** Options of {@link startRunner}. */
export interface StartRunnerOptions {
  readonly args: readonly string[];
  /** Added to a minimal environment (PATH, HOME=/dev/null, LC_ALL); nothing else leaks in from the test process. */
  readonly env?: Readonly<Record<string, string>>;
  /** Killed with SIGKILL after this long. @default 120000 */
  readonly deadlineMs?: number;
  /** The script node runs (absolute, or relative to the repository root). @default the source, src/runner-cli.ts through tsx */
  readonly script?: string;
}

/** Starts `scaffold-runner`: from source, or the `script` given (a bundle). */
export function startRunner(options: StartRunnerOptions): RunnerProcess {
  const entry = options.script !== undefined ? [options.script] : ['--import', 'tsx', 'src/runner-cli.ts'];
  const child = spawn(process.execPath, [...entry, ...options.args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: devNull, LC_ALL: 'C', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  const events: RunnerEvent[] = [];
  const nonJsonLines: string[] = [];
  let out = '';
  let err = '';
  let partial = '';
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    out += chunk;
    partial += chunk;
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') continue;
      try {
        const value: unknown = JSON.parse(line);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) events.push(value as RunnerEvent);
        else nonJsonLines.push(line);
      } catch {
        nonJsonLines.push(line);
      }
    }
    for (const listener of listeners) listener();
  });
  child.stderr.on('data', (chunk: string) => (err += chunk));
  const deadline = setTimeout(() => child.kill('SIGKILL'), options.deadlineMs ?? 120_000);
  const exited = new Promise<RunnerExit>((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(deadline);
      if (partial !== '') nonJsonLines.push(partial);
      for (const listener of listeners) listener();
      resolve({ code, signal });
    });
  });
  let done = false;
  void exited.then(() => (done = true));

  return {
    child,
    events,
    nonJsonLines,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForEvent(predicate, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(predicate);
          if (found) {
            cleanup();
            resolve(found);
          } else if (done) {
            cleanup();
            reject(new Error(`the runner exited before the awaited event; stdout:\n${out}\nstderr:\n${err}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`the awaited event did not come within ${timeoutMs} ms; stdout:\n${out}\nstderr:\n${err}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/** What a finished runner left behind. */
export interface RunnerOutcome extends RunnerExit {
  readonly events: RunnerEvent[];
  readonly nonJsonLines: string[];
  readonly stdout: string;
  readonly stderr: string;
  /** The parsed result file, when one was written. */
  readonly result?: RunResult;
}

/** Runs `scaffold-runner` to the end; `resultFile` (if given) is read afterwards. */
export function runRunner(options: StartRunnerOptions & { readonly resultFile?: string }): Promise<RunnerOutcome> {
  return outcomeOf(startRunner(options), options.resultFile);
}

/** Waits for a started runner to exit; `resultFile` (if given) is read afterwards. */
export async function outcomeOf(runner: RunnerProcess, resultFile?: string): Promise<RunnerOutcome> {
  const exit = await runner.exited;
  let result: RunResult | undefined;
  if (resultFile) {
    try {
      result = JSON.parse(await readFile(resultFile, 'utf8')) as RunResult;
    } catch {
      result = undefined;
    }
  }
  return { ...exit, events: runner.events, nonJsonLines: runner.nonJsonLines, stdout: runner.stdout(), stderr: runner.stderr(), ...(result ? { result } : {}) };
}

/** A summary for assertion messages. */
export function describeOutcome(outcome: { readonly code: number | null; readonly stdout: string; readonly stderr: string }): string {
  return `exit ${outcome.code}\nstdout:\n${outcome.stdout}\nstderr:\n${outcome.stderr}`;
}

/** One logged event of a {@link CapturingLogger}: the fields with every child binding merged in. */
export interface CapturedLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly fields: Record<string, unknown>;
  readonly msg: string;
}

/** A Logger that keeps every line, for library runs. */
export interface CapturingLogger extends Logger {
  readonly lines: CapturedLine[];
  /** Every line as JSON text, one a line (what pino would have written). */
  text(): string;
}

export function capturingLogger(): CapturingLogger {
  const lines: CapturedLine[] = [];
  const make = (bindings: Record<string, unknown>): Logger => {
    const log = (level: CapturedLine['level']) => (fields: Record<string, unknown>, msg: string) =>
      lines.push({ level, fields: { ...bindings, ...fields }, msg });
    return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), child: (more) => make({ ...bindings, ...more }) };
  };
  return Object.assign(make({}), { lines, text: () => lines.map((l) => JSON.stringify({ level: l.level, ...l.fields, msg: l.msg })).join('\n') });
}

/** A commit on a bare remote. */
export interface RemoteCommit {
  readonly sha: string;
  readonly subject: string;
  readonly parents: readonly string[];
  /** Trailers as `key -> value`. */
  readonly trailers: Readonly<Record<string, string>>;
}

/** The commits of `rev` (newest first), optionally only those after `since`. */
export async function commitsOf(bare: string, rev = 'main', since?: string): Promise<RemoteCommit[]> {
  const range = since ? `${since}..${rev}` : rev;
  const text = (await runGit(['log', '--format=%H%x00%P%x00%s%x00%(trailers:only,unfold)%x1e', range, '--'], { cwd: bare })).stdout;
  return text
    .split('\x1e')
    .map((record) => record.trim())
    .filter(Boolean)
    .map((record) => {
      const [sha = '', parents = '', subject = '', trailerText = ''] = record.split('\0');
      const trailers: Record<string, string> = {};
      for (const line of trailerText.split('\n')) {
        const match = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line.trim());
        if (match) trailers[match[1]!] = match[2]!;
      }
      return { sha, subject, parents: parents.split(' ').filter(Boolean), trailers };
    });
}

/** The files below `path` at `rev`, sorted. */
export async function filesAt(bare: string, rev: string, path: string): Promise<string[]> {
  const text = await git(bare, 'ls-tree', '-r', '--name-only', rev, '--', path);
  return text.split('\n').filter(Boolean).sort();
}

/** The content of one file at `rev`. */
export async function fileAt(bare: string, rev: string, path: string): Promise<string> {
  return (await runGit(['show', `${rev}:${path}`], { cwd: bare })).stdout;
}

/** Every file below `path` at `rev`, path -> content. */
export async function treeAt(bare: string, rev: string, path: string): Promise<Map<string, string>> {
  const tree = new Map<string, string>();
  for (const file of await filesAt(bare, rev, path)) tree.set(file, await fileAt(bare, rev, file));
  return tree;
}

/** A SealedSecret found in a tree. */
export interface SealedSecretFile {
  readonly path: string;
  readonly namespace: string;
  readonly name: string;
  readonly encryptedData: Readonly<Record<string, string>>;
}

/** The SealedSecrets among `tree`'s files. */
export function sealedSecretsIn(tree: ReadonlyMap<string, string>): SealedSecretFile[] {
  const found: SealedSecretFile[] = [];
  for (const [path, text] of tree) {
    if (!/\.ya?ml$/.test(path) || !text.includes('SealedSecret')) continue;
    const doc = parse(text) as { kind?: string; metadata?: { name?: string; namespace?: string }; spec?: { encryptedData?: Record<string, string> } } | null;
    if (doc?.kind !== 'SealedSecret') continue;
    found.push({ path, namespace: doc.metadata?.namespace ?? '', name: doc.metadata?.name ?? '', encryptedData: doc.spec?.encryptedData ?? {} });
  }
  return found;
}

/** Decrypts every value of every SealedSecret (strict scope) with the controller's private key: `ns/name/key -> plaintext`. */
export function unsealAll(secrets: readonly SealedSecretFile[], privateKey: KeyObject): Map<string, string> {
  const values = new Map<string, string>();
  for (const secret of secrets) {
    for (const [key, ciphertext] of Object.entries(secret.encryptedData)) {
      const plain = unsealValue({ privateKey, label: scopeLabel('strict', secret.namespace, secret.name), ciphertext });
      values.set(`${secret.namespace}/${secret.name}/${key}`, plain.toString('utf8'));
    }
  }
  return values;
}

/**
 * The strings a leak check looks for: each unsealed value and its base64; for a
 * `.dockerconfigjson`, also the passwords and `auth` fields inside it.
 */
export function secretNeedles(values: ReadonlyMap<string, string>): string[] {
  const needles = new Set<string>();
  const add = (value: string) => {
    if (value.length < 8) return;
    needles.add(value);
    needles.add(Buffer.from(value, 'utf8').toString('base64'));
  };
  for (const [key, value] of values) {
    add(value);
    if (key.endsWith('/.dockerconfigjson')) {
      const config = JSON.parse(value) as { auths?: Record<string, { password?: string; auth?: string }> };
      for (const entry of Object.values(config.auths ?? {})) {
        if (entry.password) add(entry.password);
        if (entry.auth) add(entry.auth);
      }
    }
  }
  return [...needles];
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
