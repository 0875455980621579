/**
 * FleetSource over git: a partial, sparse clone of the branch (`clusters/`,
 * or one cluster's directory for a removal, plus the top-level files), read
 * with the pure fleet core. Answers are kept for a short while per (repository,
 * branch): the dashboard and a ResourceSetInputProvider poll, and a fleet
 * changes at the pace of runs.
 *
 * Like the catalog and graph sources, this reaches repositories the service
 * can read on its own: no git credentials are kept. It only reads: an upgrade
 * or a removal is written by a run (action `upgrade` / `remove`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { readClusterRegistry } from '../fleet/cluster-registry.js';
import { planRemoval } from '../fleet/plan-removal.js';
import { readClusterSealedSecrets } from '../fleet/sealing-freshness.js';
import type { SealedSecretRecord } from '../gitops/sealed-with.js';
import { anonymousReadFailure } from './anonymous-read-failure.js';
import { silentLogger, type Logger } from '../logger.js';
import type { GitRemote, GitWorkspace } from '../runner/ports.js';
import { packageVersion } from '../package-paths.js';
import type { RemovalPlan } from '../fleet/plan-removal.js';
import type { Fleet, FleetSource, FleetTarget, FleetUpgrade } from '../service/fleet-source.js';
import { platformCommitOf } from '../git/render-work-tree.js';
import { upgradeWorkTree } from '../workspace/upgrade-work-tree.js';

/** Collaborators of {@link GitFleetSource}. */
export interface GitFleetSourceDeps {
  readonly git: GitRemote;
  /** The reference environment clusters are compared with. */
  readonly reference: string;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Where clones are made (each removed after use). @default os.tmpdir() */
  readonly workRoot?: string;
  /** How long a fleet read is reused for the same repository and branch. @default 10000 */
  readonly ttlMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/** Reads a repository's fleet and what changing it would do; implements the service's FleetSource. */
export class GitFleetSource implements FleetSource {
  readonly #git: GitRemote;
  readonly #reference: string;
  readonly #logger: Logger;
  readonly #workRoot: string;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, { reading: Promise<Fleet>; expires: number }>();
  readonly #sealedSecrets = new Map<string, Promise<readonly SealedSecretRecord[]>>();

  constructor(deps: GitFleetSourceDeps) {
    this.#git = deps.git;
    this.#reference = deps.reference;
    this.#logger = deps.logger ?? silentLogger;
    this.#workRoot = deps.workRoot ?? tmpdir();
    this.#ttlMs = Math.max(0, deps.ttlMs ?? 10_000);
    this.#now = deps.now ?? Date.now;
  }

  fleet(target: FleetTarget): Promise<Fleet> {
    const key = JSON.stringify([target.repositoryUrl, target.branch]);
    const cached = this.#cache.get(key);
    if (cached !== undefined && cached.expires > this.#now()) return cached.reading;
    const entry = { reading: this.#read(target), expires: Number.POSITIVE_INFINITY };
    this.#cache.set(key, entry);
    entry.reading.then(
      () => {
        entry.expires = this.#now() + this.#ttlMs;
      },
      () => {
        if (this.#cache.get(key) === entry) this.#cache.delete(key);
      },
    );
    // A handful of repositories at most; drop the oldest beyond that.
    while (this.#cache.size > 16) this.#cache.delete(this.#cache.keys().next().value as string);
    return entry.reading;
  }

  async #read(target: FleetTarget): Promise<Fleet> {
    const started = Date.now();
    return this.#inClone(target, ['clusters'], async (workspace) => {
      const platformCommit = await platformCommitOf(workspace.dir, this.#reference);
      const clusters = await readClusterRegistry(new FsRepoReader(workspace.dir), { reference: this.#reference, ...(platformCommit !== undefined ? { platformCommit } : {}) });
      const commit = await workspace.head();
      this.#logger.debug({ branch: target.branch, commit, clusters: clusters.length, ms: Date.now() - started }, 'fleet read');
      return { clusters, commit, ...(platformCommit !== undefined ? { platformCommit } : {}) };
    });
  }

  /**
   * One cluster's directory only: a detail page asks for it, and the fleet read
   * leaves the SealedSecrets unparsed. Kept per fleet commit, so a page polling
   * an unchanged branch costs no clone (a clone of one cluster is ~0.5 s).
   */
  sealedSecrets(target: FleetTarget & { readonly cluster: string; readonly commit?: string }): Promise<readonly SealedSecretRecord[]> {
    const read = () => this.#inClone(target, [`clusters/${target.cluster}`], (workspace) => readClusterSealedSecrets(new FsRepoReader(workspace.dir), target.cluster));
    if (target.commit === undefined) return read();
    const key = JSON.stringify([target.repositoryUrl, target.branch, target.cluster, target.commit]);
    const cached = this.#sealedSecrets.get(key);
    if (cached !== undefined) return cached;
    const reading = read();
    this.#sealedSecrets.set(key, reading);
    reading.catch(() => this.#sealedSecrets.delete(key));
    while (this.#sealedSecrets.size > 64) this.#sealedSecrets.delete(this.#sealedSecrets.keys().next().value as string);
    return reading;
  }

  planRemoval(target: FleetTarget & { readonly cluster: string }): Promise<RemovalPlan> {
    return this.#inClone(target, [`clusters/${target.cluster}`], (workspace) => planRemoval(new FsRepoReader(workspace.dir), target.cluster, this.#reference));
  }

  async previewUpgrade(target: FleetTarget & { readonly clusters: readonly string[] }): Promise<FleetUpgrade[]> {
    // The whole tree: a render reads base/, the reference environment and whatever else the platform keeps at the top.
    return this.#inClone(target, ['clusters'], async (workspace) => {
      const plans = await upgradeWorkTree(workspace.dir, { reference: this.#reference, clusters: target.clusters, dryRun: true, generatorVersion: packageVersion() });
      return plans.map(({ name, status, added, modified, removed, credentialsKept, message }): FleetUpgrade => ({ name, status, added, modified, removed, credentialsKept, ...(message !== undefined ? { message } : {}) }));
    }, []);
  }

  /** `topLevelExcept`: also check out every top-level directory but these (see CloneOptions.sparseTopLevelExcept). */
  async #inClone<T>(target: FleetTarget, sparsePaths: readonly string[], work: (workspace: GitWorkspace) => Promise<T>, topLevelExcept?: readonly string[]): Promise<T> {
    const root = await mkdtemp(join(this.#workRoot, 'gitops-fleet-'));
    try {
      let workspace: GitWorkspace;
      try {
        workspace = await this.#git.clone({ url: target.repositoryUrl, branch: target.branch, dir: join(root, 'repo'), sparsePaths, ...(topLevelExcept !== undefined ? { sparseTopLevelExcept: topLevelExcept } : {}), ...(target.signal ? { signal: target.signal } : {}) });
      } catch (error) {
        throw anonymousReadFailure(error, 'the fleet is only read from repositories reachable without credentials');
      }
      try {
        return await work(workspace);
      } finally {
        await workspace.dispose().catch(() => undefined);
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }
}

