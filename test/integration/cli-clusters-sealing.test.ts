/**
 * `generate-gitops-env clusters --cluster NAME --cert FILE` on a real work
 * tree: after the controller's key changed and some credentials were rotated,
 * it names exactly the SealedSecret still sealed with the old certificate,
 * offline, from the certificate the controller serves now.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assertExitZero as ok, runCli } from '../support/cli.js';
import { renderedUnderOldKey, renewedKeys, rotateToNewKey } from '../support/rekeyed-cluster.js';

const CLUSTER = 'eu-seal-1';
const RABBITMQ = `clusters/${CLUSTER}/database/sealed/sealed-rabbitmq-credentials.yaml`;

describe('generate-gitops-env clusters --cluster --cert', () => {
  let tmp: string;
  let repo: string;
  const keys = renewedKeys();
  const { oldFingerprint, newFingerprint } = keys;

  before(async () => {
    ({ tmp, repo } = await renderedUnderOldKey('cli-clusters-sealing-', CLUSTER, keys));
    // The controller renewed its key; every credential but rabbitmq-credentials was resealed under the new one.
    await writeFile(join(tmp, 'old.key'), keys.oldKey.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    ok(
      await rotateToNewKey(
        { tmp, repo },
        CLUSTER,
        '--credential',
        'tcr/tcr-database',
        'database/postgresql-credentials',
        'tcr/registry-pull-secret',
        '--recovery-private-key',
        join(tmp, 'old.key'),
      ),
    );
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('prints the SealedSecret sealed with an older certificate than the one given, and how to reseal it', async () => {
    const result = ok(await runCli(['clusters', '--repo', repo, '--cluster', CLUSTER, '--cert', join(tmp, 'new.pem')]));
    const lines = result.stdout.trim().split('\n');
    assert.match(lines[0]!, /^STATE\s+SEALEDSECRET\s+SEALED WITH\s+PATH$/);
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(/\s+/)),
      [['stale', 'database/rabbitmq-credentials', `sha256:${oldFingerprint}`, RABBITMQ]],
    );
    assert.match(result.stderr, new RegExp(`compared with sha256:${newFingerprint} .*: 1 sealed with another certificate, 0 recording none, 3 current`));
    assert.match(result.stderr, new RegExp(`reseal them: generate-gitops-env rotate --repo .* --cluster ${CLUSTER} --cert `));
  });

  it('-o json adds the sealing section to the cluster view', async () => {
    const view = JSON.parse(ok(await runCli(['clusters', '--repo', repo, '--cluster', CLUSTER, '--cert', join(tmp, 'new.pem'), '-o', 'json'])).stdout) as {
      name: string;
      kind: string;
      sealing: { controller_certificate: { fingerprint: string }; stale: unknown[]; unknown: unknown[]; current_count: number };
    };
    assert.equal(view.name, CLUSTER);
    assert.equal(view.kind, 'generated');
    assert.equal(view.sealing.controller_certificate.fingerprint, `sha256:${newFingerprint}`);
    assert.deepEqual(view.sealing.stale, [{ path: RABBITMQ, namespace: 'database', name: 'rabbitmq-credentials', sealed_with: `sha256:${oldFingerprint}` }]);
    assert.equal(view.sealing.current_count, 3);
  });

  it('without --cert says what it needs; --cert without --cluster and an unknown cluster are refused', async () => {
    const plain = ok(await runCli(['clusters', '--repo', repo, '--cluster', CLUSTER, '-o', 'json']));
    assert.equal((JSON.parse(plain.stdout) as { sealing: { controller_certificate: unknown } }).sealing.controller_certificate, null);
    assert.match(plain.stderr, /no --cert given/);
    const alone = await runCli(['clusters', '--repo', repo, '--cert', join(tmp, 'new.pem')]);
    assert.equal(alone.code, 2, alone.stderr);
    assert.match(alone.stderr, /--cert: needs --cluster NAME/);
    const missing = await runCli(['clusters', '--repo', repo, '--cluster', 'nowhere', '--cert', join(tmp, 'new.pem')]);
    assert.notEqual(missing.code, 0, missing.stderr);
    assert.match(missing.stderr, /clusters\/nowhere does not exist/);
  });
});
