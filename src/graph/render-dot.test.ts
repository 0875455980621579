import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { instance, type Viz } from '@viz-js/viz';
import { renderDot } from './render-dot.js';
import { clusterGraph, type TestLayer } from './test-graphs.js';

const reference: readonly TestLayer[] = [
  {
    name: 'infrastructure',
    healthChecks: [
      { kind: 'HelmRelease', name: 'sealed-secrets', namespace: 'kube-system' },
      { kind: 'HelmRelease', name: 'ingress-nginx', namespace: 'ingress-nginx' },
    ],
  },
  { name: 'apps', dependsOn: ['infrastructure'], healthChecks: [{ kind: 'HelmRelease', name: 'podinfo', namespace: 'apps' }] },
  { name: 'database', dependsOn: ['infrastructure'], healthChecks: [{ kind: 'HelmRelease', name: 'postgresql', namespace: 'database' }] },
  { name: 'cert-manager-config', dependsOn: ['infrastructure'], wait: true },
];

interface LaidOut {
  readonly nodes: Map<string, Record<string, unknown>>;
  readonly edges: { from: string; to: string; attributes: Record<string, unknown> }[];
}

describe('renderDot', () => {
  let viz: Viz;
  before(async () => {
    viz = await instance();
  });

  /**
   * Graphviz's own reading of the DOT: fails the test on any error or warning,
   * save the one that says its built-in font metrics lack a width for the
   * non-ASCII `✓` (it then estimates, which only nudges the box size).
   */
  function layOut(dot: string): LaidOut {
    const result = viz.render(dot, { format: 'json', engine: 'dot' });
    assert.equal(result.status, 'success', JSON.stringify(result.errors));
    assert.deepEqual(
      result.errors.filter((e) => !/width of non-ASCII character/.test(e.message)),
      [],
    );
    const json = JSON.parse(result.output!) as {
      objects: (Record<string, unknown> & { name: string })[];
      edges?: (Record<string, unknown> & { tail: number; head: number })[];
    };
    const byIndex = json.objects.map((o) => o.name);
    return {
      nodes: new Map(json.objects.map((o) => [o.name, o])),
      edges: (json.edges ?? []).map((e) => ({ from: byIndex[e.tail]!, to: byIndex[e.head]!, attributes: e })),
    };
  }

  it('is valid DOT, laid out top-down, with one node per Kustomization', () => {
    const dot = renderDot(clusterGraph(reference));
    assert.match(dot, /^digraph "Flux dependencies" \{\n {2}graph \[rankdir=TB /);
    const { nodes } = layOut(dot);
    assert.deepEqual([...nodes.keys()].sort(), ['flux-system/apps', 'flux-system/cert-manager-config', 'flux-system/database', 'flux-system/infrastructure']);
    assert.equal(nodes.get('flux-system/apps')!.id, 'node-flux-system-apps');
  });

  it('draws every dependsOn from the dependency to the dependent', () => {
    const { edges } = layOut(renderDot(clusterGraph(reference)));
    assert.deepEqual(
      edges.map((e) => `${e.from} -> ${e.to}`),
      [
        'flux-system/infrastructure -> flux-system/apps',
        'flux-system/infrastructure -> flux-system/cert-manager-config',
        'flux-system/infrastructure -> flux-system/database',
      ],
    );
    assert.equal(edges[0]!.attributes.id, 'edge-flux-system-infrastructure--flux-system-apps');
  });

  it('labels each node with its name, path and health checks', () => {
    const { nodes } = layOut(renderDot(clusterGraph(reference)));
    const label = String(nodes.get('flux-system/infrastructure')!.label);
    assert.match(label, /<B>infrastructure<\/B>/);
    assert.match(label, /\.\/clusters\/eu-prod-1\/infrastructure/);
    assert.match(label, /✓ HelmRelease\/sealed-secrets.*✓ HelmRelease\/ingress-nginx/);
    assert.match(String(nodes.get('flux-system/cert-manager-config')!.label), /✓ wait: all resources/);
  });

  it('escapes names so quotes, backslashes and markup cannot break the syntax', () => {
    const hostile = ['a"b', 'trailing\\', 'tag<b>&amp;</b>', 'x" -> "infrastructure', 'new\nline'];
    const dot = renderDot(clusterGraph([{ name: 'infrastructure' }, ...hostile.map((name) => ({ name, dependsOn: ['infrastructure'] }))]));
    const { nodes, edges } = layOut(dot);
    assert.equal(nodes.size, 1 + hostile.length, 'no name split into extra nodes');
    assert.equal(edges.length, hostile.length, 'no name injected an edge');
    assert.ok(edges.every((e) => e.from === 'flux-system/infrastructure'));
    assert.ok(nodes.has('flux-system/a"b'), 'a plain quote survives as the node name');
    const tag = [...nodes.values()].find((n) => String(n.name).includes('tag'))!;
    assert.match(String(tag.label), /tag&lt;b&gt;&amp;amp;&lt;\/b&gt;/);
  });

  it('keeps element ids unique when names collide after sanitizing', () => {
    const { nodes } = layOut(renderDot(clusterGraph([{ name: 'a.b' }, { name: 'a_b' }, { name: 'a-b' }])));
    assert.deepEqual([...nodes.values()].map((n) => n.id).sort(), ['node-flux-system-a-b', 'node-flux-system-a-b-2', 'node-flux-system-a_b']);
  });

  it('writes byte-identical text across calls and input orders', () => {
    const once = renderDot(clusterGraph(reference));
    assert.equal(renderDot(clusterGraph(reference)), once);
    assert.equal(renderDot(clusterGraph([...reference].reverse())), once);
    assert.ok(once.endsWith('}\n'));
  });

  it('still draws a dependsOn loop, marking its edges', () => {
    const { edges } = layOut(
      renderDot(
        clusterGraph([
          { name: 'a', dependsOn: ['b'] },
          { name: 'b', dependsOn: ['a'] },
          { name: 'c', dependsOn: ['a'] },
        ]),
      ),
    );
    assert.deepEqual(
      edges.map((e) => `${e.from} -> ${e.to} ${String(e.attributes.class ?? '')}`.trim()),
      ['flux-system/a -> flux-system/b cycle', 'flux-system/a -> flux-system/c', 'flux-system/b -> flux-system/a cycle'],
    );
  });

  it('draws a dependency that is not in the cluster as a dashed placeholder', () => {
    const { nodes, edges } = layOut(renderDot(clusterGraph([{ name: 'apps', dependsOn: ['infrastructure'] }])));
    const placeholder = nodes.get('flux-system/infrastructure')!;
    assert.equal(placeholder.class, 'missing');
    assert.match(String(placeholder.style), /dashed/);
    assert.deepEqual(
      edges.map((e) => `${e.from} -> ${e.to}`),
      ['flux-system/infrastructure -> flux-system/apps'],
    );
  });
});
