/**
 * YAML a target repository supplies and the render interprets is plain data
 * only: scaffold.yaml and the reference environment's Flux Kustomizations,
 * cluster ConfigMap and flux/kustomization.yaml refuse aliases, anchors, merge
 * keys and custom tags by file and line, while the layers' copied manifests
 * keep theirs (kustomize and Flux resolve them).
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
import { platformDir } from '../package-paths.js';
import { parsePlatformDescriptor } from './platform-descriptor.js';
import { loadReferenceEnvironment } from './reference-environment.js';
import { memoryRepoReader } from './repo-reader.js';

const FLUX = 'clusters/development/flux';

async function referenceFiles(): Promise<Map<string, string>> {
  const root = join(platformDir(), FLUX);
  const files = new Map<string, string>();
  for (const name of await readdir(root)) files.set(`${FLUX}/${name}`, await readFile(join(root, name), 'utf8'));
  files.set('clusters/development/apps/kustomization.yaml', 'resources: []\n');
  return files;
}

function refusal(pattern: RegExp, field: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof ValidationError, String(error));
    assert.ok(
      error.issues.every((i) => i.field === field),
      JSON.stringify(error.issues),
    );
    assert.match(error.message, pattern);
    return true;
  };
}

describe('YAML from the target repository', () => {
  it('scaffold.yaml refuses anchors, aliases, merge keys and custom tags, by file and line', async () => {
    const descriptor = await readFile(join(platformDir(), 'scaffold.yaml'), 'utf8');
    assert.ok(parsePlatformDescriptor(descriptor).credentials.length > 0, 'the shipped descriptor is plain data');
    const cases: [string, RegExp][] = [
      [descriptor.replace('kind: Platform', 'kind: &k Platform'), /YAML anchor \(&name\) at kind \(line \d+/],
      [descriptor.replace('kind: Platform', 'kind: &k Platform\nlayerDefaults: {interval: *k}'), /YAML alias \(\*name\) at layerDefaults\.interval/],
      [descriptor.replace('kind: Platform', 'kind: Platform\nlayerDefaults: {<<: {interval: 5m}}'), /YAML merge key \(<<\) at layerDefaults/],
      [descriptor.replace('kind: Platform', 'kind: !Platform Platform'), /YAML tag outside the core schema at kind/],
      [descriptor.replace('kind: Platform', 'kind: !!binary UGxhdGZvcm0='), /YAML tag outside the core schema at kind/],
    ];
    for (const [text, pattern] of cases) assert.throws(() => parsePlatformDescriptor(text), refusal(pattern, 'scaffold.yaml'));
  });

  it('the reference environment refuses them in the files the render interprets, and keeps them in manifests it only copies', async () => {
    const files = await referenceFiles();
    assert.equal((await loadReferenceEnvironment(memoryRepoReader(files), 'development')).identity.name, 'development');
    const apps = files.get(`${FLUX}/apps.yaml`)!;
    const config = files.get(`${FLUX}/cluster-config.yaml`)!;
    const cases: [string, string, RegExp][] = [
      // dependsOn pulled in from an anchor parked under an annotation: what the render orders by is not what it shows.
      [
        'apps.yaml',
        apps
          .replace('  name: apps\n', '  name: apps\n  annotations: {x: &d [{name: database}]}\n')
          .replace(/ {2}dependsOn:\n( {4}- name: \w+\n)+/, '  dependsOn: *d\n'),
        /YAML anchor \(&name\) at metadata\.annotations\.x/,
      ],
      ['apps.yaml', apps.replace('  sourceRef:\n', '  sourceRef:\n    <<: {kind: OCIRepository}\n'), /YAML merge key \(<<\) at spec\.sourceRef/],
      [
        'cluster-config.yaml',
        config.replace('cluster_name: development', 'cluster_name: !!str &n development\n  other: *n'),
        /YAML anchor \(&name\) at data\.cluster_name/,
      ],
      ['kustomization.yaml', `${files.get(`${FLUX}/kustomization.yaml`)!}extra: !include other.yaml\n`, /YAML tag outside the core schema at extra/],
    ];
    for (const [file, text, pattern] of cases) {
      const hostile = new Map(files).set(`${FLUX}/${file}`, text);
      await assert.rejects(loadReferenceEnvironment(memoryRepoReader(hostile), 'development'), refusal(pattern, `clusters/development/flux/${file}`));
    }
    // A layer's manifest is copied for kustomize, which resolves anchors itself: it is not the render's to refuse.
    const copied = new Map(files).set('clusters/development/apps/values.yaml', 'defaults: &d {replicas: 2}\nweb: *d\n');
    assert.equal((await loadReferenceEnvironment(memoryRepoReader(copied), 'development')).identity.name, 'development');
  });
});
