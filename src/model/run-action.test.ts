import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RUN_ACTIONS, RUN_PASSES, isRunAction, passOfAction, runActionOf, runActionsDescribed } from './run-action.js';
import { stepsOf } from './scaffold-steps.js';

describe('the run-action registry', () => {
  it('gives each action the step table the runner runs, so the timeline numbers and names what the runner logs', () => {
    for (const action of RUN_ACTIONS) assert.equal(runActionOf(action).steps, stepsOf(action), action);
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
    assert.equal(runActionsDescribed(), "scaffold: the two-pass render; upgrade: rendered again from the current reference, credentials kept; remove: the generator's files deleted");
  });
});
