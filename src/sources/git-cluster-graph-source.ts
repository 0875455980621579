/**
 * ClusterGraphSource over git: a partial, sparse clone of the run's repository
 * (`base/` and `clusters/<name>/`, nothing else), checked out at the run's last
 * commit, built with `kubectl kustomize` and drawn. A commit never changes, so
 * graphs are kept in memory by (repository, commit, cluster).
 *
 * The service keeps no repository credentials (a run's credentials live only as
 * long as the run), so this reads repositories the service can reach on its
 * own: the embedded default repository, or any remote readable without them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { instance, type Viz } from '@viz-js/viz';
import { ConflictError, NotFoundError, TimeoutError, UnavailableError, ValidationError } from '../errors.js';
import { GitObjectRepoReader } from '../git/git-object-reader.js';
import { runGit } from '../git/git-process.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import { anonymousReadFailure } from './anonymous-read-failure.js';
import type { FluxGraph } from '../graph/flux-graph.js';
import { renderGraph } from '../graph/graph-format.js';
import { silentLogger, type Logger } from '../logger.js';
import type { GitRemote } from '../run/ports.js';
import type { ClusterGraphFormat, ClusterGraphSource } from '../service/cluster-graph-source.js';
import type { RunRecord } from '../run/run-record.js';
import { clusterGraph } from '../workspace/draw-cluster-graph.js';

/** Collaborators of {@link GitClusterGraphSource}. */
export interface GitClusterGraphSourceDeps {
  readonly git: GitRemote;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Where clones are made (each removed after use). @default os.tmpdir() */
  readonly workRoot?: string;
  /** Graphs kept in memory. @default 64 */
  readonly cacheSize?: number;
  /** Reads the graph of `clusters/<cluster>` through the clone's git objects. @default clusterGraph (kubectl kustomize on a copy) */
  readonly readGraph?: (dir: string, cluster: string, reader: RepoReader) => Promise<FluxGraph>;
  /** Upper bound for the checkout of the run's commit. @default 120000 */
  readonly checkoutTimeoutMs?: number;
}

/** Draws a run's cluster graph from its repository; implements the service's ClusterGraphSource. */
export class GitClusterGraphSource implements ClusterGraphSource {
  readonly #git: GitRemote;
  readonly #logger: Logger;
  readonly #workRoot: string;
  readonly #cacheSize: number;
  readonly #readGraph: (dir: string, cluster: string, reader: RepoReader) => Promise<FluxGraph>;
  readonly #checkoutTimeoutMs: number;
  /** Graphs by (repository, commit, cluster), and reads in progress; least recently used first. */
  readonly #cache = new Map<string, Promise<FluxGraph>>();
  #viz: Promise<Viz> | undefined;

  constructor(deps: GitClusterGraphSourceDeps) {
    this.#git = deps.git;
    this.#logger = deps.logger ?? silentLogger;
    this.#workRoot = deps.workRoot ?? tmpdir();
    this.#cacheSize = Math.max(1, deps.cacheSize ?? 64);
    this.#readGraph = deps.readGraph ?? clusterGraph;
    this.#checkoutTimeoutMs = deps.checkoutTimeoutMs ?? 120_000;
  }

  async graph(run: RunRecord, format: ClusterGraphFormat): Promise<string> {
    if (run.gitopsPath === undefined) {
      throw new NotFoundError(`scaffold run ${run.id} has no gitops_path yet: its graph can be drawn once the run has pushed the cluster's tree`);
    }
    const graph = await this.#graphOf(run);
    // One Graphviz instance for the life of the source: creating one compiles the WebAssembly module.
    this.#viz ??= instance();
    return renderGraph(graph, format, { viz: await this.#viz });
  }

  /** The graph at the run's last commit, read once per commit (concurrent callers share the clone). */
  #graphOf(run: RunRecord): Promise<FluxGraph> {
    const sha = run.commits.at(-1)?.sha;
    // Without a commit of its own (a rerun that changed nothing) the run's tree is the branch head: not cacheable.
    if (sha === undefined) return this.#graphAt(run, undefined);
    const key = JSON.stringify([run.repositoryUrl, sha, run.cluster.name]);
    const cached = this.#cache.get(key);
    if (cached !== undefined) {
      this.#cache.delete(key);
      this.#cache.set(key, cached);
      return cached;
    }
    const reading = this.#graphAt(run, sha);
    this.#cache.set(key, reading);
    reading.catch(() => {
      if (this.#cache.get(key) === reading) this.#cache.delete(key);
    });
    while (this.#cache.size > this.#cacheSize) this.#cache.delete(this.#cache.keys().next().value as string);
    return reading;
  }

  async #graphAt(run: RunRecord, sha: string | undefined): Promise<FluxGraph> {
    const cluster = run.cluster.name;
    const started = Date.now();
    const work = await mkdtemp(join(this.#workRoot, 'gitops-graph-'));
    try {
      const dir = join(work, 'repo');
      let workspace;
      try {
        workspace = await this.#git.clone({
          url: run.repositoryUrl,
          branch: run.branch,
          dir,
          sparsePaths: ['base', `clusters/${cluster}`],
          sparseTopLevelExcept: ['clusters'],
        });
      } catch (error) {
        throw readFailure(error, run, this.#logger);
      }
      try {
        if (sha !== undefined && (await workspace.head()) !== sha) {
          // Later commits (other clusters, or a later run of this one) moved the branch on: go back to the run's.
          try {
            await runGit(['checkout', '--quiet', '--detach', sha, '--'], {
              cwd: workspace.dir,
              env: { GIT_CEILING_DIRECTORIES: work },
              timeoutMs: this.#checkoutTimeoutMs,
            });
          } catch (error) {
            throw new NotFoundError(`commit ${sha.slice(0, 12)} of scaffold run ${run.id} is not on branch ${run.branch} any more`, { cause: error });
          }
        }
        const at = sha === undefined ? `the head of ${run.branch}` : `commit ${sha.slice(0, 12)}`;
        // The commit's objects (the checkout above ran no guard): a link is refused by its path, never followed.
        const reader = new GitObjectRepoReader(workspace.dir);
        let graph: FluxGraph;
        try {
          if (!(await reader.isDirectory(`clusters/${cluster}`))) {
            throw new NotFoundError(`clusters/${cluster} is not in the repository at ${at}: scaffold run ${run.id} has not pushed its tree`);
          }
          graph = await this.#readGraph(workspace.dir, cluster, reader);
        } catch (error) {
          if (error instanceof NotFoundError) throw error;
          if (error instanceof ValidationError) {
            throw new ConflictError(`clusters/${cluster} at ${at} does not build: ${error.message}`, { cause: error });
          }
          if (error instanceof TimeoutError) throw new UnavailableError(error.message, { cause: error });
          throw error;
        } finally {
          reader.close();
        }
        this.#logger.debug({ run: run.id, cluster, sha, ms: Date.now() - started }, 'cluster graph read');
        return graph;
      } finally {
        await workspace.dispose().catch(() => undefined);
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
}

/** A clone failure as the graph endpoint reports it (anonymous-read-failure.ts): git's own words go to the log. */
function readFailure(error: unknown, run: RunRecord, logger: Logger): Error {
  return anonymousReadFailure(
    error,
    `run credentials are not kept, so the graph of scaffold run ${run.id} is only drawn for repositories readable without them`,
    {
      logger,
      repositoryUrl: run.repositoryUrl,
      branch: run.branch,
      what: 'graph',
    },
  );
}
