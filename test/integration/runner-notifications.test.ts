/**
 * The notification address handed to scaffold-runner the way the executors
 * hand it (SCAFFOLD_NOTIFICATION_PROVIDER, and the address as a value or as a
 * file of the run's Secret): the pushed tree carries the Provider and the
 * Alert, the address only sealed for the cluster (it unseals to the address),
 * and nothing the runner prints or writes holds it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { platformDir } from '../../src/package-paths.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { describeOutcome, runRunner, sealedSecretsIn, treeAt, unsealAll } from '../support/runner.js';

const certificate = createTestCertificate();
const ADDRESS = 'https://example.webhook.office.com/workflows/a1b2c3/triggers/manual/paths/invoke?sig=n0t1f1cat10nS1gnature';

describe('scaffold-runner with failure notifications', () => {
  let scratch: string;
  let remote: string;
  let certFile: string;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'runner-notifications-'));
    remote = join(scratch, 'gitops.git');
    await ensureSeededBareRepository(remote, platformDir('default'));
    certFile = join(scratch, 'cert.pem');
    await writeFile(certFile, certificate.certificatePem);
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('pushes a Provider and an Alert, with the address sealed for the cluster and nowhere in plain text', async () => {
    const resultFile = join(scratch, 'result.json');
    const addressFile = join(scratch, 'notification-address');
    // As the Kubernetes executor hands it: a file of the run's Secret, named by SCAFFOLD_NOTIFICATION_ADDRESS_FILE.
    await writeFile(addressFile, ADDRESS);
    const outcome = await runRunner({
      args: [
        '--repo-url',
        `file://${remote}`,
        '--cluster',
        'eu-prod-1',
        '--domain',
        'eu-prod-1.example.net',
        '--region',
        'eu-west-1',
        '--cert',
        certFile,
        '--result-file',
        resultFile,
      ],
      env: { TMPDIR: scratch, SCAFFOLD_NOTIFICATION_PROVIDER: 'msteams', SCAFFOLD_NOTIFICATION_ADDRESS_FILE: addressFile, SCAFFOLD_LOG_LEVEL: 'debug' },
      resultFile,
    });
    assert.equal(outcome.code, 0, describeOutcome(outcome));
    const tree = await treeAt(remote, 'main', 'clusters/eu-prod-1');
    const alerts = parseAllDocuments(tree.get('clusters/eu-prod-1/flux/flux-alerts.yaml')!).map(
      (d) => d.toJS() as { kind: string; spec: Record<string, unknown> },
    );
    assert.deepEqual(
      alerts.map((o) => o.kind),
      ['Provider', 'Alert'],
    );
    assert.equal(alerts[0]!.spec.type, 'msteams');
    const values = unsealAll(sealedSecretsIn(tree), certificate.privateKey);
    assert.equal(values.get('flux-system/flux-notification-address/address'), ADDRESS, 'sealed for flux-system/flux-notification-address, strict scope');
    const needles = [ADDRESS, 'n0t1f1cat10nS1gnature', Buffer.from(ADDRESS).toString('base64')];
    for (const [where, text] of [
      ['stdout', outcome.stdout],
      ['stderr', outcome.stderr],
      ['result', await readFile(resultFile, 'utf8')],
      ...[...tree].map(([path, t]) => [path, t]),
    ] as const) {
      for (const needle of needles) assert.ok(!text.includes(needle), `${where} holds the address`);
    }
  });

  it('refuses a Provider type without its address before anything is cloned (exit 2)', async () => {
    const outcome = await runRunner({
      args: ['--repo-url', `file://${remote}`, '--cluster', 'eu-prod-2', '--domain', 'eu-prod-2.example.net', '--region', 'eu-west-1', '--cert', certFile],
      env: { TMPDIR: scratch, SCAFFOLD_NOTIFICATION_PROVIDER: 'slack' },
    });
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.match(outcome.stdout + outcome.stderr, /--notification-address-file: the slack Provider needs its webhook address/);
  });

  it('refuses a plain-http address at the edge (exit 2), without echoing it', async () => {
    const outcome = await runRunner({
      args: ['--repo-url', `file://${remote}`, '--cluster', 'eu-prod-3', '--domain', 'eu-prod-3.example.net', '--region', 'eu-west-1', '--cert', certFile],
      env: { TMPDIR: scratch, SCAFFOLD_NOTIFICATION_PROVIDER: 'slack', SCAFFOLD_NOTIFICATION_ADDRESS: ADDRESS.replace('https:', 'http:') },
    });
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.match(outcome.stdout + outcome.stderr, /--notification-address-file: must be an https:\/\/ URL/);
    assert.doesNotMatch(outcome.stdout + outcome.stderr, /n0t1f1cat10nS1gnature/);
  });
});
