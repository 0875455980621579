import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fluxGraphOf } from './flux-graph.js';
import { SUSPENDED_LINE } from './graph-view.js';
import { renderDot } from './render-dot.js';
import { renderJson } from './render-json.js';
import { renderMermaid } from './render-mermaid.js';
import { renderSvg } from './render-svg.js';

const kustomization = (name: string, spec: Record<string, unknown>) => ({
  object: {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: 'flux-system' },
    spec: { path: `./clusters/c/${name}`, wait: true, ...spec },
  },
});
// An opt-in layer the cluster has not enabled, beside an active one.
const graph = fluxGraphOf([kustomization('platform', {}), kustomization('agent', { dependsOn: [{ name: 'platform' }], suspend: true })]);

describe('a suspended (opt-in) Kustomization in the graph', () => {
  it('is marked suspended in the JSON, and only it', () => {
    const nodes = (JSON.parse(renderJson(graph)) as { nodes: { name: string; suspended?: boolean }[] }).nodes;
    assert.deepEqual(
      nodes.map((n) => [n.name, n.suspended ?? false]),
      [
        ['agent', true],
        ['platform', false],
      ],
    );
  });

  it('says so in its label and is drawn apart (dashed, class suspended), not as failed or missing', async () => {
    assert.match(renderMermaid(graph), new RegExp(`agent<br/>\\./clusters/c/agent<br/>${SUSPENDED_LINE}`));
    const dot = renderDot(graph);
    assert.match(dot, /"flux-system\/agent" \[id="node-flux-system-agent" class="suspended" style="rounded,dashed,filled"/);
    assert.doesNotMatch(dot, /"flux-system\/platform" \[[^\]]*suspended/);
    const svg = await renderSvg(graph);
    assert.match(svg, /<g id="node-flux-system-agent" class="node suspended">/);
    assert.match(svg, /suspended: applies nothing until resumed/);
  });
});
