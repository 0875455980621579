import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { terseRunOutput } from './terse-run-output.js';

/** The lines printed for `events`, written as the runner's logger writes them. */
function printed(events: readonly Record<string, unknown>[], color = false): string[] {
  let text = '';
  const out = terseRunOutput({ write: (chunk: string) => (text += chunk) }, color);
  for (const event of events) out.write(`${JSON.stringify(event)}\n`);
  return text.split('\n').slice(0, -1);
}

describe('terse run output', () => {
  it('prints one line per step, the commits and the outcome, and nothing for chatter', () => {
    const lines = printed([
      { level: 'info', event: 'step_started', step: 1, step_name: 'clone', msg: 'cloning' },
      { level: 'debug', msg: 'git clone --filter=blob:none' },
      { level: 'info', event: 'step_finished', step: 1, step_name: 'clone', duration_ms: 1234, msg: 'clone done' },
      { level: 'info', event: 'step_skipped', step: 4, step_name: 'wait-controller', msg: 'a certificate was supplied' },
      { level: 'info', event: 'commit', pass: 'all', sha: 'abc', msg: 'pushed pass all as abc to main' },
      { level: 'warn', msg: 'retrying the push', error: { message: 'remote rejected' } },
      { level: 'info', event: 'run_finished', status: 'succeeded', msg: 'scaffolded clusters/eu-prod-1' },
    ]);
    assert.deepEqual(lines, [
      '✓ 1/7 clone (1.2 s)',
      '- 4/7 wait-controller skipped: a certificate was supplied',
      '  pushed pass all as abc to main',
      'warning: retrying the push (remote rejected)',
      '==> succeeded: scaffolded clusters/eu-prod-1',
    ]);
  });

  it('says which step failed and why, coloured only when asked', () => {
    const event = { level: 'error', event: 'step_failed', step: 2, step_name: 'render-infrastructure', duration_ms: 40, msg: 'no reference environment' };
    assert.deepEqual(printed([event]), ['✗ 2/7 render-infrastructure failed (40 ms): no reference environment']);
    assert.ok((printed([event], true)[0] ?? '').startsWith('\u001b[31m✗\u001b[0m 2/7'));
  });
});
