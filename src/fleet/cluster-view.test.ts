import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clusterEntryOf } from './cluster-registry.js';
import { clusterView } from './cluster-view.js';

const OPTIONS = { reference: 'development', platformCommit: 'a'.repeat(40) } as const;

/** A provenance.yaml as the generator writes it, with `enable_layers` when given. */
function provenance(enableLayers?: unknown): string {
  const layers = enableLayers === undefined ? '' : `  enable_layers: ${JSON.stringify(enableLayers)}\n`;
  return `generator: gitops-scaffolder\ngeneratorVersion: 0.1.0\nreference: development\nplatformCommit: ${'a'.repeat(40)}\npass: all\ncluster:\n  name: eu-1\n  domain: eu-1.example.net\n  region: eu-west-1\n${layers}`;
}

describe('a cluster view of its opt-in layers and previews', () => {
  it('names the opt-in layers a cluster resumed and says it has previews when one of them is previews', () => {
    const view = clusterView(clusterEntryOf('eu-1', provenance(['previews', 'observability']), OPTIONS), OPTIONS.platformCommit);
    assert.deepEqual([view.enabled_layers, view.previews], [['previews', 'observability'], true]);
  });

  it('says previews are off, and lists no layers, when none were enabled', () => {
    const view = clusterView(clusterEntryOf('eu-1', provenance(), OPTIONS), OPTIONS.platformCommit);
    assert.deepEqual([view.enabled_layers, view.previews], [undefined, false]);
    const others = clusterView(clusterEntryOf('eu-1', provenance(['observability']), OPTIONS), OPTIONS.platformCommit);
    assert.deepEqual([others.enabled_layers, others.previews], [['observability'], false]);
  });

  it('reads only names from a hand-edited provenance, and says nothing of previews for a directory it did not generate', () => {
    const view = clusterView(clusterEntryOf('eu-1', provenance(['previews', 3, { x: 1 }]), OPTIONS), OPTIONS.platformCommit);
    assert.deepEqual(view.enabled_layers, ['previews']);
    assert.equal(clusterView(clusterEntryOf('eu-1', provenance('previews'), OPTIONS), OPTIONS.platformCommit).enabled_layers, undefined);
    const unmanaged = clusterView(clusterEntryOf('hand-made', undefined, OPTIONS), OPTIONS.platformCommit);
    assert.equal(unmanaged.previews, undefined);
  });
});
