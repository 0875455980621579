/**
 * assertRepoPath: the one check every path of a rendered tree, a removal and a
 * read passes before it touches a work tree. The tree comes from a repository
 * others write to, so a path is untrusted.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
import { assertRepoPath } from './file-tree.js';

/** The message of the ValidationError `assertRepoPath(path)` throws. */
function refusal(path: string): string {
  let message = '';
  assert.throws(
    () => assertRepoPath(path, 'file'),
    (e: unknown) => e instanceof ValidationError && e.issues[0]?.field === 'file' && ((message = e.message), true),
    JSON.stringify(path),
  );
  return message;
}

describe('assertRepoPath', () => {
  it('accepts normalized relative paths and returns them unchanged', () => {
    for (const path of ['a', 'clusters/eu-1/kustomization.yaml', 'base/.gitkeep', 'a/.github/x', 'a/.git-x/y', '.gitignore', 'clusters/eu-1/'])
      assert.equal(assertRepoPath(path), path);
  });

  it('refuses a .git component at any depth: a nested repository (hooks, config) is never written nor read', () => {
    for (const path of ['.git', '.git/config', 'a/.git', 'a/.git/config', 'clusters/x/.git/hooks/post-checkout', 'sub/.git/config'])
      assert.match(refusal(path), /points into \.git/);
  });

  it('refuses paths that could leave the repository', () => {
    assert.match(refusal(''), /is empty/);
    assert.match(refusal('/etc/passwd'), /is absolute/);
    assert.match(refusal('a\\b'), /NUL or backslash/);
    assert.match(refusal('a\0b'), /NUL or backslash/);
    for (const path of ['..', '../x', 'a/../../x']) assert.match(refusal(path), /escapes the repository|is not normalized/);
    for (const path of ['a/./b', 'a//b', 'a/b/..']) assert.match(refusal(path), /is not normalized/);
  });
});
