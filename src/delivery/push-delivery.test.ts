import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ForbiddenError } from '../errors.js';
import type { DeliverPassRequest } from '../run/delivery.js';
import type { GitWorkspace } from '../run/ports.js';
import { isProtectedBranchRefusal, pushDelivery } from './push-delivery.js';

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

describe('push delivery', () => {
  /** A pass whose push fails with `failure`. */
  const refusedWith = (failure: Error): DeliverPassRequest => ({
    workspace: {
      push: () => Promise.reject(failure),
    } as unknown as GitWorkspace,
    runId: 'run-1',
    cluster: { name: 'eu-2' },
    pass: 'all',
    branch: 'main',
    summary: { written: [], removed: [], verify: 'passed' },
    maxAttempts: 3,
  });

  it('turns a protected branch refusal into a ForbiddenError that points at pull_request delivery', async () => {
    await assert.rejects(pushDelivery.deliver(refusedWith(new Error(REFUSALS.github))), (error: unknown) => {
      assert.ok(error instanceof ForbiddenError, String(error));
      assert.match(error.message, /direct push to main, which is protected \(remote: error: GH006/);
      assert.match(error.message, /delivery\.mode "pull_request"/);
      return true;
    });
  });

  it('lets any other push failure through as it is, without advice about protections', async () => {
    const failure = new Error('fatal: Authentication failed for https://gitlab.example.com/acme/platform.git');
    await assert.rejects(pushDelivery.deliver(refusedWith(failure)), (error: unknown) => error === failure);
  });
});
