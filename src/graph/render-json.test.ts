import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderJson } from './render-json.js';
import { clusterGraph, type TestLayer } from './test-graphs.js';

const reference: readonly TestLayer[] = [
  { name: 'apps', dependsOn: ['infrastructure'], wait: true },
  { name: 'database', dependsOn: ['infrastructure'], healthChecks: [{ kind: 'HelmRelease', name: 'postgresql', namespace: 'database' }] },
  { name: 'cert-manager-config', dependsOn: ['infrastructure'] },
  { name: 'infrastructure', healthChecks: [{ kind: 'HelmRelease', name: 'sealed-secrets', namespace: 'kube-system' }] },
];

interface Document {
  nodes: { id: string; name: string; namespace: string; path: string; dependsOn: string[]; healthChecks: unknown[]; wait: boolean; file?: string }[];
  edges: { from: string; to: string }[];
  order: string[];
  cycles: string[][];
}

const parse = (text: string): Document => JSON.parse(text) as Document;

describe('renderJson', () => {
  it('lists each Kustomization with its path, dependencies, health checks and wait', () => {
    const document = parse(renderJson(clusterGraph(reference)));
    assert.deepEqual(Object.keys(document), ['nodes', 'edges', 'order', 'cycles']);
    assert.deepEqual(
      document.nodes.map((n) => n.id),
      ['flux-system/apps', 'flux-system/cert-manager-config', 'flux-system/database', 'flux-system/infrastructure'],
    );
    assert.deepEqual(document.nodes[2], {
      id: 'flux-system/database',
      name: 'database',
      namespace: 'flux-system',
      path: './clusters/eu-prod-1/database',
      dependsOn: ['flux-system/infrastructure'],
      healthChecks: [{ apiVersion: 'helm.toolkit.fluxcd.io/v2', kind: 'HelmRelease', name: 'postgresql', namespace: 'database' }],
      wait: false,
      file: 'clusters/eu-prod-1/flux/database.yaml',
    });
    assert.equal(document.nodes[0]!.wait, true);
  });

  it('gives one edge per dependsOn, from dependency to dependent', () => {
    assert.deepEqual(parse(renderJson(clusterGraph(reference))).edges, [
      { from: 'flux-system/infrastructure', to: 'flux-system/apps' },
      { from: 'flux-system/infrastructure', to: 'flux-system/cert-manager-config' },
      { from: 'flux-system/infrastructure', to: 'flux-system/database' },
    ]);
  });

  it('gives an apply order in which every Kustomization follows its dependencies', () => {
    const graph = clusterGraph([...reference, { name: 'tenants', dependsOn: ['apps', 'database'] }]);
    const document = parse(renderJson(graph));
    assert.deepEqual(document.order, [
      'flux-system/infrastructure',
      'flux-system/apps',
      'flux-system/cert-manager-config',
      'flux-system/database',
      'flux-system/tenants',
    ]);
    for (const { from, to } of document.edges) assert.ok(document.order.indexOf(from) < document.order.indexOf(to), `${from} before ${to}`);
    assert.deepEqual(document.cycles, []);
  });

  it('reports cycles instead of failing, and orders only what Flux can apply', () => {
    const graph = clusterGraph([
      { name: 'infrastructure' },
      { name: 'apps', dependsOn: ['infrastructure', 'database'] },
      { name: 'database', dependsOn: ['apps'] },
      { name: 'monitoring', dependsOn: ['database'] },
      { name: 'cert-manager-config', dependsOn: ['infrastructure'] },
    ]);
    const document = parse(renderJson(graph));
    assert.deepEqual(document.cycles, [['flux-system/apps', 'flux-system/database', 'flux-system/apps']]);
    // apps and database wait on each other; monitoring waits on them forever.
    assert.deepEqual(document.order, ['flux-system/infrastructure', 'flux-system/cert-manager-config']);
    assert.equal(document.nodes.length, 5, 'every Kustomization is still listed');
    assert.ok(document.edges.some((e) => e.from === 'flux-system/database' && e.to === 'flux-system/apps'));
  });

  it('keeps a dependency on an absent Kustomization visible without holding up the order', () => {
    const document = parse(renderJson(clusterGraph([{ name: 'apps', dependsOn: ['infrastructure', 'infrastructure'] }])));
    assert.deepEqual(document.nodes[0]!.dependsOn, ['flux-system/infrastructure']);
    assert.deepEqual(document.edges, [{ from: 'flux-system/infrastructure', to: 'flux-system/apps' }]);
    assert.deepEqual(document.order, ['flux-system/apps']);
  });

  it('is pretty-printed and byte-identical across calls and input orders', () => {
    const once = renderJson(clusterGraph(reference));
    assert.equal(renderJson(clusterGraph(reference)), once);
    assert.equal(renderJson(clusterGraph([...reference].reverse())), once);
    assert.ok(once.startsWith('{\n  "nodes": [\n    {\n      "id": "flux-system/apps",'));
    assert.ok(once.endsWith('}\n'));
  });

  it('carries names with quotes and markup through unchanged', () => {
    const name = 'x"] --> <b>\\';
    const document = parse(renderJson(clusterGraph([{ name }])));
    assert.equal(document.nodes[0]!.name, name);
    assert.equal(document.nodes[0]!.id, `flux-system/${name}`);
  });
});
