/**
 * Worker thread entry of {@link planUpgradeInParallel}: plans the upgrade of
 * the clusters it is given over the work tree on disk and posts the plans back.
 */
import { randomBytes } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { planUpgrade } from '../fleet/plan-upgrade.js';
import type { UpgradeWorkerInput } from './plan-upgrade-in-parallel.js';

const input = workerData as UpgradeWorkerInput;
try {
  const plans = await planUpgrade(new FsRepoReader(input.dir), {
    reference: input.reference,
    clusters: input.clusters,
    generatorVersion: input.generatorVersion,
    random: (size) => randomBytes(size),
    ...(input.platformCommit !== undefined ? { platformCommit: input.platformCommit } : {}),
    onCluster: (plan) => parentPort?.postMessage({ kind: 'progress', name: plan.name }),
  });
  parentPort?.postMessage({ kind: 'done', plans });
} catch (error) {
  parentPort?.postMessage({ kind: 'error', message: error instanceof Error ? error.message : String(error) });
}
