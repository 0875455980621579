/**
 * Loading the reference environment, as a batch run does it once a cluster:
 * the shipped platform's reference, read from memory.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { shippedPlatformFiles } from '../git/shipped-platform-files.js';
import { loadReferenceEnvironment } from './reference-environment.js';
import { documentToYaml } from './yaml.js';
import { memoryRepoReader } from './repo-reader.js';

describe('loadReferenceEnvironment', () => {
  it('interprets a reference once for every render of the same files, and again as soon as one of its files changes', async () => {
    const files = await shippedPlatformFiles();
    const first = await loadReferenceEnvironment(memoryRepoReader(files), 'development');
    // Another reader of the same files (the next cluster of a batch): the same interpretation.
    assert.equal(await loadReferenceEnvironment(memoryRepoReader(new Map(files)), 'development'), first);
    // Read as a catalog's selection, the layers are not the same: interpreted apart.
    assert.notEqual(await loadReferenceEnvironment(memoryRepoReader(files), 'development', { layers: 'catalog' }), first);

    const configMap = `clusters/development/flux/${first.configMapFile}`;
    const edited = new Map(files);
    edited.set(configMap, `${files.get(configMap)}# edited after the first render\n`);
    const after = await loadReferenceEnvironment(memoryRepoReader(edited), 'development');
    assert.notEqual(after, first);
    assert.match(documentToYaml(after.configMap), /# edited after the first render/);
    assert.doesNotMatch(documentToYaml(first.configMap), /# edited after the first render/);
  });

  it('refuses a malformed reference every time, keeping nothing of it', async () => {
    const files = await shippedPlatformFiles();
    const broken = new Map(files);
    const layer = [...files.keys()].find(
      (path) => path.startsWith('clusters/development/flux/') && path.endsWith('.yaml') && !path.endsWith('kustomization.yaml'),
    );
    assert.ok(layer);
    broken.set(layer, `${files.get(layer)}---\nkind: Kustomization\n`);
    for (let i = 0; i < 2; i++) await assert.rejects(loadReferenceEnvironment(memoryRepoReader(broken), 'development'), /exactly one object/);
  });
});
