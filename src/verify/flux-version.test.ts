import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
import { DEFAULT_TARGET_FLUX, parseTargetFlux, strictSubstitution } from './flux-version.js';

describe('flux-version', () => {
  it('makes an undefined variable fail from Flux 2.9 on (kustomize-controller v1.9), and 2.9 the default', () => {
    assert.equal(DEFAULT_TARGET_FLUX, '2.9');
    assert.equal(strictSubstitution(), true);
    assert.equal(strictSubstitution('2.8'), false);
    assert.equal(strictSubstitution('2.9'), true);
    assert.equal(strictSubstitution('2.10'), true);
  });

  it('takes a Flux minor version and refuses anything else, naming the flag', () => {
    assert.equal(parseTargetFlux('2.8', '--target-flux'), '2.8');
    for (const bad of ['2', '2.9.1', 'v2.9', 'latest', '3.0']) {
      assert.throws(
        () => parseTargetFlux(bad, '--target-flux'),
        (error: unknown) => error instanceof ValidationError && error.issues[0]!.field === '--target-flux',
        bad,
      );
    }
  });
});
