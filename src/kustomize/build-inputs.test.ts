/**
 * The key of a kustomize build changes with every file the build may read and
 * with nothing else: below the directory, below each directory its
 * kustomizations name (transitively), and the engine; not a sibling whose name
 * merely starts the same, nor another cluster's files.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type BuildInputs, TreeIndex } from './build-inputs.js';

const TREE: Record<string, string> = {
  'base/app/kustomization.yaml': 'resources: [deploy.yaml, ../shared]\n',
  'base/app/deploy.yaml': 'a',
  'base/shared/kustomization.yaml': 'configMapGenerator:\n  - name: c\n    files: [key=data.txt]\n',
  'base/shared/data.txt': 'b',
  'base/app-extra/x.yaml': 'c',
  'base/unused/y.yaml': 'd',
  'clusters/eu/apps/kustomization.yaml': 'resources: [../../../base/app]\n',
  'clusters/us/apps/kustomization.yaml': 'resources: [../../../base/app]\n',
  'clusters/us/apps-old/z.yaml': 'e',
  'remote/kustomization.yaml': 'resources: [https://github.com/example/repo//deploy?ref=v1]\n',
};

/** Digests are the contents themselves here: any change is a different digest. */
async function inputsOf(files: Record<string, string>, dir: string, engine = 'kubectl 1.35'): Promise<BuildInputs> {
  const index = new TreeIndex(new Map(Object.entries(files).map(([path, text]) => [path, text])));
  return index.inputs(dir, engine, async (path) => files[path]);
}

async function keyOf(files: Record<string, string>, dir: string, engine?: string): Promise<string> {
  const inputs = await inputsOf(files, dir, engine);
  assert.ok(inputs.cacheable);
  return inputs.key;
}

describe('TreeIndex.inputs', () => {
  it('changes with a file below a directory the build reaches, transitively, and with the engine', async () => {
    const key = await keyOf(TREE, 'clusters/eu/apps');
    for (const changed of ['base/app/deploy.yaml', 'base/shared/data.txt', 'base/shared/kustomization.yaml', 'clusters/eu/apps/kustomization.yaml']) {
      assert.notEqual(await keyOf({ ...TREE, [changed]: `${TREE[changed]}!` }, 'clusters/eu/apps'), key, changed);
    }
    assert.notEqual(await keyOf({ ...TREE, 'clusters/eu/apps/new.yaml': 'f' }, 'clusters/eu/apps'), key, 'a new file below the directory');
    assert.notEqual(await keyOf(TREE, 'clusters/eu/apps', 'kubectl 1.36'), key, 'another engine');
  });

  it('stays with files the build cannot reach, and is the same for the same subtree under another cluster', async () => {
    const key = await keyOf(TREE, 'clusters/eu/apps');
    for (const changed of ['base/app-extra/x.yaml', 'base/unused/y.yaml', 'clusters/us/apps-old/z.yaml', 'clusters/us/apps/kustomization.yaml']) {
      assert.equal(await keyOf({ ...TREE, [changed]: `${TREE[changed]}!` }, 'clusters/eu/apps'), key, changed);
    }
    assert.equal(await keyOf(TREE, 'clusters/us/apps'), key);
    const us = await inputsOf(TREE, 'clusters/us/apps');
    assert.ok(us.cacheable && !us.dirBound, 'an output, not bound to its directory, serves both');
  });

  it('gives no key for a remote base, and binds origin annotations to their directory', async () => {
    assert.deepEqual(await inputsOf(TREE, 'remote'), { cacheable: false, reason: 'remote/kustomization.yaml names a remote resources entry' });
    const annotated = { ...TREE, 'clusters/eu/apps/kustomization.yaml': 'resources: [../../../base/app]\nbuildMetadata: [originAnnotations]\n' };
    const bound = await inputsOf(annotated, 'clusters/eu/apps');
    assert.ok(bound.cacheable && bound.dirBound);
  });
});
