import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { unifiedDiff } from './unified-diff.js';

describe('unifiedDiff', () => {
  it('prints a changed line with its context, as git diff does', () => {
    assert.equal(
      unifiedDiff('clusters/a/x.yaml', 'a: 1\nb: 2\nc: 3\n', 'a: 1\nb: 20\nc: 3\n'),
      ['--- a/clusters/a/x.yaml', '+++ b/clusters/a/x.yaml', '@@ -1,3 +1,3 @@', ' a: 1', '-b: 2', '+b: 20', ' c: 3', ''].join('\n'),
    );
  });

  it('names /dev/null for an added or removed file, and prints nothing for an unchanged one', () => {
    assert.equal(unifiedDiff('n.yaml', undefined, 'x: 1\n'), '--- /dev/null\n+++ b/n.yaml\n@@ -0,0 +1,1 @@\n+x: 1\n');
    assert.equal(unifiedDiff('o.yaml', 'x: 1\n', undefined), '--- a/o.yaml\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x: 1\n');
    assert.equal(unifiedDiff('same.yaml', 'x: 1\n', 'x: 1\n'), '');
  });
});
