/**
 * Runs `generate-gitops-env` as a user would: a real child process,
 * `node --import tsx src/cli.ts …` with the package root as cwd, so exit codes,
 * stdout and stderr are the real contract and nothing is shared with the test.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root (holds package.json and src/cli.ts). */
export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** How one CLI run ended. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@link runCli}. */
export interface RunCliOptions {
  /** Written to the child's stdin, which is then closed. Without it stdin is empty. */
  readonly stdin?: string;
  /** Extra environment on top of this process's. */
  readonly env?: Readonly<Record<string, string>>;
  /** Kill the child after this long. @default 60000 */
  readonly timeoutMs?: number;
  /** Which binary: generate-gitops-env (src/cli.ts), scaffold-runner (src/runner-cli.ts) or gitops-scaffolder (src/main.ts). @default 'cli' */
  readonly binary?: 'cli' | 'runner-cli' | 'main';
}

/**
 * Runs `generate-gitops-env <args>` (or another binary, see {@link RunCliOptions.binary}) and waits for it to end.
 * @returns the exit code (null when killed) and everything it printed
 */
export function runCli(args: readonly string[], options: RunCliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(PACKAGE_ROOT, 'src', `${options.binary ?? 'cli'}.ts`), ...args], {
      cwd: PACKAGE_ROOT,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') });
    });
    child.stdin.on('error', () => {
      // The child may exit before reading its input (a flag error); that is its answer, not ours.
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/** Asserts a CLI run exited with `code`, showing what it printed when it did not. */
export function assertExit(result: CliResult, code: number): void {
  assert.equal(result.code, code, `exit ${result.code}, expected ${code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`);
}

/** Asserts a CLI run exited 0, showing what it printed when it did not. */
export function assertExitZero(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result;
}
