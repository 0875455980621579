/**
 * `generate-gitops-env remove` as a user runs it, against a real Git work tree:
 * the removal is recorded as a commit only when --commit asks for it, and
 * --delete-data without --commit is refused before anything is written.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { assertExit, runCli } from '../../test/support/cli.js';
import { git } from '../../test/support/git.js';

const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false'];

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('generate-gitops-env remove without --commit', () => {
  let tmp: string;
  let repo: string;
  let head: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'remove-command-'));
    repo = join(tmp, 'gitops');
    const cert = join(tmp, 'cert.pem');
    await writeFile(cert, createTestCertificate().certificatePem);
    assertExit(await runCli(['init', repo]), 0);
    assertExit(await runCli(['render', '--repo', repo, '--cluster', 'eu-1', '--domain', 'eu-1.example.net', '--region', 'eu-west-1', '--cert', cert]), 0);
    await git(repo, 'add', '--all');
    await git(repo, ...IDENTITY, 'commit', '--quiet', '-m', 'Scaffold eu-1');
    head = await git(repo, 'rev-parse', 'HEAD');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('--delete-data without --commit is refused with exit 2, and nothing is deleted, staged or committed', async () => {
    const result = await runCli(['remove', '--repo', repo, '--cluster', 'eu-1', '--delete-data']);
    assertExit(result, 2);
    assert.match(result.stderr, /commit/);
    assert.equal(await git(repo, 'status', '--porcelain'), '');
    assert.equal(await git(repo, 'rev-parse', 'HEAD'), head);
  });

  it('deletes the generated files in the work tree but commits nothing: the user reviews and commits', async () => {
    const result = await runCli(['remove', '--repo', repo, '--cluster', 'eu-1']);
    assertExit(result, 0);
    assert.match(result.stdout, /^D clusters\/eu-1\/provenance\.yaml$/m);
    assert.match(result.stderr, /Next: commit the removal \(or run with --commit\)\./);
    assert.doesNotMatch(result.stderr, /Committed/);
    // The stateful namespaces and their volumes stay: the user is told so, and how to delete them.
    assert.match(result.stderr, /Protected objects and their volumes stay on the cluster; delete them with --delete-data, or by hand\./);
    assert.equal(await git(repo, 'rev-parse', 'HEAD'), head, 'no commit was made');
    assert.equal(await exists(join(repo, 'clusters/eu-1/provenance.yaml')), false);
    assert.match(await git(repo, 'status', '--porcelain'), /clusters\/eu-1\/provenance\.yaml/);
  });
});
