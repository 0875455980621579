import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startForgeDouble, type ForgeDouble } from '../../test/support/forge-double.js';
import { UnavailableError, ValidationError } from '../errors.js';
import { forgeChangeDeliveries, pushChangeDelivery, serviceForgeAuth } from './change-delivery.js';
import { createForgeClient } from './create-delivery.js';
import { removalReviewText, upgradeReviewText } from './fleet-request-text.js';

const URL = 'https://github.com/acme/platform-gitops.git';

/** A ValidationError whose first issue is about `field`, quoting no secret. */
const refusedFor = (field: string, secret = 'PRIVATE KEY') => (error: unknown) =>
  error instanceof ValidationError && error.issues[0]?.field === field && !JSON.stringify(error.issues).includes(secret) && !error.message.includes(secret);

describe('fleet change delivery', () => {
  it('pushes when no delivery or push is asked for, and refuses pull_request without the service forge credentials', () => {
    const deliveries = forgeChangeDeliveries({});
    assert.equal(deliveries(undefined, URL), pushChangeDelivery);
    assert.equal(deliveries({ mode: 'push' }, URL), pushChangeDelivery);
    assert.throws(() => deliveries({ mode: 'pull_request', forge: 'github' }, URL), (error: unknown) => error instanceof UnavailableError && /SCAFFOLD_FORGE_TOKEN or a GitHub App/.test(error.message));
  });

  it('takes the service forge token with the one API it is sent to, from the environment', async () => {
    assert.deepEqual(await serviceForgeAuth({}), {});
    assert.deepEqual(await serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: ' ' }), {});
    await assert.rejects(serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789' }), refusedFor('SCAFFOLD_FORGE_API_URL', 'ghp_0123456789'));
    await assert.rejects(serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789', SCAFFOLD_FORGE_API_URL: 'http://api.example.net' }), ValidationError);
    const options = await serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789', SCAFFOLD_FORGE_API_URL: 'https://api.github.com/' });
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

  it('pushes the change with the token only to a repository on the token’s own forge', async () => {
    const deliveries = forgeChangeDeliveries(await serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'glpat-0123456789', SCAFFOLD_FORGE_API_URL: 'https://gitlab.example.net' }));
    const onForge = deliveries({ mode: 'pull_request', forge: 'gitlab' }, 'https://gitlab.example.net/platform/gitops.git');
    assert.deepEqual(await onForge.credentials?.(), { kind: 'token', token: 'glpat-0123456789' });
    // The API named explicitly is the token's, but git would send the token to another host: no git credentials.
    const elsewhere = deliveries({ mode: 'pull_request', forge: 'gitlab', apiUrl: 'https://gitlab.example.net' }, 'https://git.attacker.example/platform/gitops.git');
    assert.equal(elsewhere.credentials, undefined);
    assert.equal(deliveries({ mode: 'pull_request', forge: 'gitlab' }, 'ssh://git@gitlab.example.net/platform/gitops.git').credentials, undefined);
    assert.equal(deliveries(undefined, 'https://gitlab.example.net/platform/gitops.git').credentials, undefined);
  });
});

describe('fleet change delivery with a GitHub App', () => {
  const INSTALLATION_TOKEN = 'ghs_service-installation-token';
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const PEM = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const API = 'https://github.example.net/api/v3';
  const APP = { SCAFFOLD_FORGE_GITHUB_APP_ID: '123456', SCAFFOLD_FORGE_GITHUB_APP_INSTALLATION_ID: '7890123', SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY: PEM };
  let dir: string;
  let double: ForgeDouble;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'change-delivery-'));
    double = await startForgeDouble({ forge: 'github', repoDir: dir, owner: 'acme', repo: 'platform-gitops', token: INSTALLATION_TOKEN, githubApp: { appId: '123456', installationId: '7890123', publicKey } });
  });
  after(async () => {
    await double.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('takes the App from the environment or from the files its Secret mounts, with the API it is sent to', async () => {
    assert.deepEqual(await serviceForgeAuth({ ...APP, SCAFFOLD_FORGE_API_URL: API }), { auth: { kind: 'app', appId: '123456', installationId: '7890123', privateKey: `${PEM.trim()}\n` }, apiUrl: API });
    const files: Record<string, string> = {};
    for (const [name, value] of Object.entries(APP)) {
      files[`${name}_FILE`] = join(dir, name.toLowerCase());
      await writeFile(join(dir, name.toLowerCase()), `${value}\n`, { mode: 0o400 });
    }
    const fromFiles = await serviceForgeAuth({ ...files, SCAFFOLD_FORGE_API_URL: API });
    assert.deepEqual(fromFiles.auth, { kind: 'app', appId: '123456', installationId: '7890123', privateKey: `${PEM.trim()}\n` });
    await assert.rejects(serviceForgeAuth({ ...APP }), refusedFor('SCAFFOLD_FORGE_API_URL'));
    await assert.rejects(serviceForgeAuth({ SCAFFOLD_FORGE_GITHUB_APP_ID_FILE: join(dir, 'missing'), SCAFFOLD_FORGE_API_URL: API }), refusedFor('SCAFFOLD_FORGE_GITHUB_APP_ID_FILE'));
  });

  it('refuses a partial App, naming what is missing, and a token together with an App', async () => {
    await assert.rejects(serviceForgeAuth({ SCAFFOLD_FORGE_GITHUB_APP_ID: '123456', SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY: PEM, SCAFFOLD_FORGE_API_URL: API }), refusedFor('SCAFFOLD_FORGE_GITHUB_APP_INSTALLATION_ID'));
    await assert.rejects(serviceForgeAuth({ SCAFFOLD_FORGE_GITHUB_APP_INSTALLATION_ID: '7890123', SCAFFOLD_FORGE_API_URL: API }), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.deepEqual(error.issues.map((i) => i.field), ['SCAFFOLD_FORGE_GITHUB_APP_ID', 'SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY']);
      return true;
    });
    await assert.rejects(serviceForgeAuth({ ...APP, SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789', SCAFFOLD_FORGE_API_URL: API }), refusedFor('SCAFFOLD_FORGE_TOKEN', 'ghp_0123456789'));
  });

  it('mints an installation token for each change git pushes, only to a repository on the App’s forge', async () => {
    // The double serves plain http on loopback: the forge client is pointed at it, the binding rules still see `API`.
    const deliveries = forgeChangeDeliveries({ ...(await serviceForgeAuth({ ...APP, SCAFFOLD_FORGE_API_URL: API })), createForge: (options) => createForgeClient({ ...options, apiUrl: double.apiUrl }) });
    const from = double.calls.length;
    const onForge = deliveries({ mode: 'pull_request', forge: 'github' }, 'https://github.example.net/acme/platform-gitops.git');
    assert.deepEqual(await onForge.credentials?.(), { kind: 'token', token: INSTALLATION_TOKEN, username: 'x-access-token' });
    assert.deepEqual(double.calls.slice(from).map((c) => `${c.method} ${c.path} ${c.status}`), ['POST /app/installations/7890123/access_tokens 201']);
    assert.equal(deliveries({ mode: 'pull_request', forge: 'github', apiUrl: API }, 'https://git.attacker.example/acme/platform-gitops.git').credentials, undefined);
    assert.equal(deliveries({ mode: 'pull_request', forge: 'github' }, 'ssh://git@github.example.net/acme/platform-gitops.git').credentials, undefined);
    assert.throws(() => deliveries({ mode: 'pull_request', forge: 'gitlab', apiUrl: API }, 'https://github.example.net/acme/platform-gitops.git'), refusedFor('delivery.forge'));
    assert.equal(double.calls.length, from + 1, 'nothing minted for a repository the token may not reach');
  });

  it('a key the App did not register: minting fails with the forge’s answer, never the key', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const auth = await serviceForgeAuth({ ...APP, SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY: other, SCAFFOLD_FORGE_API_URL: API });
    const delivery = forgeChangeDeliveries({ ...auth, createForge: (options) => createForgeClient({ ...options, apiUrl: double.apiUrl }) })({ mode: 'pull_request', forge: 'github' }, 'https://github.example.net/acme/platform-gitops.git');
    await assert.rejects(delivery.credentials?.() ?? Promise.resolve(), (error: unknown) => {
      assert.match(String(error), /minting an installation token failed \(HTTP 401\)/);
      assert.ok(!String(error).includes('PRIVATE KEY') && !JSON.stringify(error).includes('PRIVATE KEY'), 'the error does not quote the key');
      return true;
    });
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
