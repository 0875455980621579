/**
 * Paths handed to git: a sparse checkout's directory is one cluster's cone,
 * never the whole repository (every cluster checked out in every run).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
import { repoPath, sparseDir } from './repo-paths.js';

describe('sparseDir', () => {
  it('refuses the repository root in every spelling: the run would check out every cluster instead of its cone', () => {
    for (const root of ['.', './', './/', '', '/']) {
      assert.throws(
        () => sparseDir(root),
        (e: unknown) => e instanceof ValidationError && e.issues.every((issue) => issue.field === 'sparsePaths'),
        JSON.stringify(root),
      );
    }
    assert.throws(() => sparseDir('.'), /"\." would check out the whole repository/);
  });

  it('refuses what would leave the repository or enter .git', () => {
    for (const bad of ['..', '../x', 'a/../..', '/etc', '.git', 'a/.git', 'a\\b']) assert.throws(() => sparseDir(bad), ValidationError, bad);
  });

  it('gives a directory without its trailing slash', () => {
    assert.equal(sparseDir('clusters/eu-1'), 'clusters/eu-1');
    assert.equal(sparseDir('clusters/eu-1/'), 'clusters/eu-1');
    assert.equal(sparseDir('base'), 'base');
    assert.equal(repoPath('clusters/eu-1//', 'path'), 'clusters/eu-1');
  });
});
