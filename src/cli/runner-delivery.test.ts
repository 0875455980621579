/**
 * A GitHub App given to a run reaches the runner's delivery through either
 * executor's form of the run contract (values in the environment: local; files
 * of the Job's Secret named by `*_FILE`: Kubernetes) and works: Octokit's App
 * auth signs a JWT with the key, the forge double checks it and mints the
 * installation token git then pushes with.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startForgeDouble, type ForgeDouble } from '../../test/support/forge-double.js';
import { capturingLogger } from '../../test/support/runner.js';
import { secretDataOf } from '../kubernetes/kube-job-manifests.js';
import { secretFromEnvOrFile } from '../read-input-file.js';
import { secretEnvOf, secretFileEnvOf } from '../run-contract/runner-inputs.js';
import type { RunSecrets } from '../run/run-record.js';
import { runnerDelivery } from './runner-delivery.js';

const INSTALLATION_TOKEN = 'ghs_installation-token-from-the-double';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const SECRETS: RunSecrets = { githubApp: { appId: '123456', installationId: '7890123', privateKey: PEM } };

/** The runner's reading of a secret (runner-cli): the file named by `NAME_FILE` (trimmed) wins, else `NAME`. */
const secretReader = (env: Readonly<Record<string, string>>) => (name: string) => secretFromEnvOrFile(env, name);

describe('runnerDelivery with a GitHub App', () => {
  let dir: string;
  let double: ForgeDouble;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'runner-delivery-'));
    double = await startForgeDouble({
      forge: 'github',
      repoDir: dir,
      owner: 'acme',
      repo: 'platform-gitops',
      token: INSTALLATION_TOKEN,
      githubApp: { appId: '123456', installationId: '7890123', publicKey },
    });
  });
  after(async () => {
    await double.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function deliveryWith(env: Readonly<Record<string, string>>) {
    const logger = capturingLogger();
    const made = await runnerDelivery(
      { mode: 'pull_request', forge: 'github', apiUrl: double.apiUrl, autoMerge: false },
      { repositoryUrl: 'https://github.example.net/acme/platform-gitops.git', credentials: undefined, readSecret: secretReader(env), logger },
    );
    return { ...made, logger };
  }

  it("reads the App from the local runner's environment and pushes with the installation token it mints", async () => {
    const from = double.calls.length;
    const { delivery, credentials, logger } = await deliveryWith(secretEnvOf(SECRETS));
    assert.equal(delivery.mode, 'pull_request');
    assert.deepEqual(credentials, { kind: 'token', token: INSTALLATION_TOKEN, username: 'x-access-token' });
    assert.deepEqual(
      double.calls.slice(from).map((c) => `${c.method} ${c.path} ${c.status}`),
      ['POST /app/installations/7890123/access_tokens 201'],
    );
    assert.ok(!logger.text().includes('PRIVATE KEY') && !logger.text().includes(INSTALLATION_TOKEN), 'neither the key nor the token is logged');
  });

  it("reads the App from the files of the Job's Secret, as the Kubernetes executor mounts them", async () => {
    const mount = await mkdtemp(join(dir, 'secrets-'));
    for (const [key, value] of Object.entries(secretDataOf(SECRETS))) await writeFile(join(mount, key), Buffer.from(value, 'base64'), { mode: 0o400 });
    const env = secretFileEnvOf(mount, new Set(Object.keys(secretDataOf(SECRETS))));
    assert.ok(
      Object.values(env).every((value) => value.startsWith(mount)),
      'the environment names files only',
    );
    const { credentials } = await deliveryWith(env);
    assert.deepEqual(credentials, { kind: 'token', token: INSTALLATION_TOKEN, username: 'x-access-token' });
  });

  it('refuses a key the App did not register: the forge answers 401 and the run cannot start delivering', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    await assert.rejects(deliveryWith(secretEnvOf({ githubApp: { appId: '123456', installationId: '7890123', privateKey: other } })), (error: unknown) => {
      assert.ok(!String(error).includes('PRIVATE KEY'), 'the error does not quote the key');
      return true;
    });
  });
});
