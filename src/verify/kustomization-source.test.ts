import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KustomizationSources } from './kustomization-source.js';

const kustomization = (sourceRef: Record<string, string>, namespace = 'flux-system') => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name: 'k', namespace },
  spec: { path: './x', sourceRef },
});

describe('KustomizationSources', () => {
  const sources = new KustomizationSources();
  sources.declare([
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'GitRepository',
      metadata: { name: 'flux-system', namespace: 'flux-system' },
      spec: { url: 'ssh://git@example.net/fleet' },
    },
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'GitRepository',
      metadata: { name: 'dev-team', namespace: 'apps' },
      spec: { url: 'https://example.net/dev-team' },
    },
    { apiVersion: 'source.toolkit.fluxcd.io/v1beta2', kind: 'OCIRepository', metadata: { name: 'kyverno' }, spec: { url: 'oci://ghcr.io/x/manifests' } },
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'HelmRepository',
      metadata: { name: 'charts', namespace: 'flux-system' },
      spec: { url: 'https://charts' },
    },
  ]);

  it("reads the path in this repository for the cluster's own source and for sources the tree does not declare", () => {
    assert.equal(sources.elsewhere(kustomization({ kind: 'GitRepository', name: 'flux-system' })), undefined);
    assert.equal(sources.elsewhere(kustomization({ kind: 'OCIRepository', name: 'flux-system', namespace: 'flux-system' })), undefined);
    assert.equal(sources.elsewhere(kustomization({ kind: 'GitRepository', name: 'platform' })), undefined);
    assert.equal(sources.elsewhere(kustomization({ kind: 'GitRepository', name: 'dev-team' })), undefined, 'dev-team is declared in namespace apps');
  });

  it('names the artifact a path is in when the tree declares that source, or it is an ExternalArtifact', () => {
    assert.equal(
      sources.elsewhere(kustomization({ kind: 'GitRepository', name: 'dev-team' }, 'apps')),
      'is inside GitRepository apps/dev-team, a source the tree declares with its own URL, not this repository',
    );
    assert.equal(
      sources.elsewhere(kustomization({ kind: 'OCIRepository', name: 'kyverno' })),
      'is inside OCIRepository flux-system/kyverno, a source the tree declares with its own URL, not this repository',
    );
    assert.equal(
      sources.elsewhere(kustomization({ kind: 'ExternalArtifact', name: 'apps' })),
      'is inside ExternalArtifact flux-system/apps, which another controller assembles',
    );
  });
});
