/**
 * Issue 9 at the generator CLI: `render --cert` and `seal --cert` refuse an
 * expired or not-yet-valid sealing certificate, and one with a weak key, with
 * exit 2, one error line naming `--cert` (with the validity window), nothing
 * on stdout and nothing written. The CLI checks at the real clock, so the
 * certificates are dated relative to now.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { runCli, type CliResult } from '../support/cli.js';
import { gitSync as git } from '../support/git.js';

const DAY = 86_400_000;
const CLUSTER_ARGS = ['--cluster', 'eu-prod-1', '--domain', 'eu-prod-1.example.net', '--region', 'eu-west-1'];
const SECRET = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-token\n  namespace: tcr\nstringData:\n  token: tok-cli-certificate-0123\n';
const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ';

function assertRefused(result: CliResult, error: RegExp): void {
  const printed = `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
  assert.equal(result.code, 2, printed);
  assert.equal(result.stdout, '', printed);
  const errors = result.stderr.split('\n').filter((line) => line.startsWith('error:'));
  assert.equal(errors.length, 1, printed);
  assert.match(errors[0]!, error);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace is not a clear error');
}

describe('generate-gitops-env refuses a sealing certificate outside its validity window or with a weak key', { concurrency: 4 }, () => {
  let tmp: string;
  let repo: string;
  let head: string;
  const certs: Record<string, string> = {};
  const now = Date.now();
  const cases: { title: string; file: string; error: RegExp }[] = [
    {
      title: 'an expired certificate',
      file: 'expired',
      error: new RegExp(`^error: --cert: certificate #1 expired on ${ISO} \\(valid from ${ISO} to ${ISO}; now is ${ISO}\\)`),
    },
    {
      title: 'a certificate that is not valid yet',
      file: 'future',
      error: new RegExp(`^error: --cert: certificate #1 is not valid yet \\(valid from ${ISO} to ${ISO}; now is ${ISO}\\)$`),
    },
    { title: 'a 1024-bit RSA key', file: 'weak', error: /^error: --cert: certificate #1 has a 1024-bit RSA key; at least 2048 bits are required$/ },
  ];

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'cli-certificate-'));
    repo = join(tmp, 'gitops');
    const init = await runCli(['init', repo]);
    assert.equal(init.code, 0, init.stderr);
    head = git(repo, 'rev-parse', 'HEAD').trim();
    const pems = {
      expired: createTestCertificate({ notBefore: new Date(now - 3650 * DAY), notAfter: new Date(now - DAY) }),
      future: createTestCertificate({ notBefore: new Date(now + DAY) }),
      weak: createTestCertificate({ bits: 1024 }),
    };
    for (const [name, cert] of Object.entries(pems)) {
      certs[name] = join(tmp, `${name}.pem`);
      await writeFile(certs[name]!, cert.certificatePem);
    }
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  for (const { title, file, error } of cases) {
    it(`render --cert: exit 2 for ${title}, nothing written`, async () => {
      const result = await runCli(['render', '--repo', repo, ...CLUSTER_ARGS, '--cert', certs[file]!]);
      assertRefused(result, error);
      assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '', 'something was written');
      assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), head);
    });

    it(`seal --cert: exit 2 for ${title}, nothing on stdout`, async () => {
      const result = await runCli(['seal', '--cert', certs[file]!], { stdin: SECRET });
      assertRefused(result, error);
      assert.ok(!result.stderr.includes('tok-cli-certificate-0123'));
    });
  }
});
