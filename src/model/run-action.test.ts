import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RUN_ACTIONS, RUN_PASSES, isRunAction, isStepNumber, passOfAction, runActionOf, runActionsDescribed, stepsOf } from './run-action.js';

describe('the run-action registry', () => {
  it('gives each action its step table, a scaffold by default, and numbers steps up to the longest table', () => {
    assert.deepEqual(
      RUN_ACTIONS.map(
        (action) =>
          `${action}: ${stepsOf(action)
            .map((step) => step.name)
            .join(' ')}`,
      ),
      [
        'scaffold: clone render-infrastructure push-infrastructure wait-for-sealing-controller fetch-sealing-certificate render-all push-all',
        'upgrade: clone render-upgrade push-upgrade',
        'remove: clone lift-protection wait-for-lift remove-files push-removal',
      ],
    );
    assert.equal(stepsOf(), stepsOf('scaffold'));
    // An event's step is a number of some action's table: 1 to 7, never 0 or 8.
    assert.deepEqual([0, 1, 7, 8, 2.5, '3'].map(isStepNumber), [false, true, true, false, false, false]);
  });

  it('lists the passes stored runs, trailers and request branches already carry, in order', () => {
    assert.deepEqual(RUN_PASSES, ['infrastructure', 'all', 'upgrade', 'remove', 'lift-protection']);
    assert.equal(passOfAction('upgrade'), 'upgrade');
    assert.equal(passOfAction('remove'), 'remove');
  });

  it('takes caller secrets and seals only for a scaffold; fleet actions run with the service credentials', () => {
    assert.deepEqual(
      RUN_ACTIONS.map((action) => [action, runActionOf(action).inputs.callerSecrets, runActionOf(action).seals]),
      [
        ['scaffold', true, true],
        ['upgrade', false, false],
        ['remove', false, false],
      ],
    );
  });

  it('knows its own names and nothing else (not an inherited property)', () => {
    assert.deepEqual([...RUN_ACTIONS], ['scaffold', 'upgrade', 'remove']);
    assert.equal(isRunAction('remove'), true);
    assert.equal(isRunAction('rotate'), false);
    assert.equal(isRunAction('toString'), false);
  });

  it('describes every action for the API and the runner', () => {
    assert.equal(
      runActionsDescribed(),
      "scaffold: the two-pass render; upgrade: rendered again from the current reference, credentials kept; remove: the generator's files deleted",
    );
  });
});
