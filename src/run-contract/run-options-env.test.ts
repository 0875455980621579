import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RUNNER_ENV, runEnvOf, runnerRunEnvSchema, runOptionsEnvOf, secretEnvOf } from './runner-inputs.js';

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

describe('runEnvOf', () => {
  const run = {
    id: 'run-1',
    action: 'scaffold' as const,
    repositoryUrl: 'https://git.example.net/platform/gitops.git',
    branch: 'main',
    cluster: { name: 'eu-1', domain: 'eu-1.example.net', region: 'eu-west-1' },
    reference: 'development',
  };

  it("tells a retry's runner its attempt, which the landing queue's MACs cover, and says nothing for the first", () => {
    assert.equal(runEnvOf(run)[RUNNER_ENV.attempt], undefined);
    assert.equal(runEnvOf({ ...run, attempt: 1 })[RUNNER_ENV.attempt], undefined);
    assert.equal(runEnvOf({ ...run, attempt: 2 })[RUNNER_ENV.attempt], '2');
    assert.ok(runnerRunEnvSchema.safeParse(runEnvOf({ ...run, attempt: 2 })).success);
  });

  it('refuses an attempt the service never writes', () => {
    for (const attempt of ['0', '01', '1.5', '1e3', '-1', '1234567', 'two']) {
      assert.equal(runnerRunEnvSchema.safeParse({ ...runEnvOf(run), [RUNNER_ENV.attempt]: attempt }).success, false, attempt);
    }
  });
});

describe('secretEnvOf', () => {
  it("hands the runner the repository's username with its token", () => {
    assert.deepEqual(secretEnvOf({ repositoryCredentials: { username: 'deploy-bot', token: 't0ken' } }), {
      [RUNNER_ENV.gitToken]: 't0ken',
      [RUNNER_ENV.gitUsername]: 'deploy-bot',
    });
  });
});
