/**
 * Read access to a repository's working tree, the only way the core sees
 * files. `git/fs-repo-reader.ts` implements it on disk; tests may use a map.
 */

/** Reads files of one repository by repository-relative POSIX path. */
export interface RepoReader {
  /** File content as UTF-8, or undefined when there is no such file. */
  read(path: string): Promise<string | undefined>;
  /** The same file's bytes, for readers that copy files as they are (a tree materialized for kustomize). */
  readBytes?(path: string): Promise<Buffer | undefined>;
  /**
   * Every file below `dir` (recursively, repository-relative paths, sorted),
   * or an empty list when the directory does not exist. `.git` is never listed.
   */
  list(dir: string): Promise<string[]>;
  /** Whether `path` is an existing directory. */
  isDirectory(path: string): Promise<boolean>;
}

/**
 * `reader` as if the directories `dirs` (repository-relative) were not there:
 * what a sparse clone without them would show (a batch run's other clusters).
 */
export function withoutDirs(reader: RepoReader, dirs: readonly string[]): RepoReader {
  if (dirs.length === 0) return reader;
  const gone = (path: string) => dirs.some((dir) => path === dir || path.startsWith(`${dir}/`));
  return {
    read: async (path) => (gone(path) ? undefined : reader.read(path)),
    ...(reader.readBytes !== undefined ? { readBytes: async (path: string) => (gone(path) ? undefined : reader.readBytes!(path)) } : {}),
    list: async (dir) => (gone(dir) ? [] : (await reader.list(dir)).filter((path) => !gone(path))),
    isDirectory: async (path) => !gone(path) && reader.isDirectory(path),
  };
}

/** A RepoReader over an in-memory map of path → content. */
export function memoryRepoReader(files: ReadonlyMap<string, string>): RepoReader {
  const sorted = [...files.keys()].sort();
  return {
    async read(path) {
      return files.get(path);
    },
    async list(dir) {
      const prefix = dir === '' || dir === '.' ? '' : `${dir.replace(/\/+$/, '')}/`;
      return sorted.filter((p) => p.startsWith(prefix));
    },
    async isDirectory(path) {
      const prefix = `${path.replace(/\/+$/, '')}/`;
      return sorted.some((p) => p.startsWith(prefix));
    },
  };
}
