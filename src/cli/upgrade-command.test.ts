/**
 * `generate-gitops-env upgrade` when one cluster cannot be upgraded: the others
 * are still upgraded, the failure is printed, and the exit code says it failed
 * (a script or CI job running the upgrade must not read it as a success).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT_FAILURE } from '../exit-codes.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { assertExit, runCli } from '../../test/support/cli.js';
import { git } from '../../test/support/git.js';

const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false'];

describe('generate-gitops-env upgrade with a cluster that fails', () => {
  let tmp: string;
  let repo: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'upgrade-command-'));
    repo = join(tmp, 'gitops');
    const cert = join(tmp, 'cert.pem');
    await writeFile(cert, createTestCertificate().certificatePem);
    assertExit(await runCli(['init', repo]), 0);
    for (const name of ['eu-1', 'eu-2']) {
      assertExit(await runCli(['render', '--repo', repo, '--cluster', name, '--domain', `${name}.example.net`, '--region', 'eu-west-1', '--cert', cert]), 0);
    }
    // The reference changes, so both are behind; then eu-2 loses a sealed credential, which an upgrade cannot seal again.
    const patch = join(repo, 'clusters/development/apps/tcr-api-replicas.yaml');
    await writeFile(patch, (await readFile(patch, 'utf8')).replace('value: 3', 'value: 5'));
    await rm(join(repo, 'clusters/eu-2/database/sealed/sealed-postgresql-credentials.yaml'));
    await git(repo, 'add', '--all');
    await git(repo, ...IDENTITY, 'commit', '--quiet', '-m', 'Two clusters, one damaged');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('upgrades the other cluster, prints the failure and exits with failure', async () => {
    const result = await runCli(['upgrade', '--repo', repo]);
    assertExit(result, EXIT_FAILURE);
    assert.match(result.stdout, /^eu-1: upgraded: /m);
    assert.match(result.stdout, /^eu-2: failed: .*render this cluster with --cert/m);
    assert.match(result.stderr, /==> 2 cluster\(s\): 1 upgraded, 0 up to date, 1 failed/);
  });
});
