/**
 * RepoReader over a working tree on disk. Every path is checked to stay inside
 * the repository before it is touched, and again after the file system
 * resolved it: a symbolic link that leads out of the tree is refused, not
 * followed (clones are also checked as a whole by `work-tree-guard.ts`; this
 * covers trees on disk that no clone produced, such as the CLI's `--repo`).
 */
import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { ValidationError } from '../errors.js';
import { assertRepoPath } from '../gitops/file-tree.js';
import type { RepoReader } from '../gitops/repo-reader.js';

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Reads the working tree rooted at `root` (an absolute directory). */
export class FsRepoReader implements RepoReader {
  #realRoot: Promise<string> | undefined;

  constructor(private readonly root: string) {}

  /** `path` (already checked lexically) resolved by the file system, refused when it lands outside the tree. */
  async #confined(path: string): Promise<string> {
    const full = join(this.root, path);
    const real = await realpath(full);
    const root = await (this.#realRoot ??= realpath(this.root));
    const rel = relative(root, real);
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel) || rel.split(sep)[0] === '.git') {
      throw new ValidationError([{ field: 'repository', message: `${path} is a symbolic link (or lies below one) that leaves the work tree` }]);
    }
    return real;
  }

  async read(path: string): Promise<string | undefined> {
    try {
      return await readFile(await this.#confined(assertRepoPath(path)), 'utf8');
    } catch (error) {
      if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'EISDIR') return undefined;
      throw error;
    }
  }

  async list(dir: string): Promise<string[]> {
    const prefix = dir === '' || dir === '.' ? '' : assertRepoPath(dir.replace(/\/+$/, ''));
    let base: string;
    let entries;
    try {
      base = prefix === '' ? await (this.#realRoot ??= realpath(this.root)) : await this.#confined(prefix);
      entries = await readdir(base, { recursive: true, withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const files: string[] = [];
    for (const entry of entries) {
      // Dirent types come from lstat: links are neither listed nor descended into.
      if (!entry.isFile()) continue;
      const below = relative(base, join(entry.parentPath, entry.name)).split(sep).join('/');
      const rel = prefix === '' ? below : `${prefix}/${below}`;
      if (rel.split('/').includes('.git')) continue;
      files.push(rel);
    }
    return files.sort();
  }

  async isDirectory(path: string): Promise<boolean> {
    try {
      return (await stat(await this.#confined(assertRepoPath(path.replace(/\/+$/, ''))))).isDirectory();
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }
}
