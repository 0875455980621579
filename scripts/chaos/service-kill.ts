/**
 * Service SIGKILL mid-run: the service (local executor, real runners) is
 * killed the hard way while its runners push (the first push held at the
 * remote), the pushes are let through, and a new service process is started
 * over the same data directory and database: on PGlite (the embedded store in
 * DATA_DIR) and on PostgreSQL. The runners outlive the service; the new
 * process re-reads their output files and records their results, so the
 * service-run invariants (service-runs.ts) hold as if nothing happened.
 */
import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { heldPushRemote } from '../../test/support/held-push-remote.js';
import { startPostgres, type TestPostgres } from '../../test/support/postgres.js';
import { startServiceProcess, type ServiceProcess } from '../../test/support/service-process.js';
import type { Trial } from './report.js';
import { awaitRuns, serviceEnv, serviceRunInvariants, startRuns } from './service-runs.js';

/** A first start on PGlite creates its data directory (initdb in WebAssembly): minutes on a loaded 2-core machine. */
const SERVICE_START_MS = 300_000;

/** Every row of every table of the database at `url`, as JSON text: what a dump would hold. */
async function sqlDump(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`,
    );
    let text = '';
    for (const { name } of tables.rows)
      text += (await client.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM ${name} t`)).rows.map((r) => r.row).join('\n');
    return text;
  } finally {
    await client.end();
  }
}

/** The bytes of every file below `dir` (PGlite's data directory), as latin1 text a needle search can read. */
async function filesText(dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const parts: string[] = [];
  for (const entry of entries) if (entry.isFile()) parts.push((await readFile(join(entry.parentPath, entry.name))).toString('latin1'));
  return parts.join('\n');
}

export function serviceKillTrial(store: 'pglite' | 'postgresql', runCount = 3): Trial {
  return {
    name: `service SIGKILL (${store === 'pglite' ? 'PGlite' : 'PostgreSQL'})`,
    async run() {
      const scratch = await mkdtemp(join(tmpdir(), `gs-chaos-kill-${store}-`));
      const postgres: TestPostgres | undefined = store === 'postgresql' ? await startPostgres() : undefined;
      const certificate = createTestCertificate();
      let first: ServiceProcess | undefined;
      let second: ServiceProcess | undefined;
      try {
        const remote = await heldPushRemote(scratch);
        const dataDir = join(scratch, 'service-data');
        const env = serviceEnv(dataDir, remote.path, postgres?.url);
        first = await startServiceProcess(env, SERVICE_START_MS);
        const ids = await startRuns(first, 'killed', runCount, certificate.certificatePem);
        await remote.pushed(300_000);
        await first.kill();
        await remote.release();
        second = await startServiceProcess(env, SERVICE_START_MS);
        const views = await awaitRuns(second, ids, 900_000);
        const serviceLogs = [first.output(), second.output()];
        const invariants = await serviceRunInvariants({
          service: second,
          serviceLogs,
          dataDir,
          remote: remote.path,
          views,
          privateKey: certificate.privateKey,
          database: postgres === undefined ? await filesText(join(dataDir, 'pgdata')) : await sqlDump(postgres.url),
        });
        return { trial: this.name, faults: `service SIGKILLed while ${runCount} runners push; started again on the same data`, runs: ids.length, invariants };
      } finally {
        await first?.kill();
        await second?.kill();
        await postgres?.stop();
        await rm(scratch, { recursive: true, force: true });
      }
    },
  };
}
