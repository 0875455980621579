/**
 * Server processes for tests (git daemon, docker-registry) that stop by
 * themselves when the test process ends, even without `stop()`: sh keeps the
 * test process's pipe on fd 3 and hands it to a watcher, which kills the
 * server when the pipe closes (stop(), or the test process ending in any way).
 * An asynchronous list's stdin is /dev/null in a non-interactive shell, hence
 * the explicit fd. sh exits with the server.
 */
import { spawn } from 'node:child_process';
import { type AddressInfo, type Socket, createServer } from 'node:net';

/** A free loopback port (which another process may still take before the server binds it: callers retry). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** What to start and how to tell it is up. */
export interface WatchedServerOptions {
  /** A shell command line; `"$@"` are `args`. */
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  /** Whether the server answers yet. */
  readonly ready: () => Promise<boolean>;
  readonly timeoutMs: number;
  readonly pollMs: number;
}

/** A started server, or why it did not start (its stderr). */
export type WatchedServer = { readonly stop: () => Promise<void> } | { readonly failed: string };

/** Starts the server and waits until it is ready, it exits, or the time is up (then it is stopped). */
export async function startWatchedServer(options: WatchedServerOptions): Promise<WatchedServer> {
  const script = `exec 3<&0; ${options.command} </dev/null & s=$!; (cat <&3 >/dev/null; kill "$s" 2>/dev/null) & wait "$s"`;
  const child = spawn('sh', ['-c', script, 'sh', ...options.args], { env: options.env, stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let alive = true;
  void exited.then(() => (alive = false));

  const deadline = Date.now() + options.timeoutMs;
  while (alive && Date.now() < deadline && !(await options.ready())) await new Promise((r) => setTimeout(r, options.pollMs));
  if (alive && (await options.ready())) {
    // The test process must not wait for the server to exit on its own.
    child.unref();
    (child.stdin as unknown as Socket).unref();
    (child.stderr as unknown as Socket).unref();
    let stopped: Promise<void> | undefined;
    return {
      stop() {
        stopped ??= (async () => {
          // Waiting for the exit must keep the event loop alive, which the unref'd handles no longer do.
          child.ref();
          (child.stdin as unknown as Socket).ref();
          child.stdin.end();
          await exited;
        })();
        return stopped;
      },
    };
  }
  child.stdin.end();
  await exited;
  return { failed: stderr.trim() };
}
