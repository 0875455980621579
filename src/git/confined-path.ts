/**
 * Resolves a repository path inside a work tree the way the kernel would, one
 * component at a time, without ever touching anything outside the tree.
 *
 * A lexical check is not enough: with `clusters/u -> .`, the text
 * `clusters/u/u/../../../x` stays inside the tree, yet the kernel expands each
 * `u` to `clusters` first and then climbs three levels, out of it. Here `..`
 * is applied to the directory actually reached (never to the text), each
 * component is `lstat`ed before it is used, and a link is expanded into the
 * components still to walk. As soon as a step would leave the root the path is
 * refused, before the outside is looked at, so the answer is the same whether
 * or not anything exists out there (no oracle for the host's files).
 *
 * The `lstat` and `readlink` calls block: a work tree is local, and through
 * the thread pool each call cost several times the call itself (a verify
 * resolves a few hundred paths; fs-repo-reader.ts reads their files the same way).
 */
import { lstatSync, readlinkSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { ValidationError } from '../errors.js';

/** Links followed while resolving one path before it counts as a loop (the kernel's MAXSYMLINKS). */
const MAX_LINKS = 40;

/** Whether the absolute path `path` is `dir` or lies below it, by their text (resolve links first where they matter). */
export function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The one message for a path whose links leave the tree: never where they lead, nor whether that exists. */
export function escapingLinkError(path: string): ValidationError {
  return new ValidationError([{ field: 'repository', message: `${path} is a symbolic link (or lies below one) that leaves the work tree` }]);
}

/** A path that is not a regular file or directory (a FIFO, socket or device): never opened for reading. */
export function specialFileError(path: string): ValidationError {
  return new ValidationError([
    { field: 'repository', message: `${path} is not a regular file (a FIFO, socket or device); the repository may hold only files, directories and links` },
  ]);
}

/** Where a path led, inside the tree. */
export type ConfinedPath = { readonly found: true; readonly absolute: string; readonly stats: Stats } | { readonly found: false };

/**
 * Directories already reached below one root, by their resolved path inside
 * it: a reader that opens many files of one tree `lstat`s each directory once
 * instead of once a file. Only directories are kept (a file's `lstat` is
 * always fresh); keep one no longer than the tree is left alone by others.
 */
export type ResolvedDirectories = Map<string, Stats>;

/**
 * Resolves `path` (repository-relative, POSIX) below `realRoot` (an absolute
 * path free of links, from `realpath`).
 *
 * @param directories directories resolved before below the same root, added to as more are reached
 * @returns the absolute path reached and its `lstat` (never a link), or `found: false` when a component is missing inside the tree
 * @throws ValidationError (field `repository`) naming `path` when a link leaves the tree, leads into `.git`, is absolute, or the links loop
 */
export async function resolveConfined(realRoot: string, path: string, directories?: ResolvedDirectories): Promise<ConfinedPath> {
  const pending = path.split('/').reverse();
  const reached: string[] = [];
  // Components never hold a separator and are never '', '.' or '..' once reached: concatenating them is path.join's answer without its normalizing.
  const under = realRoot.endsWith(sep) ? realRoot : `${realRoot}${sep}`;
  const absolute = (parts: readonly string[]) => (parts.length === 0 ? realRoot : `${under}${parts.join(sep)}`);
  let stats: Stats | undefined;
  let links = 0;
  while (pending.length > 0) {
    const part = pending.pop() as string;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      // Above the root is outside, whatever is there.
      if (reached.length === 0) throw escapingLinkError(path);
      reached.pop();
      stats = undefined;
      continue;
    }
    if (reached.length === 0 && part === '.git') throw escapingLinkError(path);
    const inside = [...reached, part];
    const key = inside.join('/');
    const candidate = absolute(inside);
    const known = directories?.get(key);
    if (known !== undefined) stats = known;
    else {
      try {
        stats = lstatSync(candidate);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') return { found: false };
        throw error;
      }
      if (stats.isDirectory()) directories?.set(key, stats);
    }
    if (stats.isSymbolicLink()) {
      if (++links > MAX_LINKS) throw new ValidationError([{ field: 'repository', message: `${path} goes through a loop of symbolic links` }]);
      const target = readlinkSync(candidate);
      // An absolute target names the host's file system, never the tree's.
      if (target.startsWith('/')) throw escapingLinkError(path);
      pending.push(...target.split('/').reverse());
      stats = undefined;
      continue;
    }
    if (pending.some((rest) => rest !== '' && rest !== '.') && !stats.isDirectory()) return { found: false };
    reached.push(part);
  }
  const reachedPath = absolute(reached);
  stats ??= lstatSync(reachedPath);
  return { found: true, absolute: reachedPath, stats };
}
