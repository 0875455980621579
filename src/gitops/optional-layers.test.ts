import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { ValidationError } from '../errors.js';
import { enabledOptionalLayers, markOptionalLayer, OPTIONAL_LAYER_ANNOTATION } from './optional-layers.js';
import { parsePlatformDescriptor } from './platform-descriptor.js';

const LAYERS = [
  { name: 'bootstrap', dependsOn: [], optional: false },
  { name: 'platform', dependsOn: ['bootstrap'], optional: false },
  { name: 'agent', dependsOn: ['platform'], optional: true },
  { name: 'agent-dashboards', dependsOn: ['agent'], optional: true },
  { name: 'previews', dependsOn: [], optional: true },
];

function issuesOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.issues.map((i) => `${i.field}: ${i.message}`);
    throw error;
  }
  assert.fail('expected a ValidationError');
}

describe('which optional layers a cluster resumes', () => {
  it('enables what the cluster names, and keeps what it had when it names nothing', () => {
    assert.deepEqual([...enabledOptionalLayers({ layers: LAYERS, skipped: [], requested: ['previews'], previous: ['agent'] })], ['previews']);
    assert.deepEqual([...enabledOptionalLayers({ layers: LAYERS, skipped: [], requested: undefined, previous: ['agent', 'gone', 'platform'] })], ['agent']);
    assert.deepEqual([...enabledOptionalLayers({ layers: LAYERS, skipped: [], requested: [], previous: ['agent'] })], []);
  });

  it('refuses a name that is no layer, a layer that is always on, and one this cluster does not get, listing what it can enable', () => {
    assert.deepEqual(
      issuesOf(() => enabledOptionalLayers({ layers: LAYERS, skipped: ['tooling'], requested: ['agnet', 'platform', 'tooling'], previous: undefined })),
      [
        'cluster.enable_layers: "agnet" is not a layer of this platform; the optional layers it can enable: agent, agent-dashboards, previews',
        'cluster.enable_layers: "platform" is not optional: it is always on; the optional layers it can enable: agent, agent-dashboards, previews',
        'cluster.enable_layers: "tooling" is not a layer this cluster gets (its `when` does not hold for the cluster\'s attributes); the optional layers it can enable: agent, agent-dashboards, previews',
      ],
    );
  });

  it('refuses enabling a layer whose optional dependency would stay suspended: Flux would never make it Ready', () => {
    assert.deepEqual(
      issuesOf(() => enabledOptionalLayers({ layers: LAYERS, skipped: [], requested: ['agent-dashboards'], previous: undefined })),
      [
        'cluster.enable_layers: "agent-dashboards" depends on optional layer "agent", which would stay suspended, and a Kustomization depending on a suspended one never becomes Ready: enable agent too',
      ],
    );
  });
});

describe('an optional layer in the catalog', () => {
  const catalog = (agentOptional: boolean, appOptional: boolean) => `apiVersion: gitops-scaffolder.io/v1alpha1
kind: Platform
layers:
  - { name: platform, path: platform }
  - { name: agent, path: agent, dependsOn: [platform], optional: ${agentOptional} }
  - { name: app, path: app, dependsOn: [agent], optional: ${appOptional} }
bootstrap: { layer: platform }
`;
  it('may have optional dependents only', () => {
    assert.doesNotThrow(() => parsePlatformDescriptor(catalog(true, true)));
    assert.deepEqual(
      issuesOf(() => parsePlatformDescriptor(catalog(true, false))),
      [
        'scaffold.yaml.layers.app.dependsOn: "agent" is optional (suspended on every cluster that does not enable it), and a Kustomization depending on a suspended one never becomes Ready: make app optional too, or drop the dependency',
      ],
    );
  });

  it('is rendered suspended and marked optional; resumed, the suspend field is gone', () => {
    const yaml =
      '# Layer agent.\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: agent\n  namespace: flux-system\nspec:\n  prune: true\n';
    const suspended = parse(markOptionalLayer(yaml, false)) as { metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> };
    assert.equal(suspended.spec.suspend, true);
    assert.equal(suspended.metadata.annotations[OPTIONAL_LAYER_ANNOTATION], 'true');
    assert.ok(markOptionalLayer(yaml, false).startsWith('# Layer agent.'));
    const resumed = parse(markOptionalLayer(markOptionalLayer(yaml, false), true)) as { spec: Record<string, unknown> };
    assert.equal('suspend' in resumed.spec, false);
  });
});
