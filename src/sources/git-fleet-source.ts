/**
 * FleetSource over git: a partial, sparse clone of the branch (`clusters/`,
 * or one cluster's directory for a removal, plus the top-level files), read
 * with the pure fleet core. Answers are kept for a short while per (repository,
 * branch): the dashboard and a ResourceSetInputProvider poll, and a fleet
 * changes at the pace of runs.
 *
 * Like the catalog and graph sources, this reaches repositories the service
 * can read (and, for a removal or an upgrade, push to) on its own: no git
 * credentials are kept. Upgrades and removals are delivered through
 * ChangeDeliveries: pushed, or through a pull/merge request opened with the
 * service's forge token or GitHub App.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pushChangeDelivery, SERVICE_FORGE_CREDENTIALS, type ChangeDeliveries, type ChangeDelivery } from '../delivery/change-delivery.js';
import type { DeliverySettings } from '../delivery/delivery.js';
import { removalReviewText, upgradeReviewText, type FleetReviewText } from '../delivery/fleet-request-text.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { writeTree } from '../git/write-tree.js';
import { readClusterRegistry } from '../fleet/cluster-registry.js';
import { planRemoval } from '../fleet/plan-removal.js';
import { readClusterSealedSecrets } from '../fleet/sealing-freshness.js';
import type { SealedSecretRecord } from '../gitops/sealed-with.js';
import { anonymousReadFailure } from './anonymous-read-failure.js';
import { UnavailableError } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import type { GitCredentials, GitRemote, GitWorkspace } from '../runner/ports.js';
import { packageVersion } from '../package-paths.js';
import type { Fleet, FleetDelivery, FleetRemoval, FleetSource, FleetTarget, FleetUpgrade } from '../service/fleet-source.js';
import { platformCommitOf } from '../git/render-work-tree.js';
import { removalMessage } from '../workspace/remove-work-tree.js';
import { upgradeMessage } from '../workspace/upgrade-message.js';
import { upgradeWorkTree } from '../workspace/upgrade-work-tree.js';
import type { WorkTreeVerify } from '../workspace/verify-work-tree.js';

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
  /** Verifies an upgraded cluster before it is committed. @default createWorkTreeVerifier() */
  readonly verify?: WorkTreeVerify;
  /** How upgrades and removals reach the branch. @default push only (pull_request is refused) */
  readonly deliveries?: ChangeDeliveries;
}

/** Without forge credentials the service can only push. */
const pushOnly: ChangeDeliveries = (settings) => {
  if (settings !== undefined && settings.mode !== 'push') throw new UnavailableError(`this service is not configured to open pull requests (no forge credentials: ${SERVICE_FORGE_CREDENTIALS})`);
  return pushChangeDelivery;
};

/** Reads a repository's fleet and removes clusters from it; implements the service's FleetSource. */
export class GitFleetSource implements FleetSource {
  readonly #git: GitRemote;
  readonly #reference: string;
  readonly #logger: Logger;
  readonly #workRoot: string;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #verify: WorkTreeVerify | undefined;
  readonly #deliveries: ChangeDeliveries;
  readonly #cache = new Map<string, { reading: Promise<Fleet>; expires: number }>();
  readonly #sealedSecrets = new Map<string, Promise<readonly SealedSecretRecord[]>>();

  constructor(deps: GitFleetSourceDeps) {
    this.#git = deps.git;
    this.#reference = deps.reference;
    this.#logger = deps.logger ?? silentLogger;
    this.#workRoot = deps.workRoot ?? tmpdir();
    this.#ttlMs = Math.max(0, deps.ttlMs ?? 10_000);
    this.#now = deps.now ?? Date.now;
    this.#verify = deps.verify;
    this.#deliveries = deps.deliveries ?? pushOnly;
  }

  checkDelivery(settings: DeliverySettings | undefined, repositoryUrl: string): void {
    this.#deliveries(settings, repositoryUrl);
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

  async remove(target: FleetTarget & { readonly cluster: string; readonly requestedBy: string; readonly delivery?: FleetDelivery }): Promise<FleetRemoval> {
    const delivery = this.#deliveries(target.delivery?.settings, target.repositoryUrl);
    const credentials = await delivery.credentials?.();
    const removal = await this.#inClone(target, [`clusters/${target.cluster}`], async (workspace) => {
      const plan = await planRemoval(new FsRepoReader(workspace.dir), target.cluster, this.#reference);
      await writeTree(workspace.dir, new Map(), { remove: plan.remove });
      const sha = await workspace.commit({
        paths: plan.remove,
        message: removalMessage(plan),
        trailers: { 'Scaffold-Cluster': plan.name, 'Scaffold-Action': 'remove', 'Requested-By': target.requestedBy },
        author: { name: 'gitops-scaffolder', email: 'gitops-scaffolder@localhost' },
      });
      if (sha === undefined) return { ...plan, commit: await workspace.head() };
      const delivered = await this.#deliver(delivery, workspace, target, removalReviewText(plan, target.branch));
      return { ...plan, commit: delivered.sha, ...(delivered.request ? { request: delivered.request } : {}) };
    }, undefined, credentials);
    this.#cache.delete(JSON.stringify([target.repositoryUrl, target.branch]));
    this.#logger.info(
      { cluster: removal.name, commit: removal.commit, removed: removal.remove.length, kept: removal.kept.length, requestedBy: target.requestedBy, ...(removal.request ? { request: removal.request.url } : {}) },
      'cluster removed',
    );
    return removal;
  }

  async upgrade(target: Parameters<FleetSource['upgrade']>[0]): Promise<FleetUpgrade[]> {
    const delivery = target.dryRun ? pushChangeDelivery : this.#deliveries(target.delivery?.settings, target.repositoryUrl);
    const credentials = await delivery.credentials?.();
    // The whole tree: a render reads base/, the reference environment and whatever else the platform keeps at the top.
    const upgrades = await this.#inClone(target, ['clusters'], async (workspace) => {
      const outcomes = await upgradeWorkTree(workspace.dir, {
        reference: this.#reference,
        clusters: target.clusters,
        dryRun: target.dryRun,
        generatorVersion: packageVersion(),
        ...(this.#verify !== undefined ? { verify: this.#verify } : {}),
      });
      const written = outcomes.filter((o) => o.written);
      for (const outcome of written) {
        await workspace.commit({
          paths: [...outcome.added, ...outcome.modified, ...outcome.removed],
          message: upgradeMessage(outcome, this.#reference),
          trailers: { 'Scaffold-Cluster': outcome.name, 'Scaffold-Action': 'upgrade', 'Requested-By': target.requestedBy },
          author: { name: 'gitops-scaffolder', email: 'gitops-scaffolder@localhost' },
        });
      }
      // Like a removal, a writer in between is rebased over (each commit touches only its cluster), so the shas are read after delivery.
      const wave = target.delivery?.wave ?? { rolloutId: 'direct', wave: 0, waves: 1 };
      const delivered = written.length === 0 ? undefined : await this.#deliver(delivery, workspace, target, upgradeReviewText(wave, written, this.#reference, target.branch));
      const commits = new Map<string, string | undefined>();
      for (const outcome of written) commits.set(outcome.name, await workspace.lastCommitTouching([`clusters/${outcome.name}`]));
      return outcomes.map(({ name, status, added, modified, removed, credentialsKept, message, findings }): FleetUpgrade => {
        const commit = commits.get(name);
        const request = commit !== undefined ? delivered?.request : undefined;
        return {
          name,
          status,
          added,
          modified,
          removed,
          credentialsKept,
          ...(message !== undefined ? { message } : {}),
          ...(findings !== undefined ? { findings } : {}),
          ...(commit !== undefined ? { commit } : {}),
          ...(request !== undefined ? { request } : {}),
        };
      });
    }, [], credentials);
    if (!target.dryRun) this.#cache.delete(JSON.stringify([target.repositoryUrl, target.branch]));
    return upgrades;
  }

  /** Delivers the workspace's new commits: one push, or a request described by `text` (see ChangeDelivery). */
  #deliver(delivery: ChangeDelivery, workspace: GitWorkspace, target: FleetTarget & { readonly delivery?: FleetDelivery }, text: FleetReviewText) {
    const onRequest = target.delivery?.onRequest;
    return delivery.deliver({ ...text, workspace, branch: target.branch, ...(onRequest ? { onRequest } : {}), ...(target.signal ? { signal: target.signal } : {}) });
  }

  /** `topLevelExcept`: also check out every top-level directory but these (see CloneOptions.sparseTopLevelExcept). */
  async #inClone<T>(target: FleetTarget, sparsePaths: readonly string[], work: (workspace: GitWorkspace) => Promise<T>, topLevelExcept?: readonly string[], credentials?: GitCredentials): Promise<T> {
    const root = await mkdtemp(join(this.#workRoot, 'gitops-fleet-'));
    try {
      let workspace: GitWorkspace;
      try {
        workspace = await this.#git.clone({ url: target.repositoryUrl, branch: target.branch, dir: join(root, 'repo'), sparsePaths, ...(topLevelExcept !== undefined ? { sparseTopLevelExcept: topLevelExcept } : {}), ...(credentials ? { credentials } : {}), ...(target.signal ? { signal: target.signal } : {}) });
      } catch (error) {
        const why = credentials
          ? `the service's forge credentials (${SERVICE_FORGE_CREDENTIALS}) were refused for this repository`
          : 'the fleet is only read from repositories reachable without credentials';
        throw anonymousReadFailure(error, why);
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

