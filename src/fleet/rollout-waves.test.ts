import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nextRolloutStep, planWaves } from './rollout-waves.js';

describe('planWaves', () => {
  it('cuts the clusters, sorted, into waves of wave_size', () => {
    assert.deepEqual(planWaves(['c', 'a', 'e', 'b', 'd'], 2), [['a', 'b'], ['c', 'd'], ['e']]);
    assert.deepEqual(planWaves(['a'], 5), [['a']]);
    assert.deepEqual(planWaves([], 3), []);
  });
  it('drops duplicates and refuses a wave size below 1', () => {
    assert.deepEqual(planWaves(['a', 'a', 'b'], 1), [['a'], ['b']]);
    assert.throws(() => planWaves(['a'], 0), /wave_size: must be at least 1/);
  });
});

describe('nextRolloutStep', () => {
  const waves = [['a', 'b'], ['c']];
  it('starts the first wave, then waits while any run of the wave is active', () => {
    assert.deepEqual(nextRolloutStep(waves, {}), { kind: 'start', wave: 0, clusters: ['a', 'b'] });
    assert.deepEqual(nextRolloutStep(waves, { a: 'succeeded', b: 'running' }), { kind: 'wait', wave: 0, waitingFor: ['b'] });
  });
  it('starts the next wave only when every run of the previous one succeeded', () => {
    assert.deepEqual(nextRolloutStep(waves, { a: 'succeeded', b: 'succeeded' }), { kind: 'start', wave: 1, clusters: ['c'] });
    assert.deepEqual(nextRolloutStep(waves, { a: 'succeeded', b: 'succeeded', c: 'succeeded' }), { kind: 'done' });
  });
  it('stops at the first failure, saying which wave and clusters, and never starts the next wave', () => {
    assert.deepEqual(
      nextRolloutStep(waves, { a: 'failed', b: 'running' }),
      { kind: 'wait', wave: 0, waitingFor: ['b'] },
      'the rest of the wave finishes first',
    );
    assert.deepEqual(nextRolloutStep(waves, { a: 'failed', b: 'succeeded' }), { kind: 'stopped', wave: 0, failed: ['a'], notStarted: ['c'] });
    assert.deepEqual(nextRolloutStep(waves, { a: 'succeeded', b: 'succeeded', c: 'cancelled' }), { kind: 'stopped', wave: 1, failed: ['c'], notStarted: [] });
  });
});
