/**
 * The runner on a catalog platform: role and providers travel from the runner's
 * flags into the render, the clone materializes the catalog's shared roots
 * (platform/, dns/<provider>/, aws/, env/…) while leaving other clusters out,
 * and the pushed tree carries exactly the layers of 001's "Env on AWS" row.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { platformDir } from '../../src/package-paths.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { verifyWorkTree } from '../../src/workspace/verify-work-tree.js';
import { commitsOf, describeOutcome, fileAt, filesAt, runRunner } from '../support/runner.js';
import { git } from '../support/git.js';

const CLUSTER = { name: 'env-aws-1', domain: 'env-aws-1.example.net', region: 'eu-west-1' };
// 001, "Env on AWS", after the bootstrap layer and the cluster's sealed cluster-secrets:
// bootstrap/aws -> secrets -> platform -> dns/route53 -> platform-config -> aws -> env -> env-auth -> env-auth-config -> env-app, env-observability-agent
const ENV_ON_AWS = [
  'bootstrap/aws',
  `clusters/${CLUSTER.name}/secrets`,
  'platform',
  'dns/route53',
  'platform-config',
  'aws',
  'env',
  'env-auth',
  'env-auth-config',
  'env-app',
  'env-observability-agent',
];

describe('scaffold-runner on the matrix-example catalog platform', () => {
  let work: string;
  let bare: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'runner-catalog-'));
    bare = join(work, 'gitops.git');
    await ensureSeededBareRepository(bare, platformDir('matrix-example'));
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('renders the role and providers given as flags and pushes exactly that row of the matrix', async () => {
    const cert = createTestCertificate({ bits: 2048 });
    const certFile = join(work, 'cert.pem');
    await writeFile(certFile, cert.certificatePem);
    const resultFile = join(work, 'result.json');
    const outcome = await runRunner({
      args: [
        '--repo-url',
        `file://${bare}`,
        '--cluster',
        CLUSTER.name,
        '--domain',
        CLUSTER.domain,
        '--region',
        CLUSTER.region,
        '--role',
        'env',
        '--infra-provider',
        'aws',
        '--dns-provider',
        'route53',
        '--cert',
        certFile,
        '--result-file',
        resultFile,
      ],
      resultFile,
    });
    assert.equal(outcome.code, 0, describeOutcome(outcome));
    assert.equal(outcome.result?.status, 'succeeded');

    const commits = await commitsOf(bare);
    assert.deepEqual(
      commits.slice(0, 2).map((c) => c.trailers['Scaffold-Pass']),
      ['all', 'infrastructure'],
    );

    const fluxFiles = (await filesAt(bare, 'main', `clusters/${CLUSTER.name}/flux`)).filter((f) => !f.includes('/sealed/'));
    const paths: string[] = [];
    for (const file of fluxFiles) {
      for (const doc of parseAllDocuments(await fileAt(bare, 'main', file))) {
        const object = doc.toJS() as { kind?: string; spec?: { path?: string } } | null;
        if (object?.kind === 'Kustomization' && object.spec?.path) paths.push(object.spec.path.replace(/^\.\//, ''));
      }
    }
    assert.deepEqual(paths.sort(), [...ENV_ON_AWS].sort());
    const config = await fileAt(bare, 'main', `clusters/${CLUSTER.name}/flux/cluster-config.yaml`);
    assert.match(config, /infra_provider: aws/);
    assert.match(config, /dns_provider: route53/);

    const checkout = join(work, 'checkout');
    await git(work, 'clone', '--quiet', bare, checkout);
    const report = await verifyWorkTree(checkout, { cluster: CLUSTER.name });
    assert.deepEqual(report.findings, []);
  });

  it('refuses a provider the catalog does not know, before anything is pushed', async () => {
    const cert = createTestCertificate({ bits: 2048 });
    const certFile = join(work, 'cert2.pem');
    await writeFile(certFile, cert.certificatePem);
    const before = (await commitsOf(bare)).length;
    const outcome = await runRunner({
      args: [
        '--repo-url',
        `file://${bare}`,
        '--cluster',
        'env-bad-1',
        '--domain',
        'env-bad-1.example.net',
        '--region',
        'eu-west-1',
        '--role',
        'env',
        '--infra-provider',
        'azure',
        '--dns-provider',
        'route53',
        '--cert',
        certFile,
      ],
    });
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.match(outcome.stdout, /infra_provider/);
    assert.equal((await commitsOf(bare)).length, before);
  });
});
