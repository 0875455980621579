/**
 * A file tree is the core's output: repository-relative POSIX paths mapped to
 * file contents. The core returns values; edges write them (`git/write-tree.ts`).
 */
import { posix } from 'node:path';
import { ValidationError } from '../errors.js';

/** Repository-relative POSIX path → UTF-8 file content. */
export type FileTree = ReadonlyMap<string, string>;

/**
 * Checks that `path` is a normalized repository-relative path that cannot
 * escape the repository: no absolute path, no `..`, no backslash, no NUL, no `.git`.
 *
 * @returns the path, unchanged
 * @throws ValidationError when the path could leave the repository
 */
export function assertRepoPath(path: string, field = 'path'): string {
  const bad = (why: string) => new ValidationError([{ field, message: `${JSON.stringify(path)} ${why}` }]);
  if (path.length === 0) throw bad('is empty');
  if (path.includes('\0') || path.includes('\\')) throw bad('contains a NUL or backslash');
  if (path.startsWith('/')) throw bad('is absolute');
  const normalized = posix.normalize(path);
  if (normalized !== path.replace(/\/+$/, '') && normalized !== path) throw bad('is not normalized');
  if (normalized === '..' || normalized.startsWith('../') || normalized.split('/').includes('..')) throw bad('escapes the repository');
  if (normalized.split('/').some((segment) => segment === '.git')) throw bad('points into .git');
  return path;
}
