/**
 * A batch run verifies each cluster as a run of that cluster alone would: its
 * sparse clone holds no other cluster, so the verify of one cluster of a
 * batch leaves the others out. On a tree the real renderer wrote, the verdict
 * with the others left out is the verdict of a copy without them, and what is
 * wrong in another cluster's directory (a kustomization that leaves the
 * repository) is not this cluster's finding: it is neither walked, read nor
 * copied; that cluster's own verify refuses it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderWorkTree } from '../git/render-work-tree.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { platformDir } from '../package-paths.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { createWorkTreeVerifier } from './verify-work-tree.js';
import { EKS, TALOS, verdict } from './test-work-tree-fixtures.js';

const certificate = parseSealingCertificate(createTestCertificate().certificatePem);

describe('verify with a batch’s other clusters left out', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'verify-leave-out-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('gives the verdict of a tree without them; what is wrong in another cluster is that cluster’s own failure', async () => {
    const dir = join(tmp, 'batch');
    await initPlatformRepository(dir, platformDir('matrix-example'));
    for (const cluster of [TALOS, EKS]) await renderWorkTree(dir, { cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    const alone = join(tmp, 'alone');
    await cp(dir, alone, { recursive: true });
    await rm(join(alone, 'clusters', EKS.name), { recursive: true });

    const verify = createWorkTreeVerifier();
    const others = [`clusters/${EKS.name}`];
    const left = await verify(dir, { cluster: TALOS.name, leaveOut: others });
    assert.deepEqual(verdict(left), verdict(await createWorkTreeVerifier()(alone, { cluster: TALOS.name })));
    assert.deepEqual(left.findings, []);

    // The other cluster's entry point now leaves the repository.
    await writeFile(join(dir, 'clusters', EKS.name, 'kustomization.yaml'), 'resources:\n  - ../../../outside\n');
    await assert.rejects(verify(dir, { cluster: TALOS.name }), /names a path outside the repository/, 'walked, it is refused');
    assert.deepEqual((await verify(dir, { cluster: TALOS.name, leaveOut: others })).findings, [], 'left out, it is not this cluster’s');
    await assert.rejects(
      verify(dir, { cluster: EKS.name, leaveOut: [`clusters/${TALOS.name}`] }),
      /names a path outside the repository/,
      'its own verify refuses it',
    );
  });
});
