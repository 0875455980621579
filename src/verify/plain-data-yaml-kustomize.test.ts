/**
 * The reader fed what it is for: the real `kubectl kustomize` output of every
 * layer of the shipped reference platform. js-yaml must answer for it (or the
 * fast path is dead code) and give the yaml package's values.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { platformDir } from '../package-paths.js';
import { parseStream } from './manifest-documents.js';
import { plainDataDocuments } from './plain-data-yaml.js';

describe("plainDataDocuments on kustomize's output", () => {
  it('answers for every layer of the shipped platform as built by kubectl, with the yaml package’s values', async () => {
    const root = platformDir();
    const reference = join('clusters', 'development');
    const kubectl = new KubectlKustomize();
    const layers = (await readdir(join(root, reference), { withFileTypes: true })).filter((e) => e.isDirectory() && e.name !== 'flux');
    assert.ok(layers.length >= 4, 'the reference has its layers');
    for (const layer of layers) {
      const output = await kubectl.build(root, `${reference}/${layer.name}`);
      for (const part of output.split(/^---[ \t]*\n/m)) {
        const fast = plainDataDocuments(part);
        assert.notEqual(fast, undefined, `${layer.name}: js-yaml did not answer for ${part.slice(0, 200)}`);
        const slow = parseStream(part);
        assert.equal(slow.error, undefined);
        assert.deepStrictEqual(fast, slow.documents, layer.name);
      }
    }
  });
});
