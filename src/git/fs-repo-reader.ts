/**
 * RepoReader over a working tree on disk. Every path is checked to stay inside
 * the repository before it is touched.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { assertRepoPath } from '../gitops/file-tree.js';
import type { RepoReader } from '../gitops/repo-reader.js';

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Reads the working tree rooted at `root` (an absolute directory). */
export class FsRepoReader implements RepoReader {
  constructor(private readonly root: string) {}

  async read(path: string): Promise<string | undefined> {
    try {
      return await readFile(join(this.root, assertRepoPath(path)), 'utf8');
    } catch (error) {
      if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'EISDIR') return undefined;
      throw error;
    }
  }

  async list(dir: string): Promise<string[]> {
    const base = dir === '' || dir === '.' ? this.root : join(this.root, assertRepoPath(dir.replace(/\/+$/, '')));
    let entries;
    try {
      entries = await readdir(base, { recursive: true, withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const files: string[] = [];
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const rel = relative(this.root, join(entry.parentPath, entry.name)).split(sep).join('/');
      if (rel.split('/').includes('.git')) continue;
      files.push(rel);
    }
    return files.sort();
  }

  async isDirectory(path: string): Promise<boolean> {
    try {
      return (await stat(join(this.root, assertRepoPath(path.replace(/\/+$/, ''))))).isDirectory();
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }
}
