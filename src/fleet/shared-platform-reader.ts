/**
 * A RepoReader for rendering many clusters of one repository in a row: what
 * every render reads alike (base/, scaffold.yaml, a catalog's shared roots,
 * the reference environment) is read from the underlying reader once and kept,
 * and each cluster's own directory is served from the files the caller already
 * loaded. This is the "build of what clusters have in common" that makes an
 * upgrade of a thousand clusters cost one platform read plus one render each.
 */
import type { RepoReader } from '../gitops/repo-reader.js';

/** Caches every read outside `clusters/`, and inside the reference environment. */
export class SharedPlatformReader {
  readonly #reader: RepoReader;
  readonly #reference: string;
  readonly #reads = new Map<string, Promise<string | undefined>>();
  readonly #lists = new Map<string, Promise<string[]>>();
  readonly #dirs = new Map<string, Promise<boolean>>();

  constructor(reader: RepoReader, reference: string) {
    this.#reader = reader;
    this.#reference = reference;
  }

  /** Whether `path` is the same for every cluster's render (so it may be kept). */
  #shared(path: string): boolean {
    const clean = path.replace(/\/+$/, '');
    if (clean === 'clusters') return false;
    return !clean.startsWith('clusters/') || clean === `clusters/${this.#reference}` || clean.startsWith(`clusters/${this.#reference}/`);
  }

  /**
   * A reader for rendering `clusters/<name>/`: shared paths from the cache, the
   * cluster's own files from `own` (repository-relative paths), anything else
   * (another cluster) straight from the underlying reader.
   */
  forCluster(name: string, own: ReadonlyMap<string, string>): RepoReader {
    const prefix = `clusters/${name}/`;
    const ownPaths = [...own.keys()].sort();
    return {
      read: (path) => {
        if (path.startsWith(prefix)) return Promise.resolve(own.get(path));
        return this.#shared(path) ? memo(this.#reads, path, () => this.#reader.read(path)) : this.#reader.read(path);
      },
      list: (dir) => {
        const clean = dir.replace(/\/+$/, '');
        if (`${clean}/`.startsWith(prefix)) return Promise.resolve(ownPaths.filter((p) => p.startsWith(`${clean}/`)));
        return this.#shared(clean) ? memo(this.#lists, clean, () => this.#reader.list(clean)).then((l) => [...l]) : this.#reader.list(clean);
      },
      isDirectory: (path) => {
        const clean = path.replace(/\/+$/, '');
        if (`${clean}/`.startsWith(prefix)) return Promise.resolve(ownPaths.some((p) => p.startsWith(`${clean}/`)));
        return this.#shared(clean) ? memo(this.#dirs, clean, () => this.#reader.isDirectory(clean)) : this.#reader.isDirectory(clean);
      },
    };
  }
}

function memo<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let value = cache.get(key);
  if (value === undefined) {
    value = load();
    cache.set(key, value);
  }
  return value;
}
