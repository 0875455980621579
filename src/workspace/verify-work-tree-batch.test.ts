/**
 * Batching kustomize builds (kustomize/batched-kustomize.ts) changes how many
 * kubectl processes a verify starts, never what it sees: on trees the real
 * renderer wrote from both shipped platforms, verified pass by pass as a run
 * does, every directory verify builds gets byte for byte the output (or the
 * error) of a build of it alone, verify reports the same verdicts, and fewer
 * processes run.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { renderWorkTree } from '../git/render-work-tree.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { BatchedKustomize } from '../kustomize/batched-kustomize.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { MaterializedKustomize } from '../kustomize/materialized-kustomize.js';
import { platformDir } from '../package-paths.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import type { KustomizeBuilder } from '../verify/kustomize-builder.js';
import { SchemaValidator } from '../verify/schema-validator.js';
import { formatFinding, verifyRepository } from '../verify/verify-repository.js';
import { createWorkTreeVerifier } from './verify-work-tree.js';
import { CLUSTER, EKS, TALOS, verdict } from './test-work-tree-fixtures.js';

const certificate = parseSealingCertificate(createTestCertificate().certificatePem);

const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });

/** kubectl kustomize counting its processes. */
function countingKubectl(): KustomizeBuilder & { processes: number } {
  const kubectl = new KubectlKustomize();
  const counting = {
    processes: 0,
    build: (root: string, dir: string, signal?: AbortSignal) => {
      counting.processes += 1;
      return kubectl.build(root, dir, signal);
    },
    engine: () => kubectl.engine(),
  };
  return counting;
}

/** Verifies `dir` through `kustomize`, recording what each built directory gave (output or error text). */
async function verifyRecording(dir: string, cluster: string | undefined, kustomize: KustomizeBuilder) {
  const outputs = new Map<string, string>();
  const recording: KustomizeBuilder = {
    build: async (root, built, signal) => {
      const text = await kustomize.build(root, built, signal).catch((error: Error) => `error: ${error.message}`);
      outputs.set(built, text);
      if (text.startsWith('error: ')) throw new Error(text.slice('error: '.length));
      return text;
    },
  };
  const reader = new FsRepoReader(dir);
  const builder = new MaterializedKustomize(reader, { kustomize: recording });
  try {
    const report = await verifyRepository({ reader, builder, validator, repoRoot: dir }, cluster !== undefined ? { cluster } : {});
    return { findings: report.findings.map(formatFinding), notes: report.notes, summary: report.summary, outputs };
  } finally {
    await builder.dispose();
  }
}

/** Verifies with and without batching; asserts the same verdict and byte-identical outputs per directory; returns the process counts. */
async function compare(dir: string, cluster?: string): Promise<{ separate: number; batched: number; combined: number }> {
  const plain = countingKubectl();
  const inner = countingKubectl();
  const batcher = new BatchedKustomize(inner);
  const separate = await verifyRecording(dir, cluster, plain);
  const batched = await verifyRecording(dir, cluster, batcher);
  assert.deepEqual([...batched.outputs.keys()].sort(), [...separate.outputs.keys()].sort(), 'the same directories are built');
  for (const [built, text] of separate.outputs) assert.equal(batched.outputs.get(built), text, `the output of ${built} is the separate build's`);
  assert.deepEqual(
    { findings: batched.findings, notes: batched.notes, summary: batched.summary },
    { findings: separate.findings, notes: separate.notes, summary: separate.summary },
  );
  assert.equal(batcher.stats().fallbacks, 0, 'no combined build of a generated tree fails');
  return { separate: plain.processes, batched: inner.processes, combined: batcher.stats().combined };
}

describe('batched kustomize builds in verify', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'verify-batch-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('gives platform/default the same outputs and verdicts pass by pass in fewer processes', async () => {
    const dir = join(tmp, 'default');
    await initPlatformRepository(dir, platformDir());
    await renderWorkTree(dir, { cluster: CLUSTER, pass: 'infrastructure', generatorVersion: '0.0.0-test' });
    const pass1 = await compare(dir, CLUSTER.name);
    await renderWorkTree(dir, { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    const pass2 = await compare(dir, CLUSTER.name);
    assert.ok(pass2.combined > 0, 'pass 2 builds a wave in one process');
    // The paths the cluster's Kustomization files name are asked for with the root: one process a pass.
    assert.deepEqual([pass1.batched, pass2.batched], [1, 1], `one kubectl process a pass: ${JSON.stringify({ pass1, pass2 })}`);
    assert.ok(pass1.batched + pass2.batched < pass1.separate + pass2.separate, `fewer processes: ${JSON.stringify({ pass1, pass2 })}`);
    // Through the verifier as the runner wires it, with the cache: the same verdicts with batching on and off.
    for (const buildCache of [true, false]) {
      assert.deepEqual(
        verdict(await createWorkTreeVerifier({ buildCache })(dir, { cluster: CLUSTER.name })),
        verdict(await createWorkTreeVerifier({ buildCache, batchBuilds: false })(dir, { cluster: CLUSTER.name })),
      );
    }
  });

  it('makes its copy of the tree below the scratch directory it is given, and leaves nothing there', async () => {
    const dir = join(tmp, 'scratch');
    await initPlatformRepository(dir, platformDir());
    await renderWorkTree(dir, { cluster: CLUSTER, pass: 'infrastructure', generatorVersion: '0.0.0-test' });
    const missing = join(tmp, 'no-such-scratch');
    await assert.rejects(createWorkTreeVerifier({ scratchRoot: missing })(dir, { cluster: CLUSTER.name }), (error: Error) => error.message.includes(missing));
    const scratchRoot = join(tmp, 'scratch-root');
    await mkdir(scratchRoot);
    const report = await createWorkTreeVerifier({ scratchRoot })(dir, { cluster: CLUSTER.name });
    assert.deepEqual(report.findings, []);
    assert.deepEqual(await readdir(scratchRoot), [], 'the copy is removed after the verify');
  });

  it('gives platform/matrix-example the same outputs and verdicts per cluster and for the whole repository', async () => {
    const dir = join(tmp, 'matrix');
    await initPlatformRepository(dir, platformDir('matrix-example'));
    for (const cluster of [TALOS, EKS]) await renderWorkTree(dir, { cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    for (const cluster of [TALOS.name, EKS.name, undefined]) {
      const counts = await compare(dir, cluster);
      assert.ok(counts.combined > 0, `a wave is built in one process: ${JSON.stringify(counts)}`);
    }
    assert.deepEqual(verdict(await createWorkTreeVerifier()(dir, {})), verdict(await createWorkTreeVerifier({ batchBuilds: false })(dir, {})));
  });
});
