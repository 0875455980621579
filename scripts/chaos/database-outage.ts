/**
 * Trial 2, a PostgreSQL outage: the service (as `serve` runs it, local
 * executor, real scaffold-runners) on a PostgreSQL server of the trial's own
 * (scripts/ci/start-postgres.sh); six runs are started, and once the first
 * push reaches the remote the server is stopped for `outageSeconds` while the
 * runners go on (their pushes are let through at once). Afterwards the
 * service-run invariants (service-runs.ts) must hold: above all, every
 * succeeded run has its whole step timeline and every line its runner wrote.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { heldPushRemote } from '../../test/support/held-push-remote.js';
import { postgresBinOf, startOwnPostgres } from '../../test/support/own-postgres.js';
import { startServiceProcess, type ServiceProcess } from '../../test/support/service-process.js';
import type { Trial } from './report.js';
import { awaitRuns, serviceEnv, serviceRunInvariants, startRuns } from './service-runs.js';

const exec = promisify(execFile);

export function databaseOutageTrial(runCount = 6, outageSeconds = 30): Trial {
  return {
    name: 'PostgreSQL outage',
    async run() {
      const scratch = await mkdtemp(join(tmpdir(), 'gs-chaos-outage-'));
      const server = await startOwnPostgres();
      const certificate = createTestCertificate();
      let service: ServiceProcess | undefined;
      try {
        const remote = await heldPushRemote(scratch);
        const dataDir = join(scratch, 'service-data');
        service = await startServiceProcess(serviceEnv(dataDir, remote.path, server.url), 120_000);
        const ids = await startRuns(service, 'outage', runCount, certificate.certificatePem);
        await remote.pushed(300_000);
        await server.stopServer();
        const down = performance.now();
        await remote.release();
        // The outage's length is the fault itself, not a wait for an event.
        await sleep(Math.max(0, outageSeconds * 1000 - (performance.now() - down)));
        await server.startServer();
        const outage = (performance.now() - down) / 1000;
        const views = await awaitRuns(service, ids, 900_000);
        const { stdout: dump } = await exec(join(await postgresBinOf(server), 'pg_dump'), ['--data-only', server.url], { maxBuffer: 512 * 1024 * 1024 });
        return {
          trial: this.name,
          faults: `PostgreSQL stopped ${outage.toFixed(0)} s while ${runCount} runs work (service on PostgreSQL, local executor)`,
          runs: ids.length,
          invariants: await serviceRunInvariants({
            service,
            serviceLogs: [service.output()],
            dataDir,
            remote: remote.path,
            views,
            privateKey: certificate.privateKey,
            database: dump,
          }),
        };
      } finally {
        await service?.kill();
        await server.destroy().catch(() => undefined);
        await rm(scratch, { recursive: true, force: true });
      }
    },
  };
}
