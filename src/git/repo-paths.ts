/** Paths handed to git: repository-relative, validated, in the shape git wants. */
import { ValidationError } from '../errors.js';
import { assertRepoPath } from '../gitops/file-tree.js';

/** A repository-relative path as git wants it: validated, without a trailing slash. */
export function repoPath(path: string, field: string): string {
  const trimmed = path.replace(/\/+$/, '');
  assertRepoPath(trimmed, field);
  return trimmed;
}

export function sparseDir(path: string): string {
  const dir = repoPath(path, 'sparsePaths');
  if (dir === '.') throw new ValidationError([{ field: 'sparsePaths', message: '"." would check out the whole repository' }]);
  return dir;
}
