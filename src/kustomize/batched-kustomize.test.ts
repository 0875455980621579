/**
 * Builds asked for together run in one kubectl process and give each caller
 * the bytes a build of its directory alone gives; whenever the combined build
 * fails, each directory is built alone, so a caller sees exactly the separate
 * build's error; the load restrictor still holds inside each directory; the
 * batch label never reaches an output. Real kubectl kustomize throughout.
 */
import { after, before, describe, it } from 'node:test';
import { getEventListeners } from 'node:events';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ValidationError } from '../errors.js';
import type { KustomizeBuilder } from '../verify/kustomize-builder.js';
import { BATCH_ENTRY_LABEL } from './batch-output.js';
import { BatchedKustomize } from './batched-kustomize.js';
import { KubectlKustomize } from './kubectl-kustomize.js';

const kubectl = new KubectlKustomize();

/** kubectl kustomize, recording each process it runs (its root and directory). */
function countingKubectl(): KustomizeBuilder & { readonly runs: string[] } {
  const runs: string[] = [];
  return {
    runs,
    build: (root, dir, signal) => {
      runs.push(dir === '.' ? root : dir);
      return kubectl.build(root, dir, signal);
    },
    engine: () => kubectl.engine(),
  };
}

const configMap = (name: string, extra = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}data:\n  k: v\n`;

const TREE: Record<string, string> = {
  // A namespace, a labelled Deployment with selectors and a pod template, an unlabelled ConfigMap whose data holds the label's text.
  'apps/web/kustomization.yaml': 'resources: [deploy.yaml, cm.yaml, ns.yaml]\nnamespace: web\n',
  'apps/web/ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n',
  'apps/web/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: zeta\ndata:\n  k: |\n    ${BATCH_ENTRY_LABEL}: "1"\n`,
  'apps/web/deploy.yaml': [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    '  labels: {app: web, tier: "y"}',
    'spec:',
    '  selector: {matchLabels: {app: web}}',
    '  template:',
    '    metadata: {labels: {app: web}}',
    '    spec: {containers: [{name: c, image: nginx}]}',
    '',
  ].join('\n'),
  // A base shared by an overlay, with a strategic-merge patch (the schema-loading path).
  'base/kustomization.yaml': 'resources: [cm.yaml]\n',
  'base/cm.yaml': configMap('settings', '  labels:\n    keep: me\n'),
  'overlay/kustomization.yaml':
    'resources: [../base]\nnamePrefix: eu-\npatches:\n- patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: settings\n    data:\n      extra: "1"\n',
  'empty/kustomization.yaml': 'resources: []\n',
  // Builds the same ConfigMap id as a sibling.
  'twin-a/kustomization.yaml': 'resources: [cm.yaml]\n',
  'twin-a/cm.yaml': configMap('twin'),
  'twin-b/kustomization.yaml': 'resources: [cm.yaml]\n',
  'twin-b/cm.yaml': configMap('twin'),
  'broken/kustomization.yaml': 'resources: [missing.yaml]\n',
  // Reads a file outside its own directory: the root-only restrictor refuses it.
  'escape/kustomization.yaml': 'resources: [../secret.yaml]\n',
  'secret.yaml': configMap('secret'),
  // Fields kustomize honours only in the kustomization it builds: fifo order (the Namespace after the ConfigMap), origin annotations.
  'fifo/kustomization.yaml': 'resources: [cm.yaml, ns.yaml]\nsortOptions:\n  order: fifo\n',
  'fifo/cm.yaml': configMap('first'),
  'fifo/ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: second\n',
  'origins/kustomization.yaml': 'resources: [cm.yaml]\nbuildMetadata: [originAnnotations]\n',
  'origins/cm.yaml': configMap('traced'),
};

describe('BatchedKustomize', () => {
  let root: string;
  let scratch: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'batched-kustomize-'));
    scratch = await mkdtemp(join(tmpdir(), 'batched-kustomize-scratch-'));
    for (const [path, text] of Object.entries(TREE)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  /** Each of `dirs` built alone: output or error. */
  const separately = (dirs: readonly string[]) => Promise.all(dirs.map((dir) => kubectl.build(root, dir).catch((error: Error) => error)));

  it('builds directories asked for together in one process, each output byte for byte its own build’s, without the label', async () => {
    const inner = countingKubectl();
    const batched = new BatchedKustomize(inner, { scratchRoot: scratch });
    const dirs = ['apps/web', 'overlay', 'empty', 'base', 'twin-a'];
    const outputs = await Promise.all(dirs.map((dir) => batched.build(root, dir)));
    assert.equal(inner.runs.length, 1, `one process: ${inner.runs.join(', ')}`);
    assert.deepEqual(outputs, await separately(dirs));
    assert.equal(outputs[2], '', 'an empty build stays empty');
    assert.deepEqual(batched.stats(), { combined: 1, combinedDirs: 5, fallbacks: 0, single: 0 });
    for (const output of outputs) {
      for (const document of parseAllDocuments(output)) {
        const labels = (document.toJS() as { metadata?: { labels?: Record<string, string> } }).metadata?.labels ?? {};
        assert.ok(!(BATCH_ENTRY_LABEL in labels), `the batch label leaked: ${output}`);
      }
    }
    // The label's text in data survives; the objects without labels get none, the labelled keep theirs.
    assert.match(outputs[0]!, /k: \|\n {4}gitops-scaffolder\.batch\/entry: "1"\n/);
    assert.match(outputs[0]!, /kind: Namespace\nmetadata:\n {2}name: web\n/);
    assert.match(outputs[0]!, /labels:\n {4}app: web\n {4}tier: "y"\n {2}name: web\n/);
    assert.match(outputs[1]!, /labels:\n {4}keep: me\n {2}name: eu-settings\n/);
    assert.deepEqual(await readdir(scratch), [], 'the scratch directory is removed');
  });

  it('builds a batch of one directly, and builds asked for apart in separate processes', async () => {
    const inner = countingKubectl();
    const batched = new BatchedKustomize(inner, { scratchRoot: scratch });
    assert.equal(await batched.build(root, 'base'), await kubectl.build(root, 'base'));
    assert.equal(await batched.build(root, 'overlay'), await kubectl.build(root, 'overlay'));
    assert.deepEqual(inner.runs, ['base', 'overlay']);
  });

  it('waits again with every build that joins, but never longer than maxWaitMs from the first', async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const inner = countingKubectl();
    const batched = new BatchedKustomize(inner, { scratchRoot: scratch, windowMs: 20, maxWaitMs: 1000 });
    // 24 ms from first to last, but never 20 ms without a build: one batch.
    const first = [batched.build(root, 'base')];
    await sleep(12);
    first.push(batched.build(root, 'overlay'));
    await sleep(12);
    first.push(batched.build(root, 'apps/web'));
    assert.deepEqual(await Promise.all(first), await separately(['base', 'overlay', 'apps/web']));
    assert.equal(inner.runs.length, 1);

    const capped = countingKubectl();
    const hurried = new BatchedKustomize(capped, { scratchRoot: scratch, windowMs: 50, maxWaitMs: 30 });
    const second = [hurried.build(root, 'base')];
    await sleep(40);
    second.push(hurried.build(root, 'overlay'));
    await Promise.all(second);
    assert.deepEqual(capped.runs, ['base', 'overlay'], 'the first batch left at 30 ms');
  });

  it('builds alone a directory that sets sortOptions or buildMetadata, which a wrapper would not honour', async () => {
    const inner = countingKubectl();
    const batched = new BatchedKustomize(inner, { scratchRoot: scratch });
    const dirs = ['fifo', 'origins', 'base', 'overlay'];
    const outputs = await Promise.all(dirs.map((dir) => batched.build(root, dir)));
    assert.deepEqual(outputs, await separately(dirs));
    assert.match(outputs[0]!, /name: first\n---\n.*kind: Namespace/s, 'fifo order kept');
    assert.match(outputs[1]!, /config\.kubernetes\.io\/origin/, 'origin annotations kept');
    assert.deepEqual(batched.stats(), { combined: 1, combinedDirs: 2, fallbacks: 0, single: 2 });
    assert.equal(inner.runs.length, 3);
  });

  it('serves a directory asked for twice in one batch from one build', async () => {
    const inner = countingKubectl();
    const batched = new BatchedKustomize(inner, { scratchRoot: scratch });
    const [a, b, c] = await Promise.all([batched.build(root, 'base'), batched.build(root, 'overlay'), batched.build(root, 'base')]);
    assert.equal(inner.runs.length, 1);
    assert.equal(a, c);
    assert.equal(b, await kubectl.build(root, 'overlay'));
  });

  it('falls back to separate builds when one directory fails: its caller gets the separate build’s error, the others their output', async () => {
    const inner = countingKubectl();
    const batched = new BatchedKustomize(inner, { scratchRoot: scratch });
    const dirs = ['base', 'broken', 'overlay'];
    const outcomes = await Promise.all(dirs.map((dir) => batched.build(root, dir).catch((error: Error) => error)));
    const alone = await separately(dirs);
    assert.equal(outcomes[0], alone[0]);
    assert.equal(outcomes[2], alone[2]);
    assert.ok(outcomes[1] instanceof ValidationError && alone[1] instanceof ValidationError);
    assert.equal(outcomes[1].message, alone[1].message);
    assert.match(outcomes[1].message, /missing\.yaml/);
    assert.equal(inner.runs.length, 4, 'the combined build, then each directory');
    assert.equal(batched.stats().fallbacks, 1);
  });

  it('falls back when two directories build the same resource id', async () => {
    const inner = countingKubectl();
    const batched = new BatchedKustomize(inner, { scratchRoot: scratch });
    const dirs = ['twin-a', 'twin-b'];
    const outputs = await Promise.all(dirs.map((dir) => batched.build(root, dir)));
    assert.deepEqual(outputs, await separately(dirs));
    assert.equal(batched.stats().fallbacks, 1);
    assert.equal(inner.runs.length, 3);
  });

  it('keeps the root-only load restrictor inside a batched directory: a file outside it is refused', async () => {
    const inner = countingKubectl();
    const batched = new BatchedKustomize(inner, { scratchRoot: scratch });
    // Alone, kustomize refuses the file; batched, the combined build must refuse it too (it fails, so each is built alone).
    const alone = await kubectl.build(root, 'escape').catch((error: Error) => error);
    assert.ok(alone instanceof ValidationError);
    assert.match(alone.message, /security; file .*secret\.yaml' is not in or below/);
    const [escaped, base] = await Promise.all([batched.build(root, 'escape').catch((error: Error) => error), batched.build(root, 'base')]);
    assert.ok(escaped instanceof ValidationError);
    assert.equal(escaped.message, alone.message);
    assert.equal(base, await kubectl.build(root, 'base'));
    assert.equal(batched.stats().fallbacks, 1, 'the combined build refused the file as well');
  });

  it('refuses the escaping file in the combined build itself, not only in the fallback', async () => {
    // The combined build, without the fallback: a builder whose separate builds would succeed must still fail combined.
    let combinedError: unknown;
    const inner: KustomizeBuilder = {
      build: async (buildRoot, dir, signal) => {
        if (dir !== '.') return 'separate\n';
        return kubectl.build(buildRoot, dir, signal).catch((error: unknown) => {
          combinedError = error;
          throw error;
        });
      },
    };
    const batched = new BatchedKustomize(inner, { scratchRoot: scratch });
    await Promise.all([batched.build(root, 'escape'), batched.build(root, 'base')]);
    assert.ok(combinedError instanceof ValidationError);
    assert.match(combinedError.message, /security; file .*secret\.yaml' is not in or below .*escape/);
  });

  it('lets one caller abort without aborting the others', async () => {
    const batched = new BatchedKustomize(kubectl, { scratchRoot: scratch });
    const controller = new AbortController();
    const aborted = batched.build(root, 'base', controller.signal);
    const others = Promise.all([batched.build(root, 'overlay'), batched.build(root, 'apps/web', new AbortController().signal)]);
    controller.abort(new Error('cancelled'));
    await assert.rejects(aborted, /cancelled/);
    assert.deepEqual(await others, await separately(['overlay', 'apps/web']));
  });

  it('leaves no listener on a caller’s signal once its builds are over, alone or together (a run’s signal outlives a batch of clusters)', async () => {
    const batched = new BatchedKustomize(countingKubectl(), { scratchRoot: scratch });
    const run = new AbortController().signal;
    for (let i = 0; i < 12; i++) {
      await batched.build(root, 'base', run);
      await Promise.all([batched.build(root, 'overlay', run), batched.build(root, 'apps/web', run)]);
    }
    assert.equal(getEventListeners(run, 'abort').length, 0);
  });

  it('is the inner builder’s engine, so cache keys do not change', async () => {
    assert.equal(await new BatchedKustomize(kubectl).engine(), await kubectl.engine());
  });
});
