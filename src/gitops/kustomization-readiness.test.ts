import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appliesSource, kustomizationReadiness, revisionMatches } from './kustomization-readiness.js';

const SHA = 'a1afe267b54f38b46b487f6e938a6fd508278c07';
const ready = { type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', message: `Applied revision: main@sha1:${SHA}` };

describe('revisionMatches', () => {
  it('reads the revision forms Flux writes', () => {
    assert.equal(revisionMatches(`main@sha1:${SHA}`, SHA), true);
    assert.equal(revisionMatches(`refs/heads/main@sha1:${SHA.toUpperCase()}`, SHA), true);
    assert.equal(revisionMatches(`sha1:${SHA}`, SHA), true);
    assert.equal(revisionMatches(`main/${SHA}`, SHA), true, 'Flux 0.x');
  });
  it('refuses another commit, a prefix and a missing revision', () => {
    assert.equal(revisionMatches(`main@sha1:${SHA}`, SHA.slice(0, 12)), false);
    assert.equal(revisionMatches(`main@sha1:${'0'.repeat(40)}`, SHA), false);
    assert.equal(revisionMatches(undefined, SHA), false);
  });
});

describe('kustomizationReadiness', () => {
  const meta = { name: 'apps', namespace: 'flux-system', generation: 2 };
  it('is ready at the commit only when the status has seen the current generation', () => {
    const status = { observedGeneration: 2, lastAppliedRevision: `main@sha1:${SHA}`, conditions: [ready] };
    assert.equal(kustomizationReadiness({ metadata: meta, status }, SHA).phase, 'ready');
    assert.equal(kustomizationReadiness({ metadata: meta, status: { ...status, observedGeneration: 1 } }, SHA).phase, 'progressing');
  });
  it('fails a suspended or stalled Kustomization', () => {
    assert.equal(kustomizationReadiness({ metadata: meta, spec: { suspend: true } }, SHA).phase, 'failed');
    const stalled = kustomizationReadiness(
      { metadata: meta, status: { conditions: [{ type: 'Stalled', status: 'True', reason: 'InvalidPath', message: 'path not found' }] } },
      SHA,
    );
    assert.deepEqual([stalled.phase, stalled.summary], ['failed', 'Stalled=True (InvalidPath: path not found), nothing applied yet']);
  });
  it('counts an opt-in layer suspended by the render as ready, not failed: the cluster has not enabled it', () => {
    const optional = { ...meta, annotations: { 'gitops-scaffolder.io/optional-layer': 'true' } };
    const state = kustomizationReadiness({ metadata: optional, spec: { suspend: true } }, SHA);
    assert.deepEqual([state.phase, state.summary], ['ready', 'suspended: an opt-in layer this cluster has not enabled']);
    // Enabled (resumed), it is judged like any other layer.
    assert.equal(kustomizationReadiness({ metadata: optional, spec: { suspend: false } }, SHA).phase, 'progressing');
  });
  it('keeps a retryable reason progressing even at the commit', () => {
    const status = {
      lastAttemptedRevision: `main@sha1:${SHA}`,
      conditions: [{ type: 'Ready', status: 'False', reason: 'HealthCheckFailed', message: 'timeout' }],
    };
    const state = kustomizationReadiness({ metadata: meta, status }, SHA);
    assert.equal(state.phase, 'progressing');
    // The dashboard shows these on their own, per Kustomization.
    assert.deepEqual([state.ready, state.reason], ['False', 'HealthCheckFailed']);
  });
});

describe('appliesSource', () => {
  const source = { kind: 'GitRepository', namespace: 'flux-system', name: 'flux-system' };
  it('defaults the sourceRef namespace to the Kustomization own', () => {
    assert.equal(appliesSource({ metadata: { namespace: 'flux-system' }, spec: { sourceRef: { kind: 'GitRepository', name: 'flux-system' } } }, source), true);
    assert.equal(appliesSource({ metadata: { namespace: 'apps' }, spec: { sourceRef: { kind: 'GitRepository', name: 'flux-system' } } }, source), false);
    assert.equal(appliesSource({ metadata: { namespace: 'flux-system' }, spec: { sourceRef: { kind: 'OCIRepository', name: 'flux-system' } } }, source), false);
  });
});
