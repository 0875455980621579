/**
 * CatalogSource over git: a partial, sparse clone of the repository's branch
 * with no directory in the cone, so only its top-level files (scaffold.yaml)
 * are checked out, then the descriptor's `attributes`.
 *
 * Answers are kept briefly per (repository, branch), with the commit they were
 * read at: the dashboard asks again as an operator edits the form, and a
 * catalog changes rarely. Like the graph source, this reads repositories the
 * service can reach on its own (no credentials are kept).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError, UnavailableError, ValidationError } from '../errors.js';
import { withGitObjectReader } from '../git/git-object-reader.js';
import { parsePlatformDescriptor, PLATFORM_DESCRIPTOR_PATH } from '../gitops/platform-descriptor.js';
import { anonymousReadFailure } from './anonymous-read-failure.js';
import { silentLogger, type Logger } from '../logger.js';
import { CLUSTER_ATTRIBUTES } from '../model/cluster-spec.js';
import type { GitRemote } from '../run/ports.js';
import type { Catalog, CatalogAttribute, CatalogSource } from '../service/catalog-source.js';

/** Collaborators of {@link GitCatalogSource}. */
export interface GitCatalogSourceDeps {
  readonly git: GitRemote;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Where clones are made (each removed after use). @default os.tmpdir() */
  readonly workRoot?: string;
  /** How long an answer is reused for the same repository and branch. @default 30000 */
  readonly ttlMs?: number;
  /** Answers kept. @default 32 */
  readonly cacheSize?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

interface Entry {
  readonly reading: Promise<{ catalog: Catalog; commit: string }>;
  expires: number;
}

/** Reads a repository's layer catalog from its scaffold.yaml; implements the service's CatalogSource. */
export class GitCatalogSource implements CatalogSource {
  readonly #git: GitRemote;
  readonly #logger: Logger;
  readonly #workRoot: string;
  readonly #ttlMs: number;
  readonly #cacheSize: number;
  readonly #now: () => number;
  /** Answers and reads in progress by (repository, branch); oldest first. */
  readonly #cache = new Map<string, Entry>();

  constructor(deps: GitCatalogSourceDeps) {
    this.#git = deps.git;
    this.#logger = deps.logger ?? silentLogger;
    this.#workRoot = deps.workRoot ?? tmpdir();
    this.#ttlMs = Math.max(0, deps.ttlMs ?? 30_000);
    this.#cacheSize = Math.max(1, deps.cacheSize ?? 32);
    this.#now = deps.now ?? Date.now;
  }

  async catalog(input: { readonly repositoryUrl: string; readonly branch: string; readonly signal?: AbortSignal }): Promise<Catalog> {
    const { repositoryUrl, branch, signal } = input;
    signal?.throwIfAborted();
    const key = JSON.stringify([repositoryUrl, branch]);
    let entry = this.#cache.get(key);
    if (entry !== undefined && entry.expires <= this.#now()) {
      this.#cache.delete(key);
      entry = undefined;
    }
    if (entry === undefined) {
      // Not tied to this caller's signal: concurrent callers share the clone.
      const reading = this.#read(repositoryUrl, branch);
      const created: Entry = { reading, expires: Number.POSITIVE_INFINITY };
      entry = created;
      this.#cache.set(key, created);
      reading.then(
        () => {
          created.expires = this.#now() + this.#ttlMs;
        },
        () => {
          if (this.#cache.get(key) === created) this.#cache.delete(key);
        },
      );
      while (this.#cache.size > this.#cacheSize) this.#cache.delete(this.#cache.keys().next().value as string);
    }
    return (await abortable(entry.reading, signal)).catalog;
  }

  async #read(url: string, branch: string): Promise<{ catalog: Catalog; commit: string }> {
    const started = Date.now();
    const work = await mkdtemp(join(this.#workRoot, 'gitops-catalog-'));
    try {
      let workspace;
      try {
        // Cone mode with no directory: only the top-level files, scaffold.yaml among them.
        workspace = await this.#git.clone({ url, branch, dir: join(work, 'repo'), sparsePaths: [] });
      } catch (error) {
        throw anonymousReadFailure(error, 'the catalog is only read from repositories readable without credentials', {
          logger: this.#logger,
          repositoryUrl: url,
          branch,
          what: 'catalog',
        });
      }
      try {
        const commit = await workspace.head().catch(() => '');
        // From the commit's objects: a scaffold.yaml that is a link is refused, never followed.
        const text = await withGitObjectReader(workspace.dir, (reader) => reader.read(PLATFORM_DESCRIPTOR_PATH));
        let descriptor;
        try {
          descriptor = parsePlatformDescriptor(text);
        } catch (error) {
          if (error instanceof ValidationError) {
            const first = error.issues[0];
            throw new ConflictError(
              `the repository's ${PLATFORM_DESCRIPTOR_PATH} is invalid${first === undefined ? '' : `: ${first.field}: ${first.message}`}`,
              { cause: error },
            );
          }
          throw error;
        }
        const attributes: CatalogAttribute[] = [];
        for (const name of CLUSTER_ATTRIBUTES) {
          const attribute = descriptor.attributes?.[name];
          if (attribute === undefined) continue;
          attributes.push({ name, values: [...attribute.values], ...(attribute.default === undefined ? {} : { default: attribute.default }) });
        }
        this.#logger.debug({ branch, commit, attributes: attributes.length, ms: Date.now() - started }, 'catalog read');
        return { catalog: { attributes }, commit };
      } finally {
        await workspace.dispose().catch(() => undefined);
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
}

/** Waits for `promise` unless `signal` aborts first (the shared read carries on for others). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason instanceof Error ? signal.reason : new UnavailableError('the catalog request was aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
