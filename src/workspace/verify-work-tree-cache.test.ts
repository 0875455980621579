/**
 * A verifier's kustomize build cache changes how often kubectl runs, never a
 * verdict: on trees the real renderer wrote from both shipped platforms,
 * verified pass by pass as a run does, the cached verifier reports exactly
 * what a verifier without the cache reports, answers repeated inputs without
 * kubectl, and builds again once an input changed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderWorkTree } from '../git/render-work-tree.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { platformDir } from '../package-paths.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { createWorkTreeVerifier, type WorkTreeVerifyOptions } from './verify-work-tree.js';
import { CLUSTER, EKS, TALOS, verdict } from './test-work-tree-fixtures.js';

const certificate = parseSealingCertificate(createTestCertificate().certificatePem);

describe('the verifier’s kustomize build cache', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'verify-cache-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  /** Verifies `dir` with a cached and an uncached verifier; the verdicts must be equal. Returns the cached report. */
  const both = async (
    cached: ReturnType<typeof createWorkTreeVerifier>,
    uncached: ReturnType<typeof createWorkTreeVerifier>,
    dir: string,
    options: WorkTreeVerifyOptions,
  ) => {
    const withCache = await cached(dir, options);
    const without = await uncached(dir, options);
    assert.deepEqual(verdict(withCache), verdict(without), `same verdict for ${dir} ${JSON.stringify(options)}`);
    assert.equal(without.kustomizeBuilds?.cached, 0);
    assert.equal(
      (withCache.kustomizeBuilds?.run ?? 0) + (withCache.kustomizeBuilds?.cached ?? 0),
      without.kustomizeBuilds?.run,
      'every build is either run or cached',
    );
    return withCache;
  };

  it('gives platform/default the same verdicts pass by pass, pass 2 reusing what pass 1 built, and builds a changed input again', async () => {
    const dir = join(tmp, 'default');
    await initPlatformRepository(dir, platformDir());
    const cached = createWorkTreeVerifier();
    const uncached = createWorkTreeVerifier({ buildCache: false });

    await renderWorkTree(dir, { cluster: CLUSTER, pass: 'infrastructure', generatorVersion: '0.0.0-test' });
    const pass1 = await both(cached, uncached, dir, { cluster: CLUSTER.name });
    assert.deepEqual(pass1.findings, []);
    assert.ok((pass1.kustomizeBuilds?.run ?? 0) > 0, 'pass 1 runs kubectl');

    await renderWorkTree(dir, { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    const pass2 = await both(cached, uncached, dir, { cluster: CLUSTER.name });
    assert.deepEqual(pass2.findings, []);
    assert.ok((pass2.kustomizeBuilds?.cached ?? 0) > 0, `pass 2 reuses builds whose inputs pass 1 built: ${JSON.stringify(pass2.kustomizeBuilds)}`);

    // Nothing changed: every build is answered by the cache.
    const again = await cached(dir, { cluster: CLUSTER.name });
    assert.deepEqual(again.kustomizeBuilds, { run: 0, cached: pass2.kustomizeBuilds!.run + pass2.kustomizeBuilds!.cached });

    // A changed input (a file the cluster's builds read, outside the cluster directory) is built again and found wrong.
    const broken = join(tmp, 'default-broken');
    await cp(dir, broken, { recursive: true });
    const file = join(broken, 'base/infrastructure/kustomization.yaml');
    const text = await readFile(file, 'utf8');
    assert.ok(text.includes('  - falco.yaml\n'), 'the probe names one more resource after falco.yaml');
    await writeFile(file, text.replace('  - falco.yaml\n', '  - falco.yaml\n  - missing.yaml\n'));
    const after = await both(cached, uncached, broken, { cluster: CLUSTER.name });
    assert.ok(
      after.findings.some((f) => f.includes('missing.yaml')),
      `the changed input's failure is reported: ${after.findings.join('\n')}`,
    );
    assert.ok((after.kustomizeBuilds?.run ?? 0) > 0, 'a changed input misses the cache');
  });

  it('gives platform/matrix-example the same verdicts per cluster and for the whole repository', async () => {
    const dir = join(tmp, 'matrix');
    await initPlatformRepository(dir, platformDir('matrix-example'));
    for (const cluster of [TALOS, EKS]) await renderWorkTree(dir, { cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    const cached = createWorkTreeVerifier();
    const uncached = createWorkTreeVerifier({ buildCache: false });
    for (const cluster of [TALOS, EKS]) assert.deepEqual((await both(cached, uncached, dir, { cluster: cluster.name })).findings, []);
    const all = await both(createWorkTreeVerifier(), uncached, dir, {});
    assert.deepEqual(all.findings, []);
  });
});
