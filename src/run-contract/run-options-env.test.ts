import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runOptionsEnvOf } from './runner-inputs.js';

describe('runOptionsEnvOf', () => {
  it('gives the runner nothing for a plain run', () => {
    assert.deepEqual(runOptionsEnvOf({ certificate: 'pem' }), {});
  });
  it('turns wait_for_ready and a rotation into the runner variables', () => {
    assert.deepEqual(runOptionsEnvOf({ waitForReady: { timeoutSeconds: 600 }, rotateCredentials: ['tcr/tcr-database', 'rabbitmq-credentials'] }), {
      SCAFFOLD_WAIT_READY: 'true',
      SCAFFOLD_READY_TIMEOUT: '600s',
      SCAFFOLD_ROTATE_ONLY: 'tcr/tcr-database,rabbitmq-credentials',
      SCAFFOLD_ROTATE_VALUES: 'same',
    });
    assert.deepEqual(runOptionsEnvOf({ rotateCredentials: true, rotateValues: 'fresh' }), {
      SCAFFOLD_ROTATE_CREDENTIALS: 'true',
      SCAFFOLD_ROTATE_VALUES: 'fresh',
    });
  });
  it('keeps values unless fresh ones are asked for: the runner on its own would seal fresh ones', () => {
    assert.equal(runOptionsEnvOf({ rotateCredentials: true }).SCAFFOLD_ROTATE_VALUES, 'same');
  });
});
