/**
 * Kustomize outputs keyed by the content of what a build reads: the same
 * inputs are built once (across verifies, across clusters), a changed input
 * is built again, and kustomize's error, which names its directory, is never
 * served to another directory.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import type { KustomizeBuilder } from '../verify/kustomize-builder.js';
import { KustomizeBuildCache } from './build-cache.js';
import { KubectlKustomize } from './kubectl-kustomize.js';
import { MaterializedKustomize } from './materialized-kustomize.js';

const configMap = (value: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: ${value}\n`;

/** kubectl kustomize, counting the builds it runs. */
function countingKubectl(): KustomizeBuilder & { readonly dirs: string[] } {
  const kubectl = new KubectlKustomize();
  const dirs: string[] = [];
  return {
    dirs,
    build: (root, dir, signal) => {
      dirs.push(dir);
      return kubectl.build(root, dir, signal);
    },
    engine: () => kubectl.engine(),
  };
}

/** Builds `dirs` of `files` in one verify's copy, sharing `cache`. */
async function buildAll(
  files: Record<string, string>,
  dirs: readonly string[],
  kustomize: KustomizeBuilder,
  cache: KustomizeBuildCache,
): Promise<(string | Error)[]> {
  const builder = new MaterializedKustomize(memoryRepoReader(new Map(Object.entries(files))), { kustomize, cache });
  try {
    const out: (string | Error)[] = [];
    for (const dir of dirs) out.push(await builder.build('/nowhere', dir).catch((error: Error) => error));
    return out;
  } finally {
    await builder.dispose();
  }
}

const TREE = {
  'base/cm/kustomization.yaml': 'resources: [cm.yaml]\n',
  'base/cm/cm.yaml': configMap('v1'),
  'clusters/eu/config/kustomization.yaml': 'resources: [../../../base/cm]\nnamespace: shared\n',
  'clusters/us/config/kustomization.yaml': 'resources: [../../../base/cm]\nnamespace: shared\n',
  'clusters/us/other.yaml': configMap('unrelated'),
};

describe('KustomizeBuildCache over MaterializedKustomize', () => {
  it('builds the same inputs once, across verifies and across clusters, with the output kubectl gives', async () => {
    const kubectl = countingKubectl();
    const cache = new KustomizeBuildCache();
    const [eu, us] = await buildAll(TREE, ['clusters/eu/config', 'clusters/us/config'], kubectl, cache);
    assert.equal(eu, us);
    assert.match(String(eu), /namespace: shared/);
    assert.deepEqual(kubectl.dirs, ['clusters/eu/config'], 'the same subtree under another cluster is not built again');
    const [again] = await buildAll(TREE, ['clusters/eu/config'], kubectl, cache);
    assert.equal(again, eu);
    assert.deepEqual(cache.stats(), { hits: 2, misses: 1, uncacheable: 0 });
    // The uncached builder agrees.
    const [plain] = await buildAll(TREE, ['clusters/eu/config'], new KubectlKustomize(), new KustomizeBuildCache());
    assert.equal(plain, eu);
  });

  it('builds again when a file the build reads changed, even one outside the built directory', async () => {
    const kubectl = countingKubectl();
    const cache = new KustomizeBuildCache();
    await buildAll(TREE, ['clusters/eu/config'], kubectl, cache);
    const [changed] = await buildAll({ ...TREE, 'base/cm/cm.yaml': configMap('v2') }, ['clusters/eu/config'], kubectl, cache);
    assert.match(String(changed), /k: v2/);
    const [overlay] = await buildAll(
      { ...TREE, 'clusters/eu/config/kustomization.yaml': 'resources: [../../../base/cm]\nnamespace: eu\n' },
      ['clusters/eu/config'],
      kubectl,
      cache,
    );
    assert.match(String(overlay), /namespace: eu/);
    assert.equal(kubectl.dirs.length, 3);
  });

  it('serves a failure only to the directory it names', async () => {
    // Identical inputs under both clusters; kustomize's message names the missing file by its path from the repository.
    const missing = 'resources: [../../../base/cm, gone.yaml]\nnamespace: shared\n';
    const broken = { ...TREE, 'clusters/eu/config/kustomization.yaml': missing, 'clusters/us/config/kustomization.yaml': missing };
    const kubectl = countingKubectl();
    const [eu, us] = await buildAll(broken, ['clusters/eu/config', 'clusters/us/config'], kubectl, new KustomizeBuildCache());
    assert.ok(eu instanceof ValidationError && us instanceof ValidationError);
    assert.equal(kubectl.dirs.length, 2);
    assert.notEqual(eu.message, us.message);
    assert.match(eu.message, /clusters\/eu\/config\/gone\.yaml/);
    assert.match(us.message, /clusters\/us\/config\/gone\.yaml/);
  });

  it('does not cache a build whose engine cannot be told', async () => {
    const kubectl = new KubectlKustomize();
    let runs = 0;
    const anonymous: KustomizeBuilder = { build: (root, dir, signal) => ((runs += 1), kubectl.build(root, dir, signal)) };
    const cache = new KustomizeBuildCache();
    await buildAll(TREE, ['clusters/eu/config', 'clusters/eu/config'], anonymous, cache);
    assert.equal(runs, 2);
    assert.deepEqual(cache.stats(), { hits: 0, misses: 0, uncacheable: 2 });
  });
});
