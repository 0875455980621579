/**
 * planUpgrade spread over worker threads: rendering is CPU-bound and each
 * cluster is independent, so a fleet is cut into one contiguous share per
 * core. Each worker keeps its own shared platform reader (base/ is read and
 * parsed once per worker). Small fleets are planned in this thread: starting a
 * worker costs more than a few renders.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { UnavailableError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { withoutDirs } from '../gitops/repo-reader.js';
import { readClusterRegistry } from '../fleet/cluster-registry.js';
import { planUpgrade, upgradeTargets, type ClusterUpgrade, type PlanUpgradeOptions } from '../fleet/plan-upgrade.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

/** What one worker is given. */
export interface UpgradeWorkerInput {
  readonly dir: string;
  readonly reference: string;
  readonly clusters: readonly string[];
  readonly generatorVersion: string;
  readonly platformCommit?: string;
}

/** Options of {@link planUpgradeInParallel}. */
export type ParallelPlanOptions = Omit<PlanUpgradeOptions, 'onCluster'> & {
  /** Worker threads at most. @default os.availableParallelism() */
  readonly workers?: number;
  /** Fewer clusters than this are planned in this thread. @default 64 */
  readonly minClustersPerWorker?: number;
  /** Repository directories the plan does not see (a batch run's other clusters, as a clone of one cluster would not have them). */
  readonly leaveOut?: readonly string[];
};

const fromSource = import.meta.url.endsWith('.ts');

function runWorker(input: UpgradeWorkerInput): Promise<ClusterUpgrade[]> {
  return new Promise((resolve, reject) => {
    const worker = fromSource
      ? // Run from source (tsx: tests, bench), this module is .ts and so is the worker's entry; Node 20
        // does not apply the parent's module hooks inside a worker, so it registers tsx's itself.
        new Worker(
          `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(new URL('./upgrade-plan-worker.ts', import.meta.url).href)}); });`,
          { eval: true, workerData: input },
        )
      : new Worker(new URL('./upgrade-plan-worker.js', import.meta.url), { workerData: input });
    let settled = false;
    worker.on('message', (message: { kind: 'done'; plans: ClusterUpgrade[] } | { kind: 'error'; message: string } | { kind: 'progress' }) => {
      if (message.kind === 'done') {
        settled = true;
        resolve(message.plans);
      } else if (message.kind === 'error') {
        settled = true;
        reject(new UnavailableError(`planning the upgrade failed in a worker: ${message.message}`));
      }
    });
    worker.on('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.on('exit', (code) => {
      if (!settled) reject(new UnavailableError(`an upgrade worker exited with code ${code} before it finished`));
    });
  });
}

/**
 * Plans the upgrade of the work tree at `dir` like planUpgrade, over up to one
 * worker per core; the plans come back in name order.
 * @throws as planUpgrade for named clusters that cannot be upgraded
 */
export async function planUpgradeInParallel(dir: string, options: ParallelPlanOptions): Promise<ClusterUpgrade[]> {
  const reference = options.reference ?? REFERENCE_ENVIRONMENT;
  const reader = withoutDirs(new FsRepoReader(dir), options.leaveOut ?? []);
  const registry = await readClusterRegistry(reader, { reference });
  // Refusals (the reference, a hand-made directory, an unknown name) are thrown here, before any worker starts.
  const names = upgradeTargets(registry, options.clusters).map((c) => c.name);
  // A plan that leaves directories out is planned here: a worker reads the work tree whole.
  const workers =
    (options.leaveOut?.length ?? 0) > 0
      ? 1
      : Math.min(options.workers ?? availableParallelism(), Math.floor(names.length / (options.minClustersPerWorker ?? 64)));
  if (workers < 2) return planUpgrade(reader, { ...options, clusters: names });
  const size = Math.ceil(names.length / workers);
  const shares = Array.from({ length: workers }, (_, i) => names.slice(i * size, (i + 1) * size)).filter((share) => share.length > 0);
  const results = await Promise.all(
    shares.map((clusters) =>
      runWorker({
        dir,
        reference,
        clusters,
        generatorVersion: options.generatorVersion,
        ...(options.platformCommit !== undefined ? { platformCommit: options.platformCommit } : {}),
      }),
    ),
  );
  return results.flat();
}
