import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
import { checkApiUrl, defaultApiUrl, deliveryEnv, parseDeliverySettings, repositoryPathOf } from './delivery-settings.js';
import { waitAskedFor } from './rate-limited-fetch.js';

function fieldsOf(work: () => unknown): string[] {
  try {
    work();
  } catch (error) {
    assert.ok(error instanceof ValidationError, String(error));
    return error.issues.map((i) => i.field);
  }
  return assert.fail('expected a ValidationError');
}

describe('delivery settings', () => {
  it('defaults to push and needs a forge for pull_request', () => {
    assert.deepEqual(parseDeliverySettings({}), { mode: 'push', autoMerge: false });
    assert.deepEqual(parseDeliverySettings({ mode: 'pull_request', forge: 'gitea', autoMerge: true }), {
      mode: 'pull_request',
      forge: 'gitea',
      autoMerge: true,
    });
    assert.deepEqual(
      fieldsOf(() => parseDeliverySettings({ mode: 'pull_request' })),
      ['delivery.forge'],
    );
    assert.deepEqual(
      fieldsOf(() => parseDeliverySettings({ mode: 'mail', forge: 'bitbucket' }, { mode: '--delivery', forge: '--forge', apiUrl: '--forge-api-url' })),
      ['--delivery', '--forge'],
    );
  });

  it('sends the token to https only, or plain http to loopback', () => {
    assert.equal(checkApiUrl('https://ghe.example.net/api/v3/'), 'https://ghe.example.net/api/v3');
    assert.equal(checkApiUrl('http://127.0.0.1:8080'), 'http://127.0.0.1:8080');
    for (const bad of [
      'http://gitea.example.net/api/v1',
      'https://user:pw@ghe.example.net',
      'https://ghe.example.net/api/v3?access_token=ghp_0123456789',
      'https://ghe.example.net/api/v3#ghp_0123456789',
      'ftp://x',
      'not a url',
    ])
      assert.deepEqual(
        fieldsOf(() => checkApiUrl(bad)),
        ['delivery.api_url'],
        bad,
      );
  });

  it('reads owner/repository from https, ssh and scp-like URLs', () => {
    assert.equal(repositoryPathOf('https://github.com/acme/platform.git'), 'acme/platform');
    assert.equal(repositoryPathOf('ssh://git@gitlab.example.net/group/sub/project.git'), 'group/sub/project');
    assert.equal(repositoryPathOf('git@github.com:acme/platform.git'), 'acme/platform');
    assert.deepEqual(
      fieldsOf(() => repositoryPathOf('https://gitlab.example.net/platform.git')),
      ['repository.url'],
    );
    assert.deepEqual(
      fieldsOf(() => repositoryPathOf('file:///srv/git/platform.git')),
      ['delivery.mode'],
    );
    // Without ".git" these name "." or "..": the forge API calls would leave the repository (…/repos/acme/../pulls is /repos/pulls).
    for (const climbing of [
      'https://gitea.example.net/acme/...git',
      'https://github.com/acme/..git',
      'git@gitea.example.net:acme/..git',
      'https://gitea.example.net/acme/%2E%2E.git',
    ])
      assert.deepEqual(
        fieldsOf(() => repositoryPathOf(climbing)),
        ['repository.url'],
        climbing,
      );
    assert.deepEqual(
      fieldsOf(() => repositoryPathOf('https://github.com/acme/100%.git')),
      ['repository.url'],
      'a malformed percent-escape is a field error, not a crash',
    );
    assert.equal(repositoryPathOf('https://github.com/acme/....git'), 'acme/...', 'three dots are a name, not a step up');
  });

  it('derives the API next to the repository', () => {
    assert.equal(defaultApiUrl('github', 'https://github.com/acme/p.git'), 'https://api.github.com');
    assert.equal(defaultApiUrl('github', 'https://ghe.example.net/acme/p.git'), 'https://ghe.example.net/api/v3');
    assert.equal(defaultApiUrl('gitlab', 'git@gitlab.example.net:g/p.git'), 'https://gitlab.example.net');
    assert.equal(defaultApiUrl('gitea', 'https://gitea.example.net/o/p.git'), 'https://gitea.example.net/api/v1');
  });

  it('adds nothing to the runner environment for push', () => {
    assert.deepEqual(deliveryEnv(undefined), {});
    assert.deepEqual(deliveryEnv({ mode: 'push' }), {});
    assert.deepEqual(deliveryEnv({ mode: 'pull_request', forge: 'github', apiUrl: 'https://ghe.example.net/api/v3' }), {
      SCAFFOLD_DELIVERY: 'pull_request',
      SCAFFOLD_FORGE: 'github',
      SCAFFOLD_FORGE_API_URL: 'https://ghe.example.net/api/v3',
      SCAFFOLD_AUTO_MERGE: 'false',
    });
  });
});

describe('rate-limit headers', () => {
  const now = Date.parse('2026-12-03T08:00:00Z');
  it('reads retry-after as seconds or a date, and a spent budget until its reset', () => {
    assert.equal(waitAskedFor(new Headers({ 'retry-after': '7' }), now), 7000);
    assert.equal(waitAskedFor(new Headers({ 'retry-after': 'Thu, 03 Dec 2026 08:00:30 GMT' }), now), 30_000);
    assert.equal(waitAskedFor(new Headers({ 'ratelimit-remaining': '0', 'ratelimit-reset': String(now / 1000 + 20) }), now), 21_000);
    assert.equal(waitAskedFor(new Headers({ 'x-ratelimit-remaining': '10', 'x-ratelimit-reset': String(now / 1000 + 20) }), now), undefined);
  });
});
