/**
 * kustomize builds a copy we wrote from the reader's files: no link exists in
 * it, a kustomization naming a path outside is refused before kustomize runs,
 * and the root-only load restrictor holds.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import { MaterializedKustomize } from './materialized-kustomize.js';

const CONFIGMAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n';

describe('MaterializedKustomize', () => {
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'materialized-kustomize-'));
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('builds in a copy of the reader’s files, once for every build, and removes it afterwards', async () => {
    const reader = memoryRepoReader(
      new Map([
        ['base/kustomization.yaml', 'resources: [cm.yaml]\n'],
        ['base/cm.yaml', CONFIGMAP],
        ['clusters/eu/kustomization.yaml', 'resources: [../../base]\nnamespace: eu\n'],
      ]),
    );
    const builder = new MaterializedKustomize(reader, { scratchRoot: scratch });
    assert.match(await builder.build('/nowhere', 'clusters/eu'), /namespace: eu/);
    assert.match(await builder.build('/nowhere', 'base'), /name: c/);
    assert.equal((await readdir(scratch)).length, 1, 'one copy for both builds');
    await builder.dispose();
    assert.deepEqual(await readdir(scratch), []);
  });

  it('refuses a kustomization naming a path outside the repository before kustomize reads it, and keeps kustomize to the root-only restrictor', async () => {
    await mkdir(join(scratch, 'outside'), { recursive: true });
    const escaping = new MaterializedKustomize(memoryRepoReader(new Map([['clusters/eu/kustomization.yaml', 'resources: [../../../outside]\n']])), {
      scratchRoot: scratch,
    });
    await assert.rejects(
      escaping.build('/nowhere', 'clusters/eu'),
      (error: unknown) => error instanceof ValidationError && /clusters\/eu\/kustomization\.yaml names a path outside the repository/.test(error.message),
    );
    await escaping.dispose();
    // A file above the kustomization's own directory (inside the repository): kustomize's root-only restrictor refuses it.
    const above = new MaterializedKustomize(
      memoryRepoReader(
        new Map([
          ['cm.yaml', CONFIGMAP],
          ['clusters/eu/kustomization.yaml', 'resources: [../../cm.yaml]\n'],
        ]),
      ),
      { scratchRoot: scratch },
    );
    await assert.rejects(
      above.build('/nowhere', 'clusters/eu'),
      (error: unknown) => error instanceof ValidationError && /security; file .* is not in or below/.test(error.message),
    );
    await above.dispose();
  });
});
