/**
 * Test support: a PostgreSQL server of the caller's own (scripts/ci/start-postgres.sh
 * on a fresh directory), which the caller may stop and start again at the same
 * address, for outage trials: a service keeps its DATABASE_URL across the outage.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './runner.js';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** A server the caller owns. */
export interface OwnPostgres {
  /** start-postgres.sh's DIR. */
  readonly dir: string;
  readonly url: string;
  /** Stops the server (pg_ctl stop -m fast), keeping its data. */
  stopServer(): Promise<void>;
  /** Starts it again on the same address. */
  startServer(): Promise<void>;
  /** Stops it and removes its directory (stop-postgres.sh). Safe to call twice. */
  destroy(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  // A directory of its own (not below a private scratch): start-postgres.sh hands it to the postgres user when run as root.
  const dir = await mkdtemp(join(tmpdir(), 'gs-own-pg-'));
  const { stdout } = await run(join(REPO_ROOT, 'scripts/ci/start-postgres.sh'), [dir]);
  const url = /TEST_DATABASE_URL=(\S+)/.exec(stdout)?.[1];
  if (url === undefined) throw new Error(`start-postgres.sh printed no URL:\n${stdout}`);
  const port = new URL(url).port;
  /** pg_ctl of the server that runs (from its postmaster.opts: the first word is the postgres binary). */
  const pgCtl = async (...args: string[]): Promise<void> => {
    const data = join(dir, 'data');
    const opts = await readFile(join(data, 'postmaster.opts'), 'utf8');
    const postgres = /^(\S+)/.exec(opts)?.[1] as string;
    const command = [join(dirname(postgres), 'pg_ctl'), '-D', data, '-w', '-t', '60', ...args];
    await (asRoot ? run('runuser', ['-u', 'postgres', '--', ...command]) : run(command[0] as string, command.slice(1)));
  };
  return {
    dir,
    url,
    stopServer: () => pgCtl('-m', 'fast', 'stop'),
    startServer: () =>
      pgCtl(
        '-l',
        join(dir, 'postgres.log'),
        '-o',
        `-c listen_addresses=127.0.0.1 -p ${port} -k '${dir}' -c fsync=off -c synchronous_commit=off -c full_page_writes=off`,
        'start',
      ),
    destroy: () => run(join(REPO_ROOT, 'scripts/ci/stop-postgres.sh'), [dir]).then(() => undefined),
  };
}

/** The server's binary directory (pg_dump and friends), from its postmaster.opts. */
export async function postgresBinOf(server: OwnPostgres): Promise<string> {
  const opts = await readFile(join(server.dir, 'data', 'postmaster.opts'), 'utf8');
  return dirname(/^(\S+)/.exec(opts)?.[1] as string);
}
