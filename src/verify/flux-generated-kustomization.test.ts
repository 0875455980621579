import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import { fluxGeneratedKustomization } from './flux-generated-kustomization.js';

const reader = memoryRepoReader(
  new Map([
    ['clusters/staging/apps.yaml', ''],
    ['clusters/staging/infrastructure.yml', ''],
    ['clusters/staging/README.md', ''],
    ['clusters/staging/flux-system/kustomization.yaml', ''],
    ['clusters/staging/flux-system/gotk-sync.yaml', ''],
    ['clusters/staging/extra/more.yaml', ''],
    ['clusters/staging/extra/deeper/Kustomization', ''],
    ['clusters/staging/extra/deeper/inner/x.yaml', ''],
    ['clusters/ours/kustomization.yaml', ''],
    ['clusters/ours/flux/kustomization.yaml', ''],
  ]),
);

describe('fluxGeneratedKustomization', () => {
  it('lists what kustomize-controller would: Kustomize roots (not descended into) and the other YAML files', async () => {
    assert.deepEqual(await fluxGeneratedKustomization(reader, 'clusters/staging'), {
      roots: ['clusters/staging/extra/deeper', 'clusters/staging/flux-system'],
      files: ['clusters/staging/apps.yaml', 'clusters/staging/extra/more.yaml', 'clusters/staging/infrastructure.yml'],
    });
  });

  it('leaves a directory with its own kustomization file to kustomize', async () => {
    assert.equal(await fluxGeneratedKustomization(reader, 'clusters/ours'), undefined);
  });
});
