import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fluxGraphOf } from './flux-graph.js';
import { renderMermaid } from './render-mermaid.js';
import { clusterGraph, type TestLayer } from './test-graphs.js';

const reference: readonly TestLayer[] = [
  {
    name: 'infrastructure',
    healthChecks: [
      { kind: 'HelmRelease', name: 'sealed-secrets', namespace: 'kube-system' },
      { kind: 'HelmRelease', name: 'ingress-nginx', namespace: 'ingress-nginx' },
    ],
  },
  { name: 'apps', dependsOn: ['infrastructure'], wait: true },
  { name: 'database', dependsOn: ['infrastructure'], healthChecks: [{ kind: 'HelmRelease', name: 'postgresql', namespace: 'database' }] },
  { name: 'cert-manager-config', dependsOn: ['infrastructure'] },
];

const NODE_LINE = /^ {2}(k_\w+)\["([^"]*)"\](:::missing)?$/;
const EDGE_LINE = /^ {2}(k_\w+) --> (k_\w+)$/;

/**
 * A strict reading of the subset of Mermaid the renderer writes: every line is
 * the header, a node with a quoted label, an edge between defined nodes, a
 * classDef or a linkStyle. A name that broke out of its label would fail here.
 */
function parseMermaid(text: string): { labels: Map<string, string>; edges: [string, string][] } {
  const lines = text.split('\n');
  assert.equal(lines[0], 'flowchart TD');
  assert.equal(lines.at(-1), '', 'ends with a newline');
  const labels = new Map<string, string>();
  const edges: [string, string][] = [];
  for (const line of lines.slice(1, -1)) {
    const node = NODE_LINE.exec(line);
    const edge = EDGE_LINE.exec(line);
    if (node) {
      assert.ok(!labels.has(node[1]!), `node ${node[1]} defined once`);
      // Inside a label only the <br/> line breaks may be markup.
      assert.doesNotMatch(node[2]!.replaceAll('<br/>', ''), /[<>[\]{}()|`]/, `label of ${node[1]} is escaped`);
      labels.set(node[1]!, node[2]!);
    } else if (edge) {
      edges.push([edge[1]!, edge[2]!]);
    } else {
      assert.match(line, /^ {2}(classDef missing .+|linkStyle \d+(,\d+)* .+)$/, `unexpected line ${JSON.stringify(line)}`);
    }
  }
  for (const [from, to] of edges) assert.ok(labels.has(from) && labels.has(to), `edge ${from} --> ${to} joins defined nodes`);
  return { labels, edges };
}

describe('renderMermaid', () => {
  it('draws one node per Kustomization with its name, path and health checks', () => {
    const { labels } = parseMermaid(renderMermaid(clusterGraph(reference)));
    assert.deepEqual([...labels.values()].sort(), [
      'apps<br/>./clusters/eu-prod-1/apps<br/>✓ wait: all resources',
      'cert-manager-config<br/>./clusters/eu-prod-1/cert-manager-config',
      'database<br/>./clusters/eu-prod-1/database<br/>✓ HelmRelease/postgresql',
      'infrastructure<br/>./clusters/eu-prod-1/infrastructure<br/>✓ HelmRelease/sealed-secrets<br/>✓ HelmRelease/ingress-nginx',
    ]);
  });

  it('draws every dependsOn as dependency --> dependent, so the chart reads in apply order', () => {
    const text = renderMermaid(clusterGraph(reference));
    const { edges } = parseMermaid(text);
    assert.deepEqual(edges, [
      ['k_flux_system_infrastructure', 'k_flux_system_apps'],
      ['k_flux_system_infrastructure', 'k_flux_system_cert_manager_config'],
      ['k_flux_system_infrastructure', 'k_flux_system_database'],
    ]);
    assert.doesNotMatch(text, /linkStyle|classDef/, 'nothing flagged in a healthy graph');
  });

  it('escapes quotes, brackets and angle brackets so a name cannot break the chart', () => {
    const hostile = 'x"] --> evil["<b>pwn</b>'; // would close the label and add an edge if not escaped
    const text = renderMermaid(clusterGraph([{ name: 'infrastructure' }, { name: hostile, dependsOn: ['infrastructure'] }]));
    const { labels, edges } = parseMermaid(text);
    assert.equal(labels.size, 2);
    assert.equal(edges.length, 1);
    const label = [...labels.values()].find((l) => l.startsWith('x'))!;
    assert.equal(label.split('<br/>')[0], 'x#34;#93; --#62; evil#91;#34;#60;b#62;pwn#60;/b#62;');
  });

  it('keeps ids unique when two names sanitize to the same id', () => {
    const { labels } = parseMermaid(renderMermaid(clusterGraph([{ name: 'a.b' }, { name: 'a-b' }, { name: 'end' }])));
    assert.deepEqual([...labels.keys()], ['k_flux_system_a_b', 'k_flux_system_a_b_2', 'k_flux_system_end']);
  });

  it('writes byte-identical text across calls and input orders', () => {
    const once = renderMermaid(clusterGraph(reference));
    assert.equal(renderMermaid(clusterGraph(reference)), once);
    assert.equal(renderMermaid(clusterGraph([...reference].reverse())), once);
  });

  it('still draws a dependsOn loop, with its edges highlighted', () => {
    const text = renderMermaid(
      clusterGraph([{ name: 'infrastructure' }, { name: 'apps', dependsOn: ['infrastructure', 'database'] }, { name: 'database', dependsOn: ['apps'] }]),
    );
    const { edges } = parseMermaid(text);
    assert.deepEqual(edges, [
      ['k_flux_system_apps', 'k_flux_system_database'],
      ['k_flux_system_database', 'k_flux_system_apps'],
      ['k_flux_system_infrastructure', 'k_flux_system_apps'],
    ]);
    assert.match(text, /^ {2}linkStyle 0,1 stroke:#c62828/m);
  });

  it('draws a dependency that is not in the cluster as a dashed placeholder', () => {
    const text = renderMermaid(clusterGraph([{ name: 'apps', dependsOn: ['infrastructure'] }]));
    const { labels, edges } = parseMermaid(text);
    assert.equal(labels.get('k_flux_system_infrastructure'), 'infrastructure<br/>not in this cluster');
    assert.deepEqual(edges, [['k_flux_system_infrastructure', 'k_flux_system_apps']]);
    assert.match(text, /k_flux_system_infrastructure\[".*"\]:::missing\n/);
  });

  it('names Kustomizations outside flux-system with their namespace', () => {
    const graph = fluxGraphOf([
      {
        object: {
          apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
          kind: 'Kustomization',
          metadata: { name: 'web', namespace: 'team-a' },
          spec: { path: './apps/web' },
        },
      },
    ]);
    assert.deepEqual([...parseMermaid(renderMermaid(graph)).labels.values()], ['team-a/web<br/>./apps/web']);
  });
});
