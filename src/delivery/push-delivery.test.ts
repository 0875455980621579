import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isProtectedBranchRefusal } from './push-delivery.js';

// What each forge's git server prints when a branch protection turns a direct push down.
const REFUSALS = {
  github: 'remote: error: GH006: Protected branch update failed for refs/heads/main.',
  gitlab: 'remote: GitLab: You are not allowed to push code to protected branches on this project.',
  gitea: 'remote: Gitea: Not allowed to push to protected branch main',
  hook: ' ! [remote rejected] main -> main (pre-receive hook declined)',
};

describe('isProtectedBranchRefusal', () => {
  for (const [who, message] of Object.entries(REFUSALS)) {
    it(`recognises ${who}'s refusal of a push to a protected branch`, () => {
      assert.equal(isProtectedBranchRefusal(new Error(message)), true);
    });
  }

  it('does not take another push failure for a protection', () => {
    assert.equal(isProtectedBranchRefusal(new Error(' ! [rejected] main -> main (fetch first)')), false);
    assert.equal(isProtectedBranchRefusal(new Error('fatal: Authentication failed for https://gitlab.example.com/acme/platform.git')), false);
  });
});
