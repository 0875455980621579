/**
 * `generate-gitops-env rotate` on a rendered cluster in a real work tree: after
 * the controller's key changes, it reseals exactly the SealedSecrets recorded
 * as sealed with another certificate, with fresh values the new key opens, and
 * leaves every other file byte for byte.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { assertExitZero as ok, runCli } from '../support/cli.js';
import { renderedUnderOldKey, renewedKeys } from '../support/rekeyed-cluster.js';
import { sealedSecretsIn, unsealAll } from '../support/runner.js';

const CLUSTER = 'eu-rot-1';
const SEALED = [
  'apps/sealed/sealed-registry-pull-secret.yaml',
  'apps/sealed/sealed-tcr-database.yaml',
  'database/sealed/sealed-postgresql-credentials.yaml',
  'database/sealed/sealed-rabbitmq-credentials.yaml',
].map((f) => `clusters/${CLUSTER}/${f}`);

async function clusterFiles(repo: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(join(repo, 'clusters', CLUSTER), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(path.slice(repo.length + 1), await readFile(path, 'utf8'));
  }
  return files;
}

describe('generate-gitops-env rotate', () => {
  let tmp: string;
  let repo: string;
  const keys = renewedKeys();
  const { newKey, oldFingerprint, newFingerprint } = keys;

  before(async () => {
    ({ tmp, repo } = await renderedUnderOldKey('cli-rotate-', CLUSTER, keys));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('records the certificate on each SealedSecret, and with the same certificate finds nothing to rotate', async () => {
    const before = await clusterFiles(repo);
    for (const file of SEALED) assert.match(before.get(file) ?? '', new RegExp(`gitops-scaffolder.io/sealed-with: sha256:${oldFingerprint}`), file);
    const result = ok(await runCli(['rotate', '--repo', repo, '--cluster', CLUSTER, '--cert', join(tmp, 'old.pem')]));
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /every SealedSecret of clusters\/eu-rot-1 is sealed with it/);
    assert.match(result.stderr, /Nothing to rotate\./);
    assert.deepEqual(await clusterFiles(repo), before);
  });

  it('--dry-run lists the SealedSecrets sealed with the old certificate and writes nothing', async () => {
    const before = await clusterFiles(repo);
    const result = ok(await runCli(['rotate', '--repo', repo, '--cluster', CLUSTER, '--cert', join(tmp, 'new.pem'), '--dry-run']));
    assert.deepEqual(result.stdout.trim().split('\n').sort(), SEALED);
    assert.equal(result.stderr.match(new RegExp(`sealed with sha256:${oldFingerprint}`, 'g'))?.length, 4, result.stderr);
    assert.match(result.stderr, /would reseal tcr\/registry-pull-secret/);
    assert.deepEqual(await clusterFiles(repo), before);
  });

  it('--credential reseals only the one named (and its sameAs partner), under the new certificate', async () => {
    const before = await clusterFiles(repo);
    const result = ok(await runCli(['rotate', '--repo', repo, '--cluster', CLUSTER, '--cert', join(tmp, 'new.pem'), '--credential', 'tcr/tcr-database']));
    assert.deepEqual(result.stdout.trim().split('\n').sort(), [SEALED[1], SEALED[2]]);
    const after = await clusterFiles(repo);
    for (const [path, text] of before) {
      if (path === SEALED[1] || path === SEALED[2]) assert.notEqual(after.get(path), text, path);
      else assert.equal(after.get(path), text, `${path} is untouched`);
    }
    const values = unsealAll(sealedSecretsIn(new Map([SEALED[1], SEALED[2]].map((p) => [p!, after.get(p!)!]))), newKey.privateKey);
    assert.equal(values.get('tcr/tcr-database/DATABASE_PASSWORD'), values.get('database/postgresql-credentials/password'), 'sameAs still holds');
    assert.match(result.stderr, /still sealed with another certificate .*: database\/rabbitmq-credentials/);
  });

  it('without --credential reseals the rest sealed with the old certificate; nothing else changes, then nothing is left', async () => {
    const before = await clusterFiles(repo);
    const result = ok(await runCli(['rotate', '--repo', repo, '--cluster', CLUSTER, '--cert', join(tmp, 'new.pem')]));
    assert.deepEqual(result.stdout.trim().split('\n').sort(), [SEALED[0], SEALED[3]]);
    const after = await clusterFiles(repo);
    for (const [path, text] of before) if (path !== SEALED[0] && path !== SEALED[3]) assert.equal(after.get(path), text, `${path} is untouched`);
    const values = unsealAll(sealedSecretsIn(new Map(SEALED.map((p) => [p, after.get(p)!]))), newKey.privateKey);
    assert.equal(values.size, 6, 'every value opens with the new key');
    for (const file of SEALED) assert.match(after.get(file) ?? '', new RegExp(`sealed-with: sha256:${newFingerprint}`));
    assert.match(ok(await runCli(['rotate', '--repo', repo, '--cluster', CLUSTER, '--cert', join(tmp, 'new.pem')])).stderr, /Nothing to rotate\./);
  });

  it('refuses an unknown credential and a cluster it did not render, with exit 2', async () => {
    const unknown = await runCli(['rotate', '--repo', repo, '--cluster', CLUSTER, '--cert', join(tmp, 'new.pem'), '--credential', 'nope']);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(unknown.stderr, /error: credential: nope: no such credential in scaffold\.yaml/);
    const missing = await runCli(['rotate', '--repo', repo, '--cluster', 'nowhere', '--cert', join(tmp, 'new.pem')]);
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /clusters\/nowhere\/provenance\.yaml not found/);
  });
});
