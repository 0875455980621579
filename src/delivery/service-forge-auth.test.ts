/**
 * The service's own forge credentials, read from its environment or the files
 * of its Secret, and what a fleet run is given of them: only for a
 * pull_request delivery, only to the one forge API they belong to.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UnavailableError, ValidationError } from '../errors.js';
import { fleetRunSecrets } from './fleet-run-secrets.js';
import { serviceForgeAuth } from './service-forge-auth.js';

const URL = 'https://github.com/acme/platform-gitops.git';

/** A ValidationError whose first issue is about `field`, quoting no secret. */
const refusedFor =
  (field: string, secret = 'PRIVATE KEY') =>
  (error: unknown) =>
    error instanceof ValidationError && error.issues[0]?.field === field && !JSON.stringify(error.issues).includes(secret) && !error.message.includes(secret);

describe('the service forge token', () => {
  it('is read with the one API it is sent to, from the environment', async () => {
    assert.deepEqual(await serviceForgeAuth({}), {});
    assert.deepEqual(await serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: ' ' }), {});
    await assert.rejects(serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789' }), refusedFor('SCAFFOLD_FORGE_API_URL', 'ghp_0123456789'));
    await assert.rejects(serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789', SCAFFOLD_FORGE_API_URL: 'http://api.example.net' }), ValidationError);
    assert.deepEqual(await serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789', SCAFFOLD_FORGE_API_URL: 'https://api.github.com/' }), {
      auth: { kind: 'token', token: 'ghp_0123456789' },
      apiUrl: 'https://api.github.com',
    });
    // A chart that leaves the App's values empty sets no App.
    const emptyApp = { SCAFFOLD_FORGE_GITHUB_APP_ID: '', SCAFFOLD_FORGE_GITHUB_APP_INSTALLATION_ID: ' ', SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY: '\n' };
    assert.deepEqual(await serviceForgeAuth({ ...emptyApp, SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789', SCAFFOLD_FORGE_API_URL: 'https://api.github.com' }), {
      auth: { kind: 'token', token: 'ghp_0123456789' },
      apiUrl: 'https://api.github.com',
    });
  });

  it('goes to a fleet run only for pull_request, and only for a repository on its own forge', async () => {
    const none = fleetRunSecrets({});
    assert.deepEqual(none(undefined, URL), {});
    assert.deepEqual(none({ mode: 'push' }, URL), {});
    assert.throws(
      () => none({ mode: 'pull_request', forge: 'github' }, URL),
      (error: unknown) => error instanceof UnavailableError && /SCAFFOLD_FORGE_TOKEN or a GitHub App/.test(error.message),
    );

    const secrets = fleetRunSecrets(await serviceForgeAuth({ SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789', SCAFFOLD_FORGE_API_URL: 'https://api.github.com' }));
    assert.deepEqual(secrets({ mode: 'push' }, URL), { repositoryCredentials: { token: 'ghp_0123456789' } }, 'a push to its own forge carries the token');
    assert.deepEqual(secrets(undefined, 'https://git.attacker.example/acme/gitops.git'), {}, 'a push elsewhere carries nothing');
    assert.deepEqual(secrets(undefined, 'ssh://git@github.com/acme/gitops.git'), {});
    assert.deepEqual(secrets({ mode: 'pull_request', forge: 'github' }, URL), { repositoryCredentials: { token: 'ghp_0123456789' } });
    // A repository on another host would get the token sent to that host's API, or git would send it there: refused.
    assert.throws(
      () => secrets({ mode: 'pull_request', forge: 'github' }, 'https://git.attacker.example/acme/gitops.git'),
      refusedFor('delivery.api_url', 'ghp_0123456789'),
    );
    assert.throws(
      () => secrets({ mode: 'pull_request', forge: 'github', apiUrl: 'https://api.attacker.example' }, URL),
      refusedFor('delivery.api_url', 'ghp_0123456789'),
    );
    assert.throws(
      () => secrets({ mode: 'pull_request', forge: 'github', apiUrl: 'https://api.github.com' }, 'https://git.attacker.example/acme/gitops.git'),
      refusedFor('repository_url', 'ghp_0123456789'),
    );
    assert.throws(() => secrets({ mode: 'pull_request', forge: 'github' }, 'ssh://git@github.com/acme/gitops.git'), ValidationError);
  });
});

describe('the service GitHub App', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const PEM = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const API = 'https://github.example.net/api/v3';
  const APP = { SCAFFOLD_FORGE_GITHUB_APP_ID: '123456', SCAFFOLD_FORGE_GITHUB_APP_INSTALLATION_ID: '7890123', SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY: PEM };
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'service-forge-auth-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  it('takes the App from the environment or from the files its Secret mounts, with the API it is sent to', async () => {
    assert.deepEqual(await serviceForgeAuth({ ...APP, SCAFFOLD_FORGE_API_URL: API }), {
      auth: { kind: 'app', appId: '123456', installationId: '7890123', privateKey: `${PEM.trim()}\n` },
      apiUrl: API,
    });
    const files: Record<string, string> = {};
    for (const [name, value] of Object.entries(APP)) {
      files[`${name}_FILE`] = join(dir, name.toLowerCase());
      await writeFile(join(dir, name.toLowerCase()), `${value}\n`, { mode: 0o400 });
    }
    const fromFiles = await serviceForgeAuth({ ...files, SCAFFOLD_FORGE_API_URL: API });
    assert.deepEqual(fromFiles.auth, { kind: 'app', appId: '123456', installationId: '7890123', privateKey: `${PEM.trim()}\n` });
    await assert.rejects(serviceForgeAuth({ ...APP }), refusedFor('SCAFFOLD_FORGE_API_URL'));
    await assert.rejects(
      serviceForgeAuth({ SCAFFOLD_FORGE_GITHUB_APP_ID_FILE: join(dir, 'missing'), SCAFFOLD_FORGE_API_URL: API }),
      refusedFor('SCAFFOLD_FORGE_GITHUB_APP_ID_FILE'),
    );
  });

  it('refuses a partial App, naming what is missing, and a token together with an App', async () => {
    await assert.rejects(
      serviceForgeAuth({ SCAFFOLD_FORGE_GITHUB_APP_ID: '123456', SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY: PEM, SCAFFOLD_FORGE_API_URL: API }),
      refusedFor('SCAFFOLD_FORGE_GITHUB_APP_INSTALLATION_ID'),
    );
    await assert.rejects(serviceForgeAuth({ SCAFFOLD_FORGE_GITHUB_APP_INSTALLATION_ID: '7890123', SCAFFOLD_FORGE_API_URL: API }), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.deepEqual(
        error.issues.map((i) => i.field),
        ['SCAFFOLD_FORGE_GITHUB_APP_ID', 'SCAFFOLD_FORGE_GITHUB_APP_PRIVATE_KEY'],
      );
      return true;
    });
    await assert.rejects(
      serviceForgeAuth({ ...APP, SCAFFOLD_FORGE_TOKEN: 'ghp_0123456789', SCAFFOLD_FORGE_API_URL: API }),
      refusedFor('SCAFFOLD_FORGE_TOKEN', 'ghp_0123456789'),
    );
  });

  it('goes to a fleet run as the App (the runner mints its installation tokens), only on GitHub and the App’s own forge', async () => {
    const secrets = fleetRunSecrets(await serviceForgeAuth({ ...APP, SCAFFOLD_FORGE_API_URL: API }));
    const onForge = secrets({ mode: 'pull_request', forge: 'github' }, 'https://github.example.net/acme/platform-gitops.git');
    assert.deepEqual(onForge, { githubApp: { appId: '123456', installationId: '7890123', privateKey: `${PEM.trim()}\n` } });
    assert.throws(
      () => secrets({ mode: 'pull_request', forge: 'github', apiUrl: API }, 'https://git.attacker.example/acme/platform-gitops.git'),
      refusedFor('repository_url'),
    );
    assert.throws(
      () => secrets({ mode: 'pull_request', forge: 'gitlab', apiUrl: API }, 'https://github.example.net/acme/platform-gitops.git'),
      ValidationError,
    );
  });

  it('is never sent to a forge that takes no GitHub App, even at the App’s own API', async () => {
    const gitea = fleetRunSecrets(await serviceForgeAuth({ ...APP, SCAFFOLD_FORGE_API_URL: 'https://gitea.example.net/api/v1' }));
    assert.throws(() => gitea({ mode: 'pull_request', forge: 'gitea' }, 'https://gitea.example.net/acme/platform-gitops.git'), refusedFor('delivery.forge'));
  });

  it('goes with no push credentials: a push carries no App and no token', async () => {
    const secrets = fleetRunSecrets(await serviceForgeAuth({ ...APP, SCAFFOLD_FORGE_API_URL: API }));
    assert.deepEqual(secrets({ mode: 'push' }, 'https://github.example.net/acme/platform-gitops.git'), {});
    assert.deepEqual(secrets(undefined, 'https://github.example.net/acme/platform-gitops.git'), {});
  });
});
