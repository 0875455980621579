/**
 * Test support: a real OCI registry, Debian's `docker-registry` (the CNCF
 * Distribution registry), on a free loopback port with filesystem storage.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort, startWatchedServer } from './watched-server.js';

// ---------------------------------------------------------------------------
// The registry

export interface Registry {
  /** `127.0.0.1:PORT`. */
  readonly host: string;
  stop(): Promise<void>;
}

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
    // Stops with the test process even without stop() (watched-server.ts).
    const started = await startWatchedServer({
      command: 'docker-registry serve "$1"',
      args: [config],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      ready: () => registryAnswers(host),
      timeoutMs: 15_000,
      pollMs: 50,
    });
    if ('stop' in started) return { host, stop: started.stop };
    lastError = started.failed || `no answer on ${host}`;
  }
  throw new Error(`docker-registry did not start: ${lastError}`);
}
