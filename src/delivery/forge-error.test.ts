/**
 * A forge's HTTP answer as the product's error: what a run records as its
 * error code, and whether it is worth retrying.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AuthenticationError, ConflictError, ForbiddenError, NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import { callForge, forgeErrorOf } from './forge-error.js';

describe('forge errors', () => {
  it('names each HTTP answer by what it means, and only an unreachable or failing forge as worth retrying', () => {
    const cases = [
      [401, AuthenticationError, false],
      [403, ForbiddenError, false],
      [404, NotFoundError, false],
      [409, ConflictError, false],
      [400, ValidationError, false],
      [422, ValidationError, false],
      [500, UnavailableError, true],
      [undefined, UnavailableError, true],
    ] as const;
    for (const [status, kind, transient] of cases) {
      const error = forgeErrorOf('GitLab', 'opening a merge request', status, new Error('Another open merge request already exists'));
      assert.ok(error instanceof kind, `${status}: ${error.name}`);
      assert.equal(error.transient, transient, String(status));
      assert.equal(error.message, `GitLab opening a merge request failed${status ? ` (HTTP ${status})` : ''}: Another open merge request already exists`);
    }
  });

  it('translates what a forge call throws, keeping the forge’s error as the cause', async () => {
    const thrown = Object.assign(new Error('Validation Failed'), { status: 422 });
    await assert.rejects(
      callForge(
        'GitHub',
        'opening a pull request',
        (error) => (error as { status?: number }).status,
        () => Promise.reject(thrown),
      ),
      (error: unknown) => error instanceof ValidationError && error.cause === thrown && /GitHub opening a pull request failed \(HTTP 422\)/.test(error.message),
    );
    assert.equal(
      await callForge(
        'GitHub',
        'reading',
        () => undefined,
        () => Promise.resolve(7),
      ),
      7,
    );
  });
});
