/**
 * Test support: a real OCI registry, Debian's `docker-registry` (the CNCF
 * Distribution registry), on a free loopback port with filesystem storage.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { type AddressInfo, type Socket, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------
// The registry

export interface Registry {
  /** `127.0.0.1:PORT`. */
  readonly host: string;
  stop(): Promise<void>;
}

/** sh keeps the test's pipe on fd 3; when it closes, for whatever reason, the watcher kills the registry. */
const WATCHED_REGISTRY = 'exec 3<&0; docker-registry serve "$1" </dev/null & r=$!; (cat <&3 >/dev/null; kill "$r" 2>/dev/null) & wait "$r"';

async function registryAnswers(host: string): Promise<boolean> {
  try {
    const response = await fetch(`http://${host}/v2/`, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 200 || response.status === 401;
  } catch {
    return false;
  }
}

/** Starts `docker-registry serve` with filesystem storage under `dir`, on a free loopback port; waits for `/v2/`. */
export async function startRegistry(dir: string, auth?: Record<string, unknown>): Promise<Registry> {
  let lastError = 'no attempt';
  // A free port can be taken between probing and binding it: try again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const host = `127.0.0.1:${port}`;
    const config = join(dir, `config-${port}.yml`);
    await mkdir(join(dir, 'storage'), { recursive: true });
    await writeFile(
      config,
      stringify({
        version: 0.1,
        log: { level: 'error', accesslog: { disabled: true } },
        storage: { filesystem: { rootdirectory: join(dir, 'storage') }, delete: { enabled: true } },
        http: { addr: host },
        ...(auth ? { auth } : {}),
      }),
    );
    const child = spawn('sh', ['-c', WATCHED_REGISTRY, 'sh', config], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    let alive = true;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    void exited.then(() => (alive = false));
    const deadline = Date.now() + 15_000;
    while (alive && Date.now() < deadline && !(await registryAnswers(host))) await new Promise((r) => setTimeout(r, 50));
    if (alive && (await registryAnswers(host))) {
      child.unref();
      (child.stdin as unknown as Socket).unref();
      (child.stderr as unknown as Socket).unref();
      let stopped: Promise<void> | undefined;
      return {
        host,
        stop() {
          stopped ??= (async () => {
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
    lastError = stderr.trim() || `no answer on ${host}`;
  }
  throw new Error(`docker-registry did not start: ${lastError}`);
}

