import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AuthenticationError, NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import { capturingLogger } from '../../test/support/runner.js';
import { anonymousReadFailure } from './anonymous-read-failure.js';

const WHY = 'the fleet is only read from repositories reachable without credentials';

describe('anonymousReadFailure', () => {
  it('logs the reason and the URL without a password, and answers without git words', () => {
    const logger = capturingLogger();
    const gitSaid = "fatal: unable to access 'https://bot:pa55-w0rd-value@git.example.net/fleet.git/': Could not resolve host: git.example.net";
    const answer = anonymousReadFailure(new UnavailableError(gitSaid), WHY, {
      logger,
      repositoryUrl: 'https://bot:pa55-w0rd-value@git.example.net/fleet.git',
      branch: 'main',
      what: 'fleet',
    });
    assert.ok(answer instanceof UnavailableError);
    assert.ok(!answer.message.includes('resolve'), answer.message);
    const logged = logger.text();
    assert.match(logged, /repository_read_failed/);
    assert.match(logged, /Could not resolve host/);
    assert.ok(!logged.includes('pa55-w0rd-value'), logged);
  });

  it('passes a refusal of what the repository holds on as the 4xx it is, and a refused clone as the service unable to read', () => {
    const read = { logger: capturingLogger(), repositoryUrl: 'https://git.example.net/fleet.git', branch: 'main', what: 'fleet' };
    const refusal = new ValidationError([{ field: 'repository', message: 'clusters/eu-prod-1 is a symbolic link' }]);
    assert.equal(anonymousReadFailure(refusal, WHY, read), refusal);
    // Not only refusals of content: git's or a parser's words stay in the log.
    const mixed = new ValidationError([
      { field: 'repository', message: 'clusters/eu-prod-1 is a symbolic link' },
      { field: 'url', message: 'git said: connection refused by 10.0.0.7:22' },
    ]);
    const answered = anonymousReadFailure(mixed, WHY, read);
    assert.ok(answered instanceof UnavailableError && !answered.message.includes('10.0.0.7'), String(answered));
    const refused = anonymousReadFailure(new AuthenticationError('Authentication failed'), WHY, read);
    assert.ok(refused instanceof UnavailableError && refused.message.includes(WHY), String(refused));
    const missing = anonymousReadFailure(new NotFoundError('Repository not found'), WHY, read);
    assert.ok(missing instanceof NotFoundError && missing.message.includes('branch main'), String(missing));
  });
});
