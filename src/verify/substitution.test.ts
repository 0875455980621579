import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSubstitution } from './substitution.js';

const configMaps: Record<string, Record<string, unknown>> = {
  'flux-system/cluster-config': { cluster_name: 'demo', cluster_domain: 'demo.example.net', replicas: '3' },
};
const lookup = (namespace: string, name: string) => configMaps[`${namespace}/${name}`];

const kustomization = (postBuild?: unknown) => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name: 'apps', namespace: 'flux-system' },
  spec: { path: './apps', ...(postBuild !== undefined ? { postBuild } : {}) },
});
const fromClusterConfig = { substituteFrom: [{ kind: 'ConfigMap', name: 'cluster-config' }] };

const ingress = (host: string) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name: 'web', namespace: 'tcr' },
  spec: { rules: [{ host }] },
});

describe('analyzeSubstitution', () => {
  it('finds uses, skipping $${} escapes and names that are not variables', () => {
    const dashboard = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'dash', namespace: 'tcr' },
      data: { 'web.json': '{"expr": "rate(x{service=\\"$${service}\\"}[5m])", "a": "${1}", "b": "${ spaced }"}' },
    };
    const result = analyzeSubstitution({
      kustomization: kustomization(fromClusterConfig),
      objects: [ingress('web.${cluster_domain}'), dashboard],
      configMap: lookup,
    });
    assert.deepEqual(result.used, ['cluster_domain']);
    assert.deepEqual(result.issues, []);
    assert.deepEqual(result.notes, []);
  });

  it('reports each undefined variable once, naming where it is used and what was searched', () => {
    const result = analyzeSubstitution({
      kustomization: kustomization(fromClusterConfig),
      objects: [ingress('web.${cluster_domian}.${region}'), ingress('api.${region}')],
      configMap: lookup,
    });
    assert.deepEqual(result.issues, [
      '${cluster_domian} (used by Ingress tcr/web) is not defined by postBuild.substitute, ConfigMap flux-system/cluster-config: Flux 2.9+ fails the reconcile (strict substitution)',
      '${region} (used by Ingress tcr/web) is not defined by postBuild.substitute, ConfigMap flux-system/cluster-config: Flux 2.9+ fails the reconcile (strict substitution)',
    ]);
  });

  it('needs no definition for ${var:=default} and ${var:-default}', () => {
    const result = analyzeSubstitution({
      kustomization: kustomization(fromClusterConfig),
      objects: [ingress('${sub:=web}.${zone:-example.net}')],
      configMap: lookup,
    });
    assert.deepEqual(result.issues, []);
    assert.deepEqual(result.used, ['sub', 'zone']);
  });

  it('reports variables in the output of a Kustomization without postBuild, defaults included', () => {
    const result = analyzeSubstitution({ kustomization: kustomization(), objects: [ingress('${sub:=web}.${cluster_domain}')], configMap: lookup });
    assert.deepEqual(result.issues, ['output uses ${cluster_domain}, ${sub} but spec.postBuild is not set: Flux would apply the literal text']);
    const object = ingress('${x}');
    assert.equal(result.apply(object), object, 'without postBuild Flux applies the object as built');
  });

  it("takes ${var} in a CustomResourceDefinition applied without postBuild as schema documentation (flux bootstrap's gotk-components)", () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'kustomizations.kustomize.toolkit.fluxcd.io' },
      spec: { versions: [{ schema: { openAPIV3Schema: { description: 'e.g. ${var:=default}, ${var:position} and ${var/substring/replacement}.' } } }] },
    };
    assert.deepEqual(analyzeSubstitution({ kustomization: kustomization(), objects: [crd], configMap: lookup }).issues, []);
    assert.deepEqual(analyzeSubstitution({ kustomization: kustomization(), objects: [crd, ingress('web.${cluster_domain}')], configMap: lookup }).issues, [
      'output uses ${cluster_domain} but spec.postBuild is not set: Flux would apply the literal text',
    ]);
  });

  it('notes a variable only a Secret source may define, and is quiet about missing optional sources', () => {
    const result = analyzeSubstitution({
      kustomization: kustomization({
        substituteFrom: [
          { kind: 'ConfigMap', name: 'cluster-config' },
          { kind: 'ConfigMap', name: 'overrides', optional: true },
          { kind: 'Secret', name: 'cluster-secrets' },
        ],
      }),
      objects: [ingress('${db_password}.${cluster_domain}')],
      configMap: lookup,
    });
    assert.deepEqual(result.issues, []);
    assert.deepEqual(result.notes, [
      '${db_password} (used by Ingress tcr/web) may come from Secret flux-system/cluster-secrets, whose keys cannot be checked offline',
    ]);
  });

  it('reports a non-optional ConfigMap source that does not exist, in the Kustomization namespace', () => {
    const result = analyzeSubstitution({
      kustomization: {
        ...kustomization({ substituteFrom: [{ kind: 'ConfigMap', name: 'cluster-config' }] }),
        metadata: { name: 'apps', namespace: 'tenants' },
      },
      objects: [],
      configMap: lookup,
    });
    assert.deepEqual(result.issues, ['postBuild.substituteFrom ConfigMap tenants/cluster-config does not exist in the repository (and is not optional)']);
  });

  it('skips objects annotated kustomize.toolkit.fluxcd.io/substitute: disabled', () => {
    const object = {
      ...ingress('${undefined_here}'),
      metadata: { name: 'web', namespace: 'tcr', annotations: { 'kustomize.toolkit.fluxcd.io/substitute': 'disabled' } },
    };
    const result = analyzeSubstitution({ kustomization: kustomization(fromClusterConfig), objects: [object], configMap: lookup });
    assert.deepEqual(result.issues, []);
    assert.equal(result.apply(object), object);
  });

  it('renders what Flux applies: inline substitute wins, values retype, escapes unescape', () => {
    const result = analyzeSubstitution({
      kustomization: kustomization({ ...fromClusterConfig, substitute: { cluster_name: 'override' } }),
      objects: [],
      configMap: lookup,
    });
    assert.equal(result.values.get('cluster_name'), 'override');
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: '${cluster_name}-web' },
      spec: { replicas: '${replicas}', template: { metadata: { annotations: { grafana: '$${service}', missing: 'a${nope}b' } } } },
    };
    assert.deepEqual(result.apply(deployment), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'override-web' },
      spec: { replicas: 3, template: { metadata: { annotations: { grafana: '${service}', missing: 'ab' } } } },
    });
  });
});
