import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { instance } from '@viz-js/viz';
import { ValidationError } from '../errors.js';
import { fluxGraphOf } from './flux-graph.js';
import { GRAPH_FORMATS, renderGraph, type GraphFormat } from './graph-format.js';
import { renderDot } from './render-dot.js';
import { renderJson } from './render-json.js';
import { renderMermaid } from './render-mermaid.js';
import { renderSvg } from './render-svg.js';

const layer = (name: string, dependsOn: string[] = []): { object: unknown } => ({
  object: {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: 'flux-system' },
    spec: {
      interval: '10m',
      prune: true,
      path: `./clusters/eu-prod-1/${name}`,
      sourceRef: { kind: 'GitRepository', name: 'flux-system' },
      dependsOn: dependsOn.map((d) => ({ name: d })),
      healthChecks: [{ apiVersion: 'helm.toolkit.fluxcd.io/v2', kind: 'HelmRelease', name: `${name}-release`, namespace: name }],
    },
  },
});

const graph = fluxGraphOf([
  layer('infrastructure'),
  layer('apps', ['infrastructure']),
  layer('database', ['infrastructure']),
  layer('cert-manager-config', ['infrastructure']),
]);

describe('renderGraph', () => {
  it('offers mermaid, dot, json and svg', () => {
    assert.deepEqual([...GRAPH_FORMATS], ['mermaid', 'dot', 'json', 'svg']);
    assert.ok(Object.isFrozen(GRAPH_FORMATS));
  });

  it('renders each format with its renderer', async () => {
    const viz = await instance();
    assert.equal(await renderGraph(graph, 'mermaid'), renderMermaid(graph));
    assert.equal(await renderGraph(graph, 'dot'), renderDot(graph));
    assert.equal(await renderGraph(graph, 'json'), renderJson(graph));
    assert.equal(await renderGraph(graph, 'svg', { viz }), await renderSvg(graph, { viz }));
    assert.match(await renderGraph(graph, 'svg'), /<svg /, 'creates its own Graphviz instance when none is given');
  });

  it('rejects a format outside GRAPH_FORMATS with a ValidationError naming the choices', async () => {
    await assert.rejects(
      renderGraph(graph, 'png' as GraphFormat),
      (error: unknown) => error instanceof ValidationError && error.issues[0]?.field === 'format' && /mermaid, dot, json, svg/.test(error.message),
    );
  });
});
