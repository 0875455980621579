/**
 * Test support: the real service (`gitops-scaffolder serve`, from source) as
 * a process of its own, so a test can kill it the hard way (SIGKILL) and see
 * what outlives it. Its address is read from its "listening" log line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { REPO_ROOT } from './runner.js';

/** A service process. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly address: string;
  /** Everything it printed so far. */
  output(): string;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
}

/**
 * libfaketime keeps the clock it shares with a process's children in
 * /dev/shm, named by the pid it was preloaded into, and removes it when that
 * process exits cleanly: one killed (as these are) left it there for good.
 */
function removeFaketimeClock(pid: number): void {
  for (const name of [`faketime_shm_${pid}`, `sem.faketime_sem_${pid}`]) rmSync(join('/dev/shm', name), { force: true });
}

/**
 * Starts `serve` with `env` (plus PATH, PORT=0, HOST=127.0.0.1); resolves once it listens.
 * `processEnv` is for the process only (e.g. libfaketime's LD_PRELOAD and FAKETIME), never for the service's configuration.
 */
export async function startServiceProcess(
  env: Readonly<Record<string, string>>,
  timeoutMs = 60_000,
  processEnv: Readonly<Record<string, string>> = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/main.ts'), 'serve'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env, ...processEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      if (processEnv['LD_PRELOAD']?.includes('faketime') && child.pid !== undefined) removeFaketimeClock(child.pid);
      resolve();
    }),
  );
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not listen within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    void exited.then(() => reject(new Error(`the service exited before listening:\n${output}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output += `${line}\n`;
      try {
        const event = JSON.parse(line) as { msg?: string; address?: string };
        if (event.msg === 'gitops-scaffolder listening' && typeof event.address === 'string') {
          clearTimeout(timer);
          resolve(event.address);
        }
      } catch {
        // not a log line
      }
    });
  }).catch(async (error: unknown) => {
    child.kill('SIGKILL');
    await exited;
    throw error;
  });
  return {
    child,
    address,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
