/**
 * RepoReader over a working tree on disk, for trees that are checked out (the
 * runner's clone after a render, the CLI's `--repo`). Every path is resolved
 * inside the tree component by component (`confined-path.ts`): a link chain
 * that leaves the tree, however it is spelled, is refused by its repository
 * path before anything outside is looked at. A file is opened with
 * `O_NOFOLLOW | O_NONBLOCK` and read only when `fstat` says it is a regular
 * file: a FIFO can neither block a read (and with it the process) nor be
 * read. Where a commit is at hand, `git-object-reader.ts`
 * reads the objects instead.
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { assertRepoPath } from '../gitops/file-tree.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import { escapingLinkError, type ResolvedDirectories, resolveConfined, specialFileError } from './confined-path.js';

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** A `.git` component anywhere in a repository path. */
const GIT_COMPONENT = /(?:^|\/)\.git(?:\/|$)/;

/**
 * The bytes of the file at `absolute`, which `lstat` found regular, read with
 * blocking calls; `path` names it in errors. What was resolved may have been
 * swapped since: a link is refused, not followed (O_NOFOLLOW), and anything
 * but a regular file is refused without blocking (O_NONBLOCK, then `fstat`).
 * Blocking calls, because a work tree's files are small and local: through the thread
 * pool each of open, fstat, read and close is a hand-off to another thread and
 * back, which cost more than the reads themselves (a verify reads a few hundred
 * files).
 */
export function readRegularFile(absolute: string, path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(absolute, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Swapped for a link after it was resolved: refused, never followed.
    if (code === 'ELOOP' || code === 'EMLINK') throw escapingLinkError(path);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
  try {
    if (!fstatSync(fd).isFile()) throw specialFileError(path);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Reads the working tree rooted at `root` (an absolute directory). */
export class FsRepoReader implements RepoReader {
  #realRoot: Promise<string> | undefined;
  /** Directories resolved so far: a reader lives for one read of the tree (a render, a verify), while only its owner writes there. */
  readonly #directories: ResolvedDirectories = new Map();

  constructor(private readonly root: string) {}

  #root(): Promise<string> {
    return (this.#realRoot ??= realpath(this.root));
  }

  async read(path: string): Promise<string | undefined> {
    const bytes = await this.readBytes(path);
    return bytes?.toString('utf8');
  }

  /** The file's bytes, or undefined when there is no such file (a directory is none either). */
  async readBytes(path: string): Promise<Buffer | undefined> {
    const resolved = await resolveConfined(await this.#root(), assertRepoPath(path), this.#directories);
    if (!resolved.found || resolved.stats.isDirectory()) return undefined;
    if (!resolved.stats.isFile()) throw specialFileError(path);
    return readRegularFile(resolved.absolute, path);
  }

  /**
   * Regular files below `dir`, and links that resolve inside the tree to
   * regular files (read through {@link read}). A link that leaves the tree is
   * refused; links to directories are not descended into; FIFOs, sockets and
   * devices are not files.
   */
  async list(dir: string): Promise<string[]> {
    const prefix = dir === '' || dir === '.' ? '' : assertRepoPath(dir.replace(/\/+$/, ''));
    const root = await this.#root();
    let base = root;
    if (prefix !== '') {
      const resolved = await resolveConfined(root, prefix, this.#directories);
      if (!resolved.found || !resolved.stats.isDirectory()) return [];
      base = resolved.absolute;
    }
    let entries;
    try {
      // Blocking, as the reads are (readRegularFile): the recursive walk is a pool hand-off a directory otherwise.
      entries = readdirSync(base, { recursive: true, withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw error;
    }
    const files: string[] = [];
    // readdir names each entry's directory as base joined with the path below it: slicing is path.relative's answer, for a fraction of its cost over a whole fleet.
    const inside = `${base}${sep}`;
    for (const entry of entries) {
      const parent = entry.parentPath;
      const from = parent === base ? '' : parent.startsWith(inside) ? `${parent.slice(inside.length)}/` : `${relative(base, parent)}/`;
      const below = `${sep === '/' ? from : from.split(sep).join('/')}${entry.name}`;
      const rel = prefix === '' ? below : `${prefix}/${below}`;
      if (GIT_COMPONENT.test(rel)) continue;
      // Dirent types come from lstat: a link is resolved here, inside the tree, never by readdir.
      if (entry.isFile()) files.push(rel);
      else if (entry.isSymbolicLink()) {
        const resolved = await resolveConfined(root, rel, this.#directories);
        if (resolved.found && resolved.stats.isFile()) files.push(rel);
      }
    }
    return files.sort();
  }

  async isDirectory(path: string): Promise<boolean> {
    const resolved = await resolveConfined(await this.#root(), assertRepoPath(path.replace(/\/+$/, '')), this.#directories);
    return resolved.found && resolved.stats.isDirectory();
  }
}
