/**
 * Upgrading a real Git work tree: plans made on worker threads equal those
 * made in this thread, and a changed cluster whose upgraded tree fails
 * verification is put back byte for byte and reported.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { planUpgrade } from '../fleet/plan-upgrade.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { platformDir } from '../package-paths.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { git } from '../../test/support/git.js';
import { planUpgradeInParallel } from './plan-upgrade-in-parallel.js';
import { renderWorkTree } from '../git/render-work-tree.js';
import { upgradeWorkTree } from './upgrade-work-tree.js';

const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid'];

async function snapshot(repo: string, dir: string): Promise<Map<string, string>> {
  const reader = new FsRepoReader(repo);
  return new Map(await Promise.all((await reader.list(dir)).map(async (p) => [p, (await reader.read(p)) ?? ''] as const)));
}

describe('upgradeWorkTree', () => {
  let tmp: string;
  let repo: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'upgrade-work-tree-'));
    repo = join(tmp, 'gitops');
    await initPlatformRepository(repo, platformDir());
    const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
    for (const name of ['eu-1', 'eu-2']) {
      await renderWorkTree(repo, { cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' }, pass: 'all', certificate, generatorVersion: 'test' });
    }
    const patch = join(repo, 'clusters/development/apps/tcr-api-replicas.yaml');
    await writeFile(patch, (await readFile(patch, 'utf8')).replace('value: 3', 'value: 6'));
    await git(repo, 'add', '--all');
    await git(repo, ...IDENTITY, 'commit', '--quiet', '-m', 'eu-1 and six replicas');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('plans the same on worker threads as in this thread', async () => {
    const options = { generatorVersion: 'test', platformCommit: 'c'.repeat(40), random: (size: number) => randomBytes(size) };
    const inline = await planUpgrade(new FsRepoReader(repo), options);
    const threaded = await planUpgradeInParallel(repo, { ...options, workers: 2, minClustersPerWorker: 1 });
    assert.deepEqual(
      inline.map((p) => [p.name, p.status]),
      [
        ['eu-1', 'changed'],
        ['eu-2', 'changed'],
      ],
    );
    assert.deepEqual(threaded, inline);
  });

  it('puts a cluster back as it was when its upgraded tree fails verification', async () => {
    const before = await snapshot(repo, 'clusters/eu-1');
    const verified: string[] = [];
    const outcomes = await upgradeWorkTree(repo, {
      dryRun: false,
      generatorVersion: 'test',
      verify: async (_dir, options) => {
        verified.push(options?.cluster ?? '');
        return { findings: [`clusters/${options?.cluster ?? ''}/flux/apps.yaml: a finding`], notes: [], kustomizationsChecked: 1, summary: '1 finding' };
      },
    });
    assert.deepEqual(verified, ['eu-1', 'eu-2']);
    assert.deepEqual(
      outcomes.map((o) => [o.name, o.status, o.written]),
      [
        ['eu-1', 'failed', false],
        ['eu-2', 'failed', false],
      ],
    );
    assert.deepEqual(outcomes[0]!.findings, ['clusters/eu-1/flux/apps.yaml: a finding']);
    assert.deepEqual(await snapshot(repo, 'clusters/eu-1'), before);
    assert.equal(await git(repo, 'status', '--porcelain'), '');
  });

  it('puts a cluster back as it was when its verify cannot finish, and says why', async () => {
    const before = await snapshot(repo, 'clusters/eu-1');
    await assert.rejects(
      upgradeWorkTree(repo, {
        dryRun: false,
        generatorVersion: 'test',
        clusters: ['eu-1'],
        verify: async () => {
          throw new Error('kubectl was killed');
        },
      }),
      /kubectl was killed/,
    );
    assert.deepEqual(await snapshot(repo, 'clusters/eu-1'), before);
    assert.equal(await git(repo, 'status', '--porcelain'), '', 'nothing half-upgraded is left in the working tree');
  });
});
