import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UnavailableError, ValidationError } from '../errors.js';
import { forgeChangeDeliveries, pushChangeDelivery, serviceForgeAuth } from './change-delivery.js';
import { removalReviewText, upgradeReviewText } from './fleet-request-text.js';

const URL = 'https://github.com/acme/platform-gitops.git';

describe('fleet change delivery', () => {
  it('pushes when no delivery or push is asked for, and refuses pull_request without the service forge token', () => {
    const deliveries = forgeChangeDeliveries({});
    assert.equal(deliveries(undefined, URL), pushChangeDelivery);
    assert.equal(deliveries({ mode: 'push' }, URL), pushChangeDelivery);
    assert.throws(() => deliveries({ mode: 'pull_request', forge: 'github' }, URL), (error: unknown) => error instanceof UnavailableError && /SCAFFOLD_FORGE_TOKEN/.test(error.message));
  });

  it('takes the service forge token with the one API it is sent to, from the environment', () => {
    assert.deepEqual(serviceForgeAuth({}), {});
    assert.deepEqual(serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: ' ' }), {});
    assert.throws(() => serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789' }), (error: unknown) => error instanceof ValidationError && error.issues[0]?.field === 'SCAFFOLD_FORGE_API_URL');
    assert.throws(() => serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789', SCAFFOLD_FORGE_API_URL: 'http://api.example.net' }), ValidationError);
    const options = serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789', SCAFFOLD_FORGE_API_URL: 'https://api.github.com/' });
    assert.deepEqual(options, { auth: { kind: 'token', token: 'ghp_0123456789' }, apiUrl: 'https://api.github.com' });
    const deliveries = forgeChangeDeliveries(options);
    assert.equal(deliveries({ mode: 'pull_request', forge: 'github' }, URL).mode, 'pull_request');
    // A repository on another host would get the token sent to that host's API: refused.
    assert.throws(
      () => deliveries({ mode: 'pull_request', forge: 'github' }, 'https://git.attacker.example/acme/gitops.git'),
      (error: unknown) => error instanceof ValidationError && error.issues[0]?.field === 'delivery.api_url' && /only sent to https:\/\/api\.github\.com/.test(error.issues[0].message),
    );
    assert.throws(() => deliveries({ mode: 'pull_request', forge: 'github', apiUrl: 'https://api.attacker.example' }, URL), ValidationError);
  });

  it('pushes the change with the token only to a repository on the token’s own forge', () => {
    const deliveries = forgeChangeDeliveries(serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'glpat-0123456789', SCAFFOLD_FORGE_API_URL: 'https://gitlab.example.net' }));
    const onForge = deliveries({ mode: 'pull_request', forge: 'gitlab' }, 'https://gitlab.example.net/platform/gitops.git');
    assert.deepEqual(onForge.credentials, { kind: 'token', token: 'glpat-0123456789' });
    // The API named explicitly is the token's, but git would send the token to another host: no git credentials.
    const elsewhere = deliveries({ mode: 'pull_request', forge: 'gitlab', apiUrl: 'https://gitlab.example.net' }, 'https://git.attacker.example/platform/gitops.git');
    assert.equal(elsewhere.credentials, undefined);
    assert.equal(deliveries({ mode: 'pull_request', forge: 'gitlab' }, 'ssh://git@gitlab.example.net/platform/gitops.git').credentials, undefined);
    assert.equal(deliveries(undefined, 'https://gitlab.example.net/platform/gitops.git').credentials, undefined);
  });
});

describe('fleet request text', () => {
  it('names an upgrade wave: its branch, the clusters and each one’s diff summary', () => {
    const text = upgradeReviewText(
      { rolloutId: 'r-1', wave: 1, waves: 3 },
      [{ name: 'eu-1', added: ['clusters/eu-1/a.yaml'], modified: [], removed: ['clusters/eu-1/b.yaml'], credentialsKept: 2 }],
      'development',
      'main',
    );
    assert.equal(text.head, 'scaffold/upgrade/r-1/wave-2');
    assert.equal(text.title, 'Upgrade cluster eu-1 from development (wave 2 of 3)');
    assert.match(text.body, /1 file\(s\) added, 0 modified, 1 removed; 2 sealed credential\(s\) kept/);
    assert.match(text.body, /### Files added \(1\)\n\n- `clusters\/eu-1\/a\.yaml`/);
    assert.equal(text.subject, 'wave 2 of 3 of upgrade r-1');
  });

  it('names a removal: its branch, the files removed and flux bootstrap’s kept', () => {
    const text = removalReviewText({ name: 'eu-2', gitopsPath: 'clusters/eu-2', remove: ['clusters/eu-2/x.yaml'], kept: ['clusters/eu-2/flux-system/gotk-sync.yaml'], fluxBootstrap: true }, 'main');
    assert.equal(text.head, 'scaffold/remove/eu-2');
    assert.match(text.body, /### Files removed \(1\)/);
    assert.match(text.body, /### Files kept \(not written by gitops-scaffolder\) \(1\)/);
    assert.match(text.body, /`flux-system\/`, written by flux bootstrap, is kept/);
  });
});
