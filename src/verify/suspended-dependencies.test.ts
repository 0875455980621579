import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fluxGraphOf } from '../graph/flux-graph.js';
import { formatFinding } from './finding.js';
import { checkSuspendedDependencies } from './suspended-dependencies.js';

function layer(name: string, dependsOn: string[], suspend?: boolean) {
  const object = {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: 'flux-system' },
    spec: { dependsOn: dependsOn.map((d) => ({ name: d })), ...(suspend ? { suspend } : {}) },
  };
  return { node: fluxGraphOf([{ object }]).nodes[0]!, file: `clusters/c/flux/${name}.yaml` };
}

describe('dependsOn a suspended (opt-in) layer', () => {
  it('flags an active Kustomization depending on a suspended one: Flux never makes it Ready', () => {
    const lines = checkSuspendedDependencies([layer('platform', []), layer('agent', ['platform'], true), layer('app', ['platform', 'agent'])]).map(
      formatFinding,
    );
    assert.deepEqual(lines, [
      'clusters/c/flux/app.yaml: Kustomization flux-system/app: dependsOn flux-system/agent, which is suspended (spec.suspend: true, an opt-in layer not enabled here): Flux holds this one back as DependencyNotReady and it never becomes Ready. Enable that layer on this cluster, make this layer optional too, or drop the dependency',
    ]);
  });

  it('passes suspended layers depending on suspended ones, and the same tree once the layer is resumed', () => {
    assert.deepEqual(checkSuspendedDependencies([layer('platform', []), layer('agent', ['platform'], true), layer('agent-config', ['agent'], true)]), []);
    assert.deepEqual(checkSuspendedDependencies([layer('platform', []), layer('agent', ['platform']), layer('app', ['agent'])]), []);
  });
});
