/**
 * Writes the core's FileTree into a working copy. The tree comes from rendering
 * a reference environment that lives in the same repository, so its paths are
 * treated as untrusted: each is checked with assertRepoPath and every directory
 * on the way is resolved to stay inside the root, symlinks included.
 */
import { lstat, mkdir, readFile, readdir, realpath, rmdir, unlink, writeFile } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import { ValidationError } from '../errors.js';
import { type FileTree, assertRepoPath } from '../gitops/file-tree.js';
import { isWithin } from './confined-path.js';

/** Options of {@link writeTree}. */
export interface WriteTreeOptions {
  /**
   * Repository-relative directories the tree owns completely: any file below
   * them that the tree does not contain is deleted, so a re-render drops stale files.
   * @default []
   */
  readonly removeBelow?: readonly string[];
  /**
   * Repository-relative files to delete (when they exist and are not in the
   * tree); directories left empty by that are removed too. This is how a
   * render drops what it wrote before and no longer produces, without touching
   * anything else below the cluster path (`RenderResult.stale`).
   * @default []
   */
  readonly remove?: readonly string[];
}

/** What {@link writeTree} did, as sorted repository-relative paths. */
export interface WriteTreeResult {
  /** Created or changed. */
  readonly written: string[];
  /** Deleted: named by `remove`, or below a `removeBelow` directory, and not in the tree. */
  readonly removed: string[];
  /** Already held the same bytes; not rewritten, so their mtime is kept. */
  readonly unchanged: string[];
}

function refuse(path: string, message: string, field = 'path'): ValidationError {
  return new ValidationError([{ field, message: `${JSON.stringify(path)} ${message}` }]);
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Resolves repository-relative directories to real directories inside the root,
 * one segment at a time, so no symlink on the way can lead outside. Results are
 * cached for the duration of one writeTree call.
 */
class DirectoryResolver {
  private readonly resolved = new Map<string, string>();

  constructor(private readonly realRoot: string) {
    this.resolved.set('', realRoot);
  }

  private inside(real: string): boolean {
    return isWithin(real, this.realRoot);
  }

  /**
   * @returns the real directory, or undefined when it does not exist and `create` is false
   * @throws ValidationError when a segment is a file or a symlink leaving the root
   */
  async resolve(dir: string, create: boolean): Promise<string | undefined> {
    const cached = this.resolved.get(dir);
    if (cached !== undefined) return cached;
    const parentPath = posix.dirname(dir) === '.' ? '' : posix.dirname(dir);
    const parent = await this.resolve(parentPath, create);
    if (parent === undefined) return undefined;
    let real = join(parent, posix.basename(dir));
    let info;
    try {
      info = await lstat(real);
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
      if (!create) return undefined;
      await mkdir(real);
      this.resolved.set(dir, real);
      return real;
    }
    if (info.isSymbolicLink()) {
      try {
        real = await realpath(real);
      } catch {
        throw refuse(dir, 'is a dangling symlink');
      }
      if (!this.inside(real)) throw refuse(dir, 'is a symlink that points outside the repository');
      // assertRepoPath keeps `.git` out of the text; a link must not lead there either (a hook, the objects).
      if (relative(this.realRoot, real).split(sep).includes('.git')) throw refuse(dir, 'is a symlink that points into .git');
      info = await lstat(real);
    }
    if (!info.isDirectory()) throw refuse(dir, 'is not a directory');
    this.resolved.set(dir, real);
    return real;
  }
}

/** Deletes what the tree no longer has below `dir`; returns whether `real` ended up empty. */
async function removeStale(real: string, dir: string, tree: FileTree, removed: string[]): Promise<boolean> {
  let empty = true;
  for (const entry of await readdir(real, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    const full = join(real, entry.name);
    // A nested repository is not ours to clean.
    if (entry.name === '.git') {
      empty = false;
      continue;
    }
    // Dirent types come from lstat: a symlink is removed as a link, never followed.
    if (entry.isDirectory()) {
      if (await removeStale(full, path, tree, removed)) await rmdir(full);
      else empty = false;
    } else if (tree.has(path)) {
      empty = false;
    } else {
      await unlink(full);
      removed.push(path);
    }
  }
  return empty;
}

/**
 * Deletes one file (or symlink, never followed), then each parent directory it
 * leaves empty, up to the repository root. A directory is only removed as
 * itself, never through a symlink.
 * @returns whether the file existed and was deleted
 */
async function removeFile(lookup: DirectoryResolver, path: string): Promise<boolean> {
  const parentOf = (p: string): string => (posix.dirname(p) === '.' ? '' : posix.dirname(p));
  const parent = await lookup.resolve(parentOf(path), false);
  if (parent === undefined) return false;
  const target = join(parent, posix.basename(path));
  let info;
  try {
    info = await lstat(target);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
  if (info.isDirectory()) return false;
  await unlink(target);
  for (let dir = parentOf(path); dir !== ''; dir = parentOf(dir)) {
    const above = await lookup.resolve(parentOf(dir), false);
    if (above === undefined) break;
    const full = join(above, posix.basename(dir));
    const here = await lstat(full).catch(() => undefined);
    if (!here?.isDirectory() || (await readdir(full)).length > 0) break;
    await rmdir(full);
  }
  return true;
}

/**
 * Writes `tree` below `root`: missing directories are created, files whose
 * bytes differ are rewritten, identical ones are left alone, and stale files
 * below `removeBelow` are deleted (before writing, so a file can become a
 * directory and back). A symlink at a file's own path is replaced by a regular
 * file rather than written through.
 *
 * Every path is validated before anything is touched.
 *
 * @throws ValidationError when a path is absolute, contains `..`, names a
 *   directory, or leads through a symlink outside `root`
 */
export async function writeTree(root: string, tree: FileTree, options: WriteTreeOptions = {}): Promise<WriteTreeResult> {
  for (const path of tree.keys()) {
    assertRepoPath(path);
    if (path === '.' || path.endsWith('/')) throw refuse(path, 'names a directory, not a file');
  }
  const removeBelow = (options.removeBelow ?? []).map((dir) => {
    assertRepoPath(dir, 'removeBelow');
    const trimmed = dir.replace(/\/+$/, '');
    // The whole repository is never "owned" by one render.
    if (trimmed === '.' || trimmed === '') throw refuse(dir, 'is the repository root', 'removeBelow');
    return trimmed;
  });

  const remove = (options.remove ?? []).map((path) => {
    assertRepoPath(path, 'remove');
    if (path === '.' || path.endsWith('/')) throw refuse(path, 'names a directory, not a file', 'remove');
    return path;
  });

  const realRoot = await realpath(root);
  const written: string[] = [];
  const removed: string[] = [];
  const unchanged: string[] = [];

  const lookup = new DirectoryResolver(realRoot);
  for (const dir of removeBelow) {
    const real = await lookup.resolve(dir, false);
    if (real !== undefined) await removeStale(real, dir, tree, removed);
  }
  for (const path of remove) {
    if (tree.has(path) || removed.includes(path)) continue;
    if (await removeFile(lookup, path)) removed.push(path);
  }

  // A fresh resolver: removing stale files may have deleted directories the first one cached.
  const resolver = new DirectoryResolver(realRoot);
  for (const [path, content] of tree) {
    const parentPath = posix.dirname(path) === '.' ? '' : posix.dirname(path);
    const parent = (await resolver.resolve(parentPath, true)) as string;
    const target = join(parent, posix.basename(path));
    const bytes = Buffer.from(content, 'utf8');
    let info;
    try {
      info = await lstat(target);
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
    }
    if (info?.isDirectory()) throw refuse(path, 'is a directory in the working tree');
    if (info?.isSymbolicLink()) {
      await unlink(target);
    } else if (info?.isFile() && (await readFile(target)).equals(bytes)) {
      unchanged.push(path);
      continue;
    }
    await writeFile(target, bytes);
    written.push(path);
  }

  return { written: written.sort(), removed: [...new Set(removed)].sort(), unchanged: unchanged.sort() };
}
