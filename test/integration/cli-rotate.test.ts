/**
 * `generate-gitops-env rotate` on a rendered cluster in a real work tree: after
 * the controller's key changes, it re-encrypts exactly the SealedSecrets recorded
 * as sealed with another certificate, with the SAME values (the old private key
 * given) or, asked for, fresh values and the Jobs that change them in the
 * databases; every other file stays byte for byte.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assertExitZero as ok, runCli } from '../support/cli.js';
import { clusterFiles, renderedUnderOldKey, renewedKeys, rotateToNewKey } from '../support/rekeyed-cluster.js';
import { sealedSecretsIn, unsealAll } from '../support/runner.js';

const CLUSTER = 'eu-rot-1';
const SEALED = [
  'apps/sealed/sealed-registry-pull-secret.yaml',
  'apps/sealed/sealed-tcr-database.yaml',
  'database/sealed/sealed-postgresql-credentials.yaml',
  'database/sealed/sealed-rabbitmq-credentials.yaml',
].map((f) => `clusters/${CLUSTER}/${f}`);

describe('generate-gitops-env rotate', () => {
  let tmp: string;
  let repo: string;
  const keys = renewedKeys();
  const { newKey, oldFingerprint, newFingerprint } = keys;
  const rotate = (...extra: string[]) => rotateToNewKey({ tmp, repo }, CLUSTER, ...extra);

  before(async () => {
    ({ tmp, repo } = await renderedUnderOldKey('cli-rotate-', CLUSTER, keys));
    await writeFile(join(tmp, 'old.key'), keys.oldKey.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('records the certificate on each SealedSecret, and with the same certificate finds nothing to rotate', async () => {
    const before = await clusterFiles(repo, CLUSTER);
    for (const file of SEALED) assert.match(before.get(file) ?? '', new RegExp(`gitops-scaffolder.io/sealed-with: sha256:${oldFingerprint}`), file);
    const result = ok(await runCli(['rotate', '--repo', repo, '--cluster', CLUSTER, '--cert', join(tmp, 'old.pem')]));
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /every SealedSecret of clusters\/eu-rot-1 is sealed with it/);
    assert.match(result.stderr, /Nothing to rotate\./);
    assert.deepEqual(await clusterFiles(repo, CLUSTER), before);
  });

  it('--dry-run lists the SealedSecrets sealed with the old certificate and writes nothing', async () => {
    const before = await clusterFiles(repo, CLUSTER);
    const result = ok(await rotate('--dry-run'));
    // Planned with fresh values until they are chosen: the supplied pull secret has none, and says how it is rotated.
    assert.deepEqual(result.stdout.trim().split('\n').sort(), SEALED.slice(1));
    assert.equal(result.stderr.match(new RegExp(`sealed with sha256:${oldFingerprint}`, 'g'))?.length, 4, result.stderr);
    assert.match(result.stderr, /would reseal tcr\/tcr-database \(choose: same values or --fresh-values\)/);
    assert.match(
      result.stderr,
      /still sealed with another certificate \(supplied by the caller, not generated: only --recovery-private-key re-encrypts it\): tcr\/registry-pull-secret/,
    );
    assert.deepEqual(await clusterFiles(repo, CLUSTER), before);
  });

  it('refuses to choose the values for the user: same values need the old key, new ones --fresh-values', async () => {
    const before = await clusterFiles(repo, CLUSTER);
    const result = await rotate();
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /recovery-private-key: .*keeps their values/);
    assert.deepEqual(await clusterFiles(repo, CLUSTER), before);
  });

  it('refuses --fresh-values with --recovery-private-key (exit 2, nothing written) instead of picking fresh values over the key it was given', async () => {
    const before = await clusterFiles(repo, CLUSTER);
    const result = await rotate('--fresh-values', '--recovery-private-key', join(tmp, 'old.key'));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /either keep the values \(--recovery-private-key\) or seal fresh ones \(--fresh-values\), not both/);
    assert.equal(result.stdout, '');
    assert.deepEqual(await clusterFiles(repo, CLUSTER), before);
  });

  it('--credential --fresh-values reseals only the one named (and its sameAs partner), under the new certificate, with the password Job', async () => {
    const before = await clusterFiles(repo, CLUSTER);
    const result = ok(await rotate('--credential', 'tcr/tcr-database', '--fresh-values'));
    const job = result.stdout
      .trim()
      .split('\n')
      .find((p) => /postgresql-credentials-rotation-/.test(p))!;
    assert.deepEqual(result.stdout.trim().split('\n').sort(), [SEALED[1], `clusters/${CLUSTER}/database/sealed/kustomization.yaml`, job, SEALED[2]].sort());
    assert.match(result.stderr, /Job database\/postgresql-credentials-rotation-[0-9a-f]{10} sets the new postgresql-credentials passwords/);
    assert.match(result.stderr, /restart to pick up the new values: .*StatefulSet database\/postgresql/);
    const after = await clusterFiles(repo, CLUSTER);
    for (const [path, text] of before) {
      if (path === SEALED[1] || path === SEALED[2] || path.endsWith('database/sealed/kustomization.yaml')) assert.notEqual(after.get(path), text, path);
      else assert.equal(after.get(path), text, `${path} is untouched`);
    }
    const values = unsealAll(sealedSecretsIn(new Map([SEALED[1], SEALED[2]].map((p) => [p!, after.get(p!)!]))), newKey.privateKey);
    assert.equal(values.get('tcr/tcr-database/DATABASE_PASSWORD'), values.get('database/postgresql-credentials/password'), 'sameAs still holds');
    assert.match(result.stderr, /still sealed with another certificate .*: database\/rabbitmq-credentials/);
  });

  it('without --credential re-encrypts the rest sealed with the old certificate, same values; nothing else changes, then nothing is left', async () => {
    const before = await clusterFiles(repo, CLUSTER);
    const oldValues = unsealAll(sealedSecretsIn(new Map([SEALED[0], SEALED[3]].map((p) => [p!, before.get(p!)!]))), keys.oldKey.privateKey);
    const result = ok(await rotate('--recovery-private-key', join(tmp, 'old.key')));
    assert.match(result.stderr, /resealed database\/rabbitmq-credentials with the same values/);
    assert.deepEqual(result.stdout.trim().split('\n').sort(), [SEALED[0], SEALED[3]]);
    const after = await clusterFiles(repo, CLUSTER);
    for (const [path, text] of before) if (path !== SEALED[0] && path !== SEALED[3]) assert.equal(after.get(path), text, `${path} is untouched`);
    const values = unsealAll(sealedSecretsIn(new Map(SEALED.map((p) => [p, after.get(p)!]))), newKey.privateKey);
    assert.equal(values.size, 6, 'every value opens with the new key');
    for (const [key, value] of oldValues) assert.equal(values.get(key), value, `${key} is unchanged`);
    for (const file of SEALED) assert.match(after.get(file) ?? '', new RegExp(`sealed-with: sha256:${newFingerprint}`));
    assert.match(ok(await rotate()).stderr, /Nothing to rotate\./);
  });

  it('refuses an unknown credential, fresh values for a supplied one, and a cluster it did not render, with exit 2', async () => {
    const supplied = await rotate('--credential', 'tcr/registry-pull-secret', '--fresh-values');
    assert.equal(supplied.code, 2, supplied.stderr);
    assert.match(
      supplied.stderr,
      /error: credential: tcr\/registry-pull-secret: supplied by the caller \(registry-auth\), not generated, so there are no fresh values to make up: re-encrypt .*--recovery-private-key/,
    );
    const unknown = await rotate('--credential', 'nope');
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(unknown.stderr, /error: credential: nope: no such credential in scaffold\.yaml/);
    const missing = await rotateToNewKey({ tmp, repo }, 'nowhere');
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /clusters\/nowhere\/provenance\.yaml not found/);
  });
});
