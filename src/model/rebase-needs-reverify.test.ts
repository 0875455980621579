import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rebaseNeedsReverify } from './rebase-needs-reverify.js';

describe('rebaseNeedsReverify', () => {
  const needs = (paths: string[]) => rebaseNeedsReverify(paths, 'eu-one', 'development');

  it('keeps the verdict when only other clusters changed, or nothing did', () => {
    assert.equal(needs([]), false);
    assert.equal(needs(['clusters/eu-two/apps/kustomization.yaml', 'clusters/us-three/flux-system/gotk-sync.yaml']), false);
  });

  it('verifies again for shared inputs, the reference, this cluster, or an unknown change set', () => {
    for (const path of [
      'base/apps/kustomization.yaml',
      'scaffold.yaml',
      'infrastructure/x.yaml',
      'clusters/development/apps/kustomization.yaml',
      'clusters/eu-one/apps/kustomization.yaml',
      'clusters/kustomization.yaml',
      '.',
    ]) {
      assert.equal(needs(['clusters/eu-two/a.yaml', path]), true, path);
    }
  });

  it('does not take a cluster whose name starts like this one for this one, nor the reverse', () => {
    assert.equal(needs(['clusters/eu-one-b/a.yaml']), false);
    assert.equal(rebaseNeedsReverify(['clusters/eu-one/a.yaml'], 'eu-one-b', 'development'), false);
  });
});
