/**
 * `scaffold-runner --rotate-only` (SCAFFOLD_ROTATE_ONLY, what the rotate route
 * sends): a second run of a scaffolded cluster pushes one commit that reseals
 * exactly the credentials named, and changes no other file.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { platformDir } from '../../src/package-paths.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { git } from '../support/git.js';
import { describeOutcome, runRunner, treeAt } from '../support/runner.js';

const CLUSTER = ['--cluster', 'eu-rot-2', '--domain', 'eu-rot-2.example.net', '--region', 'eu-west-1'];

describe('scaffold-runner --rotate-only', () => {
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'runner-rotate-'));
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('reseals only the credentials named (with their sameAs partner) in one new commit', async () => {
    const dir = join(scratch, 'remote.git');
    await ensureSeededBareRepository(dir, platformDir());
    const certFile = join(scratch, 'cert.pem');
    await writeFile(certFile, createTestCertificate().certificatePem);
    const args = ['--repo-url', pathToFileURL(dir).href, ...CLUSTER, '--cert', certFile];
    const first = await runRunner({ args, env: { TMPDIR: scratch } });
    assert.equal(first.code, 0, describeOutcome(first));
    const before = await treeAt(dir, 'main', 'clusters/eu-rot-2');
    const head = await git(dir, 'rev-parse', 'main');

    const second = await runRunner({ args, env: { TMPDIR: scratch, SCAFFOLD_ROTATE_ONLY: 'tcr-database' } });
    assert.equal(second.code, 0, describeOutcome(second));
    assert.equal(await git(dir, 'rev-list', '--count', `${head}..main`), '1', 'one commit');
    const after = await treeAt(dir, 'main', 'clusters/eu-rot-2');
    const changed = [...after.keys()].filter((path) => after.get(path) !== before.get(path)).sort();
    assert.deepEqual(changed, [
      'clusters/eu-rot-2/apps/sealed/sealed-tcr-database.yaml',
      'clusters/eu-rot-2/database/sealed/sealed-postgresql-credentials.yaml',
    ]);
    const refused = await runRunner({ args, env: { TMPDIR: scratch, SCAFFOLD_ROTATE_ONLY: 'Bad Name' } });
    assert.equal(refused.code, 2, describeOutcome(refused));
  });
});
