import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkExternalArtifactProducer } from './external-artifact-producer.js';
import { formatFinding } from './finding.js';

const instance = (components: string[]) => ({
  apiVersion: 'fluxcd.controlplane.io/v1',
  kind: 'FluxInstance',
  metadata: { name: 'flux', namespace: 'flux-system' },
  spec: { distribution: { version: '2.x' }, components },
});
const kustomization = (name: string, kind: string) => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name, namespace: 'flux-system' },
  spec: { path: './', sourceRef: { kind, name } },
});
const CORE = ['source-controller', 'kustomize-controller', 'helm-controller', 'notification-controller'];
const check = (rootObjects: Record<string, unknown>[]) =>
  checkExternalArtifactProducer({ clusterDir: 'clusters/c', kustomizations: [], rootObjects }).map(formatFinding);

describe('Kustomizations waiting for an ExternalArtifact nothing produces', () => {
  it('refuses a Kustomization sourcing from an ExternalArtifact when the FluxInstance has no source-watcher', () => {
    assert.deepEqual(check([instance(CORE), kustomization('apps', 'ExternalArtifact'), kustomization('infra', 'GitRepository')]), [
      "clusters/c: Kustomization flux-system/apps: sources from ExternalArtifact apps, which only source-watcher produces (it reconciles the ArtifactGenerator), but the cluster's FluxInstance components do not include source-watcher: the Kustomization is never Ready. Add source-watcher to spec.components (a render adds it when the tree needs it)",
    ]);
  });

  it('passes it when source-watcher is installed, and does not judge a tree without a FluxInstance', () => {
    assert.deepEqual(check([instance([...CORE, 'source-watcher']), kustomization('apps', 'ExternalArtifact')]), []);
    assert.deepEqual(check([kustomization('apps', 'ExternalArtifact')]), []);
  });
});
