/**
 * FleetSource over git: a partial, sparse clone of the branch (`clusters/`,
 * or one cluster's directory for a removal, plus the top-level files), read
 * with the pure fleet core. An answer is kept per (repository, branch) and
 * reused while the branch still points at the commit it was read from: the
 * dashboard and a ResourceSetInputProvider poll, a fleet changes at the pace of
 * runs, and an `ls-remote` costs a round trip where a clone costs seconds. So
 * a run that lands shows in the next read, not after a cache expires.
 *
 * Like the catalog and graph sources, this reaches repositories the service
 * can read on its own: no git credentials are kept. It only reads: an upgrade
 * or a removal is written by a run (action `upgrade` / `remove`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gitLinkError, withGitObjectReader } from '../git/git-object-reader.js';
import { runGit } from '../git/git-process.js';
import { readClusterRegistry } from '../fleet/cluster-registry.js';
import { PROVENANCE_FILE } from '../gitops/provenance.js';
import { planRemoval } from '../fleet/plan-removal.js';
import { readClusterSealedSecrets } from '../fleet/sealing-freshness.js';
import type { SealedSecretRecord } from '../gitops/sealed-with.js';
import { anonymousReadFailure } from './anonymous-read-failure.js';
import { readBranchHead, type BranchHeadReader } from '../git/branch-head.js';
import { silentLogger, type Logger } from '../logger.js';
import type { CloneOptions, GitRemote, GitWorkspace } from '../run/ports.js';
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
  /**
   * How long a fleet read is reused without asking where the branch points
   * (a burst of requests asks once); after that it is reused while the branch
   * head is unchanged. @default 2000
   */
  readonly ttlMs?: number;
  /** Where a branch points now. @default readBranchHead (`git ls-remote`) */
  readonly branchHead?: BranchHeadReader;
  /** @default Date.now */
  readonly now?: () => number;
}

/** A fleet read, kept while its branch does not move. */
interface FleetReading {
  readonly reading: Promise<Fleet>;
  /** The branch head it was read at, once read. */
  commit?: string;
  /** When the branch was last seen at `commit` (infinite while the read is in flight). */
  checked: number;
}

/** Reads a repository's fleet and what changing it would do; implements the service's FleetSource. */
export class GitFleetSource implements FleetSource {
  readonly #git: GitRemote;
  readonly #reference: string;
  readonly #logger: Logger;
  readonly #workRoot: string;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #branchHead: BranchHeadReader;
  readonly #cache = new Map<string, FleetReading>();
  readonly #sealedSecrets = new Map<string, Promise<readonly SealedSecretRecord[]>>();

  constructor(deps: GitFleetSourceDeps) {
    this.#git = deps.git;
    this.#reference = deps.reference;
    this.#logger = deps.logger ?? silentLogger;
    this.#workRoot = deps.workRoot ?? tmpdir();
    this.#ttlMs = Math.max(0, deps.ttlMs ?? 2000);
    this.#branchHead = deps.branchHead ?? readBranchHead;
    this.#now = deps.now ?? Date.now;
  }

  async fleet(target: FleetTarget): Promise<Fleet> {
    const key = JSON.stringify([target.repositoryUrl, target.branch]);
    const cached = this.#cache.get(key);
    if (cached !== undefined) {
      if (cached.commit === undefined || cached.checked + this.#ttlMs > this.#now()) return cached.reading;
      // A head that cannot be read is no answer: the read below says what is wrong.
      const head = await this.#branchHead({
        repositoryUrl: target.repositoryUrl,
        branch: target.branch,
        ...(target.signal ? { signal: target.signal } : {}),
      }).catch(() => undefined);
      if (head === cached.commit && this.#cache.get(key) === cached) {
        cached.checked = this.#now();
        return cached.reading;
      }
      const newer = this.#cache.get(key);
      if (newer !== undefined && newer !== cached) return newer.reading;
    }
    const entry: FleetReading = { reading: this.#read(target), checked: Number.POSITIVE_INFINITY };
    this.#cache.set(key, entry);
    entry.reading.then(
      (fleet) => {
        entry.commit = fleet.commit;
        entry.checked = this.#now();
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
    // Only each cluster's provenance.yaml is read (from git objects): only those blobs are fetched, and no file is written.
    return this.#inClone(target, { sparsePaths: [], fetchFiles: [`clusters/*/${PROVENANCE_FILE}`] }, async (workspace) => {
      const platformCommit = await platformCommitOf(workspace.dir, this.#reference);
      // The clone's git objects: a cluster path that is a link is refused by its path, never followed.
      // Nothing is checked out: the directories are named by the commit's tree.
      const names = await clusterDirectoriesOf(workspace.dir);
      const clusters = await withGitObjectReader(workspace.dir, (reader) =>
        readClusterRegistry(reader, { reference: this.#reference, names, ...(platformCommit !== undefined ? { platformCommit } : {}) }),
      );
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
    const read = () =>
      this.#inClone(target, { sparsePaths: [`clusters/${target.cluster}`] }, (workspace) =>
        withGitObjectReader(workspace.dir, (reader) => readClusterSealedSecrets(reader, target.cluster)),
      );
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
    return this.#inClone(target, { sparsePaths: [`clusters/${target.cluster}`] }, (workspace) =>
      withGitObjectReader(workspace.dir, (reader) => planRemoval(reader, target.cluster, this.#reference)),
    );
  }

  async previewUpgrade(target: FleetTarget & { readonly clusters: readonly string[] }): Promise<FleetUpgrade[]> {
    // The whole tree: a render reads base/, the reference environment and whatever else the platform keeps at the top.
    return this.#inClone(target, { sparsePaths: ['clusters'], sparseTopLevelExcept: [] }, async (workspace) => {
      const plans = await upgradeWorkTree(workspace.dir, {
        reference: this.#reference,
        clusters: target.clusters,
        dryRun: true,
        generatorVersion: packageVersion(),
      });
      return plans.map(({ name, status, added, modified, removed, credentialsKept, message, tree, before }): FleetUpgrade => ({
        name,
        status,
        added,
        modified,
        removed,
        credentialsKept,
        ...(message !== undefined ? { message } : {}),
        ...(tree !== undefined ? { tree } : {}),
        ...(before !== undefined ? { before } : {}),
      }));
    });
  }

  /** Runs `work` in a partial clone of the target holding what `sparse` names (see CloneOptions), removed afterwards. */
  async #inClone<T>(
    target: FleetTarget,
    sparse: Pick<CloneOptions, 'sparsePaths' | 'sparseTopLevelExcept' | 'fetchFiles'>,
    work: (workspace: GitWorkspace) => Promise<T>,
  ): Promise<T> {
    const root = await mkdtemp(join(this.#workRoot, 'gitops-fleet-'));
    try {
      let workspace: GitWorkspace;
      try {
        workspace = await this.#git.clone({
          url: target.repositoryUrl,
          branch: target.branch,
          dir: join(root, 'repo'),
          ...sparse,
          ...(target.signal ? { signal: target.signal } : {}),
        });
      } catch (error) {
        throw anonymousReadFailure(error, 'the fleet is only read from repositories reachable without credentials', {
          logger: this.#logger,
          repositoryUrl: target.repositoryUrl,
          branch: target.branch,
          what: 'fleet',
        });
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

/**
 * The directories directly under `clusters/` in HEAD's tree. A file there is no
 * cluster; a symbolic link or a submodule, there or as `clusters` itself, is
 * refused by its path, as the object reader refuses one (it is never followed).
 */
async function clusterDirectoriesOf(dir: string): Promise<string[]> {
  // `clusters` names the entry itself when it is no directory; `clusters/` what a directory holds.
  const listed = await runGit(['ls-tree', '-z', 'HEAD', '--', 'clusters', 'clusters/'], {
    cwd: dir,
    env: { GIT_CEILING_DIRECTORIES: dirname(dir), GIT_LITERAL_PATHSPECS: '1' },
  });
  const names: string[] = [];
  for (const record of listed.stdout.split('\0')) {
    const match = /^(\d{6}) \w+ [0-9a-f]+\t(clusters(?:\/([^/]+))?)$/s.exec(record);
    if (match === null) continue;
    const [, mode, path, name] = match;
    if (mode === '120000' || mode === '160000') throw gitLinkError(path!, mode);
    if (mode === '040000' && name !== undefined) names.push(name);
  }
  return names;
}
