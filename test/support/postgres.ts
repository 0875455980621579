/**
 * A real, throwaway PostgreSQL for tests.
 *
 * With `TEST_DATABASE_URL` set (CI starts one server with
 * `scripts/ci/start-postgres.sh`), each call creates a fresh database on that
 * server and drops it on stop. Without it, each call starts its own cluster:
 * `initdb` + `pg_ctl` on a temporary directory, listening on 127.0.0.1 only,
 * trust authentication, removed on stop.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** A PostgreSQL database a test may use freely. */
export interface TestPostgres {
  /** Connection URI of a database of its own, on 127.0.0.1. */
  readonly url: string;
  /** Drops the database or stops the server and removes its files. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Provides a fresh database: on the `TEST_DATABASE_URL` server when set, else on
 * a private server started for this call.
 */
export async function startPostgres(): Promise<TestPostgres> {
  const shared = process.env['TEST_DATABASE_URL'];
  return shared ? createDatabase(shared) : startCluster();
}

async function createDatabase(serverUrl: string): Promise<TestPostgres> {
  const name = `gs_test_${randomBytes(6).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let stopped: Promise<void> | undefined;
  return {
    url: url.toString(),
    stop() {
      // FORCE ends sessions a failed test left open (PostgreSQL 13+).
      stopped ??= withClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined);
      return stopped;
    },
  };
}

async function startCluster(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const dir = await mkdtemp(join(tmpdir(), 'gs-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'postgres.log');
  // initdb refuses to run as root: run the server tools as the postgres user,
  // in a directory it owns.
  const owner = process.getuid?.() === 0 ? await postgresUser() : undefined;
  const asOwner = (file: string, args: string[]): Promise<unknown> => (owner ? run('runuser', ['-u', 'postgres', '--', file, ...args]) : run(file, args));
  if (owner) await chown(dir, owner.uid, owner.gid);

  const watchdog = startWatchdog(bin, data, dir, owner !== undefined);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (existsSync(join(data, 'postmaster.pid'))) {
        await asOwner(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']).catch(() => undefined);
      }
      if (watchdog.pid !== undefined) {
        try {
          process.kill(watchdog.pid);
        } catch {
          // already gone
        }
      }
      await rm(dir, { recursive: true, force: true });
    })();
    return stopped;
  };

  try {
    await asOwner(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions']);
    // Trust, but only on the loopback address and the private socket.
    const hba = join(data, 'pg_hba.conf');
    await writeFile(hba, 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
    if (owner) await chown(hba, owner.uid, owner.gid);

    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      // Durability is pointless for a throwaway server; turning it off makes the suite fast.
      const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
      try {
        await asOwner(join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '60', '-o', options, 'start']);
      } catch (error) {
        // Another process may have taken the port between our probe and the bind.
        if (attempt < 3) continue;
        const tail = await readFile(log, 'utf8').catch(() => '');
        throw new Error(`PostgreSQL did not start: ${String(error)}\n${tail.slice(-2000)}`, { cause: error });
      }
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      await waitUntilAccepting(url);
      return { url, stop };
    }
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * A detached shell that stops the server and removes its directory once this
 * process is gone, however it ended (a crash, a kill, a test that never reached
 * its `after` hook): a leaked postmaster would outlive the test run.
 */
function startWatchdog(bin: string, data: string, dir: string, asPostgres: boolean): ReturnType<typeof spawn> {
  const pgCtl = `${asPostgres ? 'runuser -u postgres -- ' : ''}'${join(bin, 'pg_ctl')}' -D '${data}' -m immediate stop`;
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; [ -f '${data}/postmaster.pid' ] && ${pgCtl}; rm -rf '${dir}'`;
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

/** Where initdb and pg_ctl live: PG_BIN_DIR, the newest Debian layout, or PATH. */
function postgresBinDir(): string {
  const fromEnv = process.env['PG_BIN_DIR'];
  if (fromEnv) return fromEnv;
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v) && existsSync(join(debian, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(debian, versions[0], 'bin');
  }
  for (const entry of (process.env['PATH'] ?? '').split(':')) {
    const candidate = join(entry, 'initdb');
    // pg_ctl finds `postgres` next to itself: follow the symlink to the real directory.
    if (entry && existsSync(candidate)) return dirname(realpathSync(candidate));
  }
  throw new Error('initdb not found: install PostgreSQL server binaries or set PG_BIN_DIR');
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilAccepting(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await withClient(url, (client) => client.query('SELECT 1'));
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error('PostgreSQL is not accepting connections', { cause: error });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
