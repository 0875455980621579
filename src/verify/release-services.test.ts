import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChartSpec } from '../gitops/platform-prerequisites.js';
import type { AppliedKustomization } from './applied-object.js';
import { configMapsOf, releaseServicesOf } from './release-services.js';

const charts: ChartSpec[] = [
  { chart: 'cilium', crds: [], operands: [], releases: [], services: [{ name: 'hubble-ui', labels: {}, ports: [], enabledBy: 'hubble.ui.enabled' }] },
];

const release = (spec: Record<string, unknown>) => ({
  apiVersion: 'helm.toolkit.fluxcd.io/v2',
  kind: 'HelmRelease',
  metadata: { name: 'cilium', namespace: 'kube-system' },
  spec,
});
const configMap = (name: string, values: string, key = 'values.yaml') => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'kube-system' },
  data: { [key]: values },
});
const tree = (...objects: Record<string, unknown>[]): AppliedKustomization[] => [
  { key: 'flux-system/infra', file: 'infra.yaml', dir: 'infra', object: {}, dependsOn: [], objects },
];

/** The Service names the release creates, read the way helm-controller merges its values. */
function services(spec: Record<string, unknown>, ...objects: Record<string, unknown>[]): string[] {
  return releaseServicesOf(release(spec), 'cilium', 'kube-system', charts, configMapsOf(tree(...objects))).map((s) => s.name);
}

describe('the Services a release creates, by the values helm-controller merges', () => {
  it('follows inline values', () => {
    assert.deepEqual(services({ values: { hubble: { ui: { enabled: true } } } }), ['hubble-ui']);
    assert.deepEqual(services({ values: { hubble: { ui: { enabled: false } } } }), []);
    assert.deepEqual(services({ values: {} }), []);
  });

  it('reads a valuesFrom ConfigMap the tree applies instead of assuming it turns everything on', () => {
    const ref = { valuesFrom: [{ kind: 'ConfigMap', name: 'gate', valuesKey: 'values.yaml' }] };
    assert.deepEqual(services(ref, configMap('gate', 'operator:\n  podAnnotations: { a: b }\n')), []);
    assert.deepEqual(services(ref, configMap('gate', 'hubble:\n  ui:\n    enabled: true\n')), ['hubble-ui']);
    assert.deepEqual(
      services({ valuesFrom: [{ kind: 'ConfigMap', name: 'gate' }] }, configMap('gate', 'hubble: { ui: { enabled: true } }\n')),
      ['hubble-ui'],
      'valuesKey defaults to values.yaml',
    );
  });

  it('lets inline values win over valuesFrom, and a later valuesFrom entry over an earlier one', () => {
    const on = configMap('on', 'hubble: { ui: { enabled: true } }\n');
    const off = configMap('off', 'hubble: { ui: { enabled: false } }\n');
    assert.deepEqual(services({ values: { hubble: { ui: { enabled: false } } }, valuesFrom: [{ kind: 'ConfigMap', name: 'on' }] }, on), []);
    assert.deepEqual(
      services(
        {
          valuesFrom: [
            { kind: 'ConfigMap', name: 'on' },
            { kind: 'ConfigMap', name: 'off' },
          ],
        },
        on,
        off,
      ),
      [],
    );
    assert.deepEqual(
      services(
        {
          valuesFrom: [
            { kind: 'ConfigMap', name: 'off' },
            { kind: 'ConfigMap', name: 'on' },
          ],
        },
        on,
        off,
      ),
      ['hubble-ui'],
    );
  });

  it('counts what it cannot read offline as on: a Secret, a ConfigMap from outside the tree, a targetPath over the option', () => {
    assert.deepEqual(services({ valuesFrom: [{ kind: 'Secret', name: 'values' }] }), ['hubble-ui']);
    assert.deepEqual(services({ valuesFrom: [{ kind: 'ConfigMap', name: 'elsewhere' }] }), ['hubble-ui']);
    assert.deepEqual(services({ valuesFrom: [{ kind: 'Secret', name: 'v', targetPath: 'hubble.ui.enabled' }] }), ['hubble-ui']);
    assert.deepEqual(services({ valuesFrom: [{ kind: 'Secret', name: 'v', targetPath: 'ipam.mode' }] }), [], 'a targetPath elsewhere sets nothing here');
  });
});
