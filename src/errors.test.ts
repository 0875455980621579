import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuthenticationError,
  ConcurrentPushError,
  ConflictError,
  ForbiddenError,
  MissingDependencyError,
  NotFoundError,
  TimeoutError,
  UnavailableError,
  ValidationError,
  VerificationError,
  failureOf,
} from './errors.js';
import { EXIT_FAILURE, EXIT_TRANSIENT, exitCodeOf } from './exit-codes.js';

describe('failureOf', () => {
  it('calls an unreachable dependency, a timed-out wait and a lost push race transient', () => {
    assert.deepEqual(failureOf(new UnavailableError('git remote 127.0.0.1:9 refused the connection')), { code: 'unavailable', transient: true });
    assert.deepEqual(failureOf(new TimeoutError('Flux not ready after 60s')), { code: 'timeout', transient: true });
    assert.deepEqual(failureOf(new ConcurrentPushError('a concurrent push to main changed the same files')), { code: 'conflict', transient: true });
  });

  it('calls bad input, findings, credentials, other conflicts and a missing program permanent', () => {
    assert.deepEqual(failureOf(new ValidationError([{ field: 'cluster.name', message: 'is reserved' }])), { code: 'invalid_input', transient: false });
    assert.deepEqual(failureOf(new VerificationError(['flux/ does not build'])), { code: 'verification_failed', transient: false });
    assert.deepEqual(failureOf(new AuthenticationError('the remote refused the token')), { code: 'unauthenticated', transient: false });
    assert.deepEqual(failureOf(new ForbiddenError('no push permission')), { code: 'forbidden', transient: false });
    assert.deepEqual(failureOf(new NotFoundError('no such branch')), { code: 'not_found', transient: false });
    assert.deepEqual(failureOf(new ConflictError('scaffold.yaml is invalid')), { code: 'conflict', transient: false });
    // Same code as an unreachable remote, but retrying on this host cannot help.
    assert.deepEqual(failureOf(new MissingDependencyError('kubectl is not on PATH')), { code: 'unavailable', transient: false });
  });

  it('calls anything that is not a product error internal and permanent', () => {
    assert.deepEqual(failureOf(new TypeError('x is undefined')), { code: 'internal', transient: false });
    assert.deepEqual(failureOf('a thrown string'), { code: 'internal', transient: false });
    assert.deepEqual(failureOf(undefined), { code: 'internal', transient: false });
  });

  it('looks through a wrapper (a failed step) to the product error it carries', () => {
    const step = new Error('step 1 (clone) failed: refused', { cause: new UnavailableError('refused') });
    assert.deepEqual(failureOf(step), { code: 'unavailable', transient: true });
    const twice = new Error('outer', { cause: new Error('middle', { cause: new VerificationError(['x']) }) });
    assert.deepEqual(failureOf(twice), { code: 'verification_failed', transient: false });
  });

  it('ends on a cause chain that loops', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    assert.deepEqual(failureOf(a), { code: 'internal', transient: false });
  });

  it('is what the error and the CLI exit code say too', () => {
    assert.equal(new UnavailableError('x').transient, true);
    assert.equal(new MissingDependencyError('x').transient, false);
    assert.equal(exitCodeOf(new ConcurrentPushError('x')), EXIT_TRANSIENT);
    assert.equal(exitCodeOf(new ConflictError('x')), EXIT_FAILURE);
  });
});
