import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { STEPS } from '../runner/run-scaffold.js';
import { STEP_NAMES, runStepsOf } from './run-steps.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);
const event = (ms: number, fields: Record<string, unknown>) => ({
  time: at(ms + 5), // stored a little after the runner logged it
  line: JSON.stringify({ level: 30, time: at(ms).toISOString(), component: 'scaffold-runner', ...fields }),
});

describe('runStepsOf', () => {
  it('names the seven steps like the runner does', () => {
    assert.deepEqual({ ...STEP_NAMES }, Object.fromEntries(Object.entries(STEPS)));
  });

  it('gives seven pending steps for a run without output', () => {
    const steps = runStepsOf([], 'pending');
    assert.equal(steps.length, 7);
    assert.deepEqual(
      steps.map((s) => [s.step, s.name, s.status]),
      Object.entries(STEPS).map(([n, name]) => [Number(n), name, 'pending']),
    );
  });

  it('folds a succeeded run with a supplied certificate: 4–5 skipped, durations from the runner', () => {
    const lines = [
      event(0, { event: 'step_started', step: 1, step_name: 'clone', msg: 'cloning main' }),
      { time: at(50), line: '{"level":30,"msg":"cloned","remote":"file:///x"}' },
      event(94, { event: 'step_finished', step: 1, step_name: 'clone', duration_ms: 94, msg: 'clone done' }),
      event(100, { event: 'step_started', step: 2 }),
      event(1200, { event: 'step_finished', step: 2, duration_ms: 1100 }),
      event(1200, { event: 'step_started', step: 3 }),
      event(1300, { event: 'commit', step: 3, pass: 'infrastructure', sha: 'a'.repeat(40) }),
      event(1300, { event: 'step_finished', step: 3, duration_ms: 100 }),
      event(1300, { event: 'step_skipped', step: 4, msg: 'the sealing certificate was supplied; not waiting for the controller' }),
      event(1300, { event: 'step_skipped', step: 5, msg: 'not fetching it' }),
      event(1300, { event: 'step_started', step: 6 }),
      event(2800, { event: 'step_finished', step: 6, duration_ms: 1500 }),
      event(2800, { event: 'step_started', step: 7 }),
      event(3000, { event: 'step_finished', step: 7 }),
      event(3000, { event: 'run_finished', status: 'succeeded' }),
    ];
    const steps = runStepsOf(lines, 'succeeded');
    assert.deepEqual(
      steps.map((s) => s.status),
      ['succeeded', 'succeeded', 'succeeded', 'skipped', 'skipped', 'succeeded', 'succeeded'],
    );
    assert.equal(steps[0]?.durationMs, 94);
    assert.deepEqual(steps[0]?.startedAt, at(0));
    assert.deepEqual(steps[0]?.finishedAt, at(94));
    assert.equal(steps[1]?.durationMs, 1100);
    // No duration_ms on the event: finished minus started.
    assert.equal(steps[6]?.durationMs, 200);
    assert.equal(steps[3]?.message, 'the sealing certificate was supplied; not waiting for the controller');
    assert.equal(steps[3]?.durationMs, undefined);
    assert.equal(steps[0]?.message, undefined);
  });

  it('shows where a running run is', () => {
    const steps = runStepsOf(
      [event(0, { event: 'step_started', step: 1 }), event(10, { event: 'step_finished', step: 1 }), event(10, { event: 'step_started', step: 2 })],
      'running',
    );
    assert.deepEqual(
      steps.map((s) => s.status),
      ['succeeded', 'running', 'pending', 'pending', 'pending', 'pending', 'pending'],
    );
    assert.deepEqual(steps[1]?.startedAt, at(10));
    assert.equal(steps[1]?.finishedAt, undefined);
  });

  it('records a failed step with its message and leaves the rest pending', () => {
    const steps = runStepsOf(
      [
        event(0, { event: 'step_started', step: 1 }),
        event(10, { event: 'step_finished', step: 1, duration_ms: 10 }),
        event(10, { event: 'step_started', step: 2 }),
        event(30, {
          event: 'step_failed',
          step: 2,
          duration_ms: 20,
          error_code: 'invalid_input',
          msg: 'render-infrastructure failed: no reference environment clusters/nope',
        }),
      ],
      'failed',
    );
    assert.deepEqual(
      steps.map((s) => s.status),
      ['succeeded', 'failed', 'pending', 'pending', 'pending', 'pending', 'pending'],
    );
    assert.equal(steps[1]?.message, 'render-infrastructure failed: no reference environment clusters/nope');
    assert.equal(steps[1]?.durationMs, 20);
  });

  it('fails the step a failed or cancelled run was on when the runner never said so', () => {
    const lines = [event(0, { event: 'step_started', step: 4 })];
    assert.equal(runStepsOf(lines, 'failed')[3]?.status, 'failed');
    assert.equal(runStepsOf(lines, 'cancelled')[3]?.status, 'failed');
    assert.equal(runStepsOf(lines, 'running')[3]?.status, 'running');
  });

  it('gives an upgrade run its three named steps, and a removal its own, ignoring a step number beyond them', () => {
    const lines = [
      event(0, { event: 'step_started', step: 1, step_name: 'clone' }),
      event(20, { event: 'step_finished', step: 1, step_name: 'clone' }),
      event(20, { event: 'step_started', step: 2, step_name: 'render-upgrade' }),
      event(900, { event: 'step_finished', step: 2, step_name: 'render-upgrade' }),
      event(900, { event: 'step_started', step: 3, step_name: 'push-upgrade' }),
      event(1000, { event: 'commit', step: 3, pass: 'upgrade', sha: 'a'.repeat(40) }),
      event(1000, { event: 'step_finished', step: 3, step_name: 'push-upgrade' }),
      event(1000, { event: 'step_started', step: 6 }),
    ];
    const upgrade = runStepsOf(lines, 'succeeded', 'upgrade');
    assert.deepEqual(
      upgrade.map((s) => [s.step, s.name, s.status]),
      [
        [1, 'clone', 'succeeded'],
        [2, 'render-upgrade', 'succeeded'],
        [3, 'push-upgrade', 'succeeded'],
      ],
    );
    assert.equal(upgrade[1]?.durationMs, 880);
    assert.deepEqual(
      runStepsOf([], 'pending', 'remove').map((s) => [s.step, s.name, s.status]),
      [
        [1, 'clone', 'pending'],
        [2, 'lift-protection', 'pending'],
        [3, 'wait-for-lift', 'pending'],
        [4, 'remove-files', 'pending'],
        [5, 'push-removal', 'pending'],
      ],
    );
  });

  it('falls back to the stored time and ignores what is not a step event', () => {
    const lines = [
      { time: at(0), line: '{"event":"step_started","step":1}' },
      { time: at(40), line: '{"event":"step_finished","step":1}' },
      { time: at(41), line: 'plain text from the runner' },
      { time: at(42), line: '{"event":"step_started","step":9}' },
      { time: at(43), line: '{"event":"step_started","step":"2"}' },
      { time: at(44), line: '{"event":"step_started","step":2.5}' },
      { time: at(45), line: '{not json' },
      { time: at(46), line: '{"event":"credential","step":3,"name":"x"}' },
    ];
    const steps = runStepsOf(lines, 'running');
    assert.equal(steps[0]?.status, 'succeeded');
    assert.equal(steps[0]?.durationMs, 40);
    assert.deepEqual(
      steps.slice(1).map((s) => s.status),
      ['pending', 'pending', 'pending', 'pending', 'pending', 'pending'],
    );
  });
});
