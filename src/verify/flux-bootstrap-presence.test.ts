import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fluxOwnerConflict } from '../gitops/flux-instance-plan.js';
import { formatFinding } from './finding.js';
import { checkFluxBootstrap, type FluxBootstrapInput } from './flux-bootstrap-presence.js';

const DIR = 'clusters/eu-prod-1';
const BOOTSTRAP = [`${DIR}/flux-system/gotk-components.yaml`, `${DIR}/flux-system/gotk-sync.yaml`, `${DIR}/flux-system/kustomization.yaml`];
const OURS = [`${DIR}/flux/kustomization.yaml`, `${DIR}/kustomization.yaml`];
const COMMIT = '0123456789abcdef0123456789abcdef01234567';

function check(input: Partial<FluxBootstrapInput>): string[] {
  return checkFluxBootstrap({ clusterDir: DIR, files: [], fluxInstance: false, ...input }).map(formatFinding);
}

describe('checkFluxBootstrap', () => {
  it('fails a tree that lost the flux-system/ the previous commit had, naming the commit and the fix', () => {
    assert.deepEqual(check({ files: OURS, previous: { commit: COMMIT, files: [...BOOTSTRAP, ...OURS] } }), [
      `${DIR}/flux-system: Kustomization flux-system/flux-system: flux-system/ was in commit 0123456789ab and is gone: the sync (prune: true) would delete Flux itself; restore it with \`git checkout 0123456789ab -- ${DIR}/flux-system\` and keep it in ${DIR}'s kustomization resources`,
    ]);
  });

  it('accepts a tree that never had flux-system/, or whose Flux the Flux Operator now manages', () => {
    assert.deepEqual(check({ files: OURS, previous: { commit: COMMIT, files: OURS } }), []);
    assert.deepEqual(check({ files: OURS }), []);
    assert.deepEqual(check({ files: OURS, previous: { commit: COMMIT, files: [...BOOTSTRAP, ...OURS] }, fluxInstance: true }), []);
  });

  it('fails an entry point that does not list an existing flux-system/, in any spelling it accepts', () => {
    const files = [...BOOTSTRAP, ...OURS];
    assert.deepEqual(check({ files, entryPoint: { file: `${DIR}/kustomization.yaml`, resources: ['flux'] } }), [
      `${DIR}/kustomization.yaml: Kustomization flux-system/flux-system: resources does not list flux-system, so the sync (prune: true) would delete what flux bootstrap installed, Flux included: add flux-system to resources`,
    ]);
    for (const entry of ['flux-system', './flux-system', 'flux-system/', 'flux-system/gotk-sync.yaml']) {
      assert.deepEqual(check({ files, entryPoint: { file: `${DIR}/kustomization.yaml`, resources: ['flux', entry] } }), [], entry);
    }
    // No entry point: Flux generates one that takes in every directory.
    assert.deepEqual(check({ files }), []);
  });

  it("fails a FluxInstance beside bootstrap's flux-system/, printing the migration to the Flux Operator", () => {
    const lines = check({
      files: [...BOOTSTRAP, ...OURS],
      entryPoint: { file: `${DIR}/kustomization.yaml`, resources: ['flux', 'flux-system'] },
      fluxInstance: true,
    });
    assert.deepEqual(lines, [`${DIR}/flux-system: Kustomization flux-system/flux-system: ${fluxOwnerConflict(DIR)}`]);
    assert.match(
      lines[0]!,
      /install it into flux-system .*kubectl apply the FluxInstance.*flux trace kustomization flux-system.*only then delete clusters\/eu-prod-1\/flux-system\//,
    );
    // Either owner alone is fine.
    assert.deepEqual(check({ files: [...BOOTSTRAP, ...OURS], entryPoint: { file: `${DIR}/kustomization.yaml`, resources: ['flux', 'flux-system'] } }), []);
    assert.deepEqual(check({ files: OURS, fluxInstance: true }), []);
  });
});
