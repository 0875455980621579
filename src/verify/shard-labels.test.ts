import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AppliedKustomization } from './applied-object.js';
import { formatFinding } from './finding.js';
import { checkShardLabels } from './shard-labels.js';

const instance = (sharding?: Record<string, unknown>) => ({
  apiVersion: 'fluxcd.controlplane.io/v1',
  kind: 'FluxInstance',
  metadata: { name: 'flux', namespace: 'flux-system' },
  spec: { distribution: { version: '2.x' }, ...(sharding ? { sharding } : {}) },
});
const kustomization = (name: string, shard?: string, key = 'sharding.fluxcd.io/key') => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name, namespace: 'flux-system', ...(shard !== undefined ? { labels: { [key]: shard } } : {}) },
  spec: { path: `./${name}`, sourceRef: { kind: 'GitRepository', name: 'flux-system' } },
});
const helmRelease = (shard: string) => ({
  apiVersion: 'helm.toolkit.fluxcd.io/v2',
  kind: 'HelmRelease',
  metadata: { name: 'web', namespace: 'apps', labels: { 'sharding.fluxcd.io/key': shard } },
  spec: {},
});
function layer(name: string, objects: Record<string, unknown>[]): AppliedKustomization {
  return { key: `flux-system/${name}`, file: `clusters/c/flux/${name}.yaml`, dir: name, object: kustomization(name), dependsOn: [], objects };
}
const check = (rootObjects: Record<string, unknown>[], layers: AppliedKustomization[] = []) =>
  checkShardLabels({ clusterDir: 'clusters/c', kustomizations: layers, rootObjects }).map(formatFinding);

describe('objects labelled for a shard nobody runs', () => {
  it('passes objects labelled for a shard of the FluxInstance, and unlabelled ones', () => {
    assert.deepEqual(
      check(
        [instance({ key: 'sharding.fluxcd.io/key', shards: ['apps'] }), kustomization('apps', 'apps'), kustomization('infra')],
        [layer('apps', [helmRelease('apps')])],
      ),
      [],
    );
  });

  it('refuses a label naming no shard of the FluxInstance, in the root sync and in a layer', () => {
    assert.deepEqual(check([instance({ shards: ['apps'] }), kustomization('apps', 'app')], [layer('apps', [helmRelease('tenants')])]), [
      "clusters/c: Kustomization flux-system/apps: is labelled sharding.fluxcd.io/key=app, which is no shard of the cluster's FluxInstance (apps): the main controllers skip every object carrying sharding.fluxcd.io/key and no shard takes this one, so it is never reconciled. Label it with one of the shards, or drop the label",
      "apps: HelmRelease apps/web: is labelled sharding.fluxcd.io/key=tenants, which is no shard of the cluster's FluxInstance (apps): the main controllers skip every object carrying sharding.fluxcd.io/key and no shard takes this one, so it is never reconciled. Label it with one of the shards, or drop the label",
    ]);
  });

  it('refuses a shard label on a cluster whose FluxInstance has no sharding', () => {
    assert.deepEqual(check([instance(), kustomization('apps', 'apps')]), [
      "clusters/c: Kustomization flux-system/apps: is labelled sharding.fluxcd.io/key=apps, but the cluster's FluxInstance has no spec.sharding: no shard controller exists for it, and with sharding on the main controllers would skip it, so nobody would reconcile it. Drop the label, or add the shard (fluxInstance.sharding in scaffold.yaml)",
    ]);
  });

  it("reads the FluxInstance's own key, and leaves kinds the operator does not shard and trees without a FluxInstance alone", () => {
    assert.deepEqual(
      check([instance({ key: 'example.com/shard', shards: ['apps'] }), kustomization('apps', 'apps', 'example.com/shard'), kustomization('infra', 'nope')]),
      [],
    );
    assert.equal(check([instance({ key: 'example.com/shard', shards: ['apps'] }), kustomization('apps', 'ops', 'example.com/shard')]).length, 1);
    const alert = {
      apiVersion: 'notification.toolkit.fluxcd.io/v1beta3',
      kind: 'Alert',
      metadata: { name: 'a', namespace: 'flux-system', labels: { 'sharding.fluxcd.io/key': 'x' } },
    };
    assert.deepEqual(check([instance(), alert]), [], 'notification-controller does not shard');
    assert.deepEqual(check([kustomization('apps', 'apps')]), [], 'flux bootstrap: its shards are patches verify cannot read');
  });
});
