import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { parseAllDocuments } from 'yaml';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { memoryRepoReader, type RepoReader } from '../gitops/repo-reader.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import type { ObjectCheck, ObjectValidator } from './object-validator.js';
import { SchemaValidator } from './schema-validator.js';

/** Stands in for the client-node validator: records what it was asked. */
function coreStub(): ObjectValidator & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    async validate(object): Promise<ObjectCheck> {
      const o = object as { apiVersion: string; kind: string };
      seen.push(`${o.apiVersion} ${o.kind}`);
      return { status: 'unknown-kind' };
    },
  };
}

/** Counts reads, to prove schemas are loaded once and lazily. */
function countingReader(inner: RepoReader, counts: { list: number; read: number }): RepoReader {
  return {
    list: (dir) => (counts.list++, inner.list(dir)),
    read: (path) => (counts.read++, inner.read(path)),
    isDirectory: (path) => inner.isDirectory(path),
  };
}

describe('the shipped CRD schema files', () => {
  it('read the same with js-yaml (which the validator uses for speed) as with the yaml package', async () => {
    const dir = defaultCrdSchemaDir();
    const files = (await readdir(dir)).filter((name) => name.endsWith('.yaml'));
    assert.ok(files.length >= 20, files.join(' '));
    for (const name of files) {
      const text = await readFile(join(dir, name), 'utf8');
      const documents = parseAllDocuments(text);
      for (const document of documents) assert.deepEqual(document.errors, [], name);
      assert.deepEqual(
        loadAll(text, undefined, { schema: CORE_SCHEMA }),
        documents.map((document) => document.toJS()),
        name,
      );
    }
  });
});

const core = coreStub();
const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: core });

const kustomization = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'apps', namespace: 'flux-system' }) => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata,
  spec: { interval: '10m', prune: true, path: './apps', sourceRef: { kind: 'GitRepository', name: 'flux-system' }, ...spec },
});

async function issuesOf(object: unknown): Promise<string[]> {
  const check = await validator.validate(object);
  assert.equal(check.status, 'checked');
  return check.status === 'checked' ? check.issues.map((i) => (i.field ? `${i.field}: ${i.message}` : i.message)).sort() : [];
}

describe('SchemaValidator', () => {
  it('accepts a valid Kustomization', async () => {
    assert.deepEqual(await issuesOf(kustomization({ dependsOn: [{ name: 'infrastructure' }], wait: true, timeout: '5m' })), []);
  });

  it('closes object schemas: typos are unknown fields at their path, with a suggestion', async () => {
    assert.deepEqual(await issuesOf(kustomization({ dependOn: [{ name: 'x' }], healthChecks: [{ kind: 'HelmRelease', nmae: 'x' }] })), [
      'spec.dependOn: unknown field (did you mean dependsOn?)',
      'spec.healthChecks[0].name: required field is missing',
      'spec.healthChecks[0].nmae: unknown field (did you mean name?)',
    ]);
    assert.deepEqual(await issuesOf({ ...kustomization({}), specs: {} }), ['specs: unknown field (did you mean spec?)']);
  });

  it('keeps x-kubernetes-preserve-unknown-fields open (HelmRelease values)', async () => {
    const release = {
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: 'web', namespace: 'tcr' },
      spec: {
        interval: '30m',
        chart: { spec: { chart: 'web', sourceRef: { kind: 'HelmRepository', name: 'charts' } } },
        values: { anything: { goes: [1, 'two'] } },
      },
    };
    assert.deepEqual(await issuesOf(release), []);
  });

  it('reports durations, types and enums in readable words', async () => {
    assert.deepEqual(await issuesOf(kustomization({ interval: '5 min', prune: 'yes', sourceRef: { kind: 'GitRepo', name: 'x' } })), [
      'spec.interval: "5 min" is not a duration (Go syntax such as 30s, 5m, 1h30m)',
      'spec.prune: must be boolean (got string "yes")',
      'spec.sourceRef.kind: "GitRepo" is not one of "OCIRepository", "GitRepository", "Bucket", "ExternalArtifact"',
    ]);
  });

  it('checks ObjectMeta, which every CRD leaves open: name, string-valued annotations, unknown keys', async () => {
    assert.deepEqual(await issuesOf(kustomization({}, { namespace: 'flux-system', annotations: { 'a.example.com/x': true }, lables: {} })), [
      'metadata.annotations["a.example.com/x"]: must be string (got boolean true)',
      'metadata.lables: unknown field (did you mean labels?)',
      'metadata.name: required field is missing',
    ]);
  });

  it('accepts nullable fields as null (SealedSecret template.data)', async () => {
    const sealed = {
      apiVersion: 'bitnami.com/v1alpha1',
      kind: 'SealedSecret',
      metadata: { name: 's', namespace: 'tcr' },
      spec: { encryptedData: { password: 'AgB' }, template: { data: null, metadata: { name: 's' } } },
    };
    assert.deepEqual(await issuesOf(sealed), []);
  });

  it('applies the Flux rules the schemas only state in CEL, and the GA-only API rule', async () => {
    const release = (spec: Record<string, unknown>) => ({
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: 'web', namespace: 'tcr' },
      spec: { interval: '30m', ...spec },
    });
    const chart = { spec: { chart: 'web', sourceRef: { kind: 'HelmRepository', name: 'charts' } } };
    const chartRef = { kind: 'OCIRepository', name: 'web' };
    assert.deepEqual(await issuesOf(release({ chart, chartRef })), ['spec: exactly one of chart or chartRef must be set (both are)']);
    assert.deepEqual(await issuesOf(release({})), ['spec: exactly one of chart or chartRef must be set (neither is)']);
    assert.deepEqual(await issuesOf(release({ chartRef })), []);

    const instance = (name: string) => ({
      apiVersion: 'fluxcd.controlplane.io/v1',
      kind: 'FluxInstance',
      metadata: { name, namespace: 'flux-system' },
      spec: { distribution: { version: '2.x', registry: 'ghcr.io/fluxcd' } },
    });
    assert.deepEqual(await issuesOf(instance('flux')), []);
    assert.deepEqual(await issuesOf(instance('main')), ['metadata.name: must be "flux" (got "main")']);

    for (const [apiVersion, kind, ga] of [
      ['kustomize.toolkit.fluxcd.io/v1beta2', 'Kustomization', 'kustomize.toolkit.fluxcd.io/v1'],
      ['source.toolkit.fluxcd.io/v1beta2', 'GitRepository', 'source.toolkit.fluxcd.io/v1'],
      ['source.toolkit.fluxcd.io/v1beta2', 'OCIRepository', 'source.toolkit.fluxcd.io/v1'],
      ['source.toolkit.fluxcd.io/v1beta2', 'HelmRepository', 'source.toolkit.fluxcd.io/v1'],
      ['helm.toolkit.fluxcd.io/v2beta2', 'HelmRelease', 'helm.toolkit.fluxcd.io/v2'],
    ]) {
      assert.deepEqual(await issuesOf({ apiVersion, kind, metadata: { name: 'x' }, spec: {} }), [
        `apiVersion: ${apiVersion} is not served by Flux 2.8+ (GA APIs only): use ${ga}`,
      ]);
    }
  });

  it('reports a version a CRD does not serve', async () => {
    assert.deepEqual(await issuesOf({ apiVersion: 'cert-manager.io/v1alpha2', kind: 'Certificate', metadata: { name: 'c' } }), [
      'apiVersion: cert-manager.io/v1alpha2 is not served for Certificate (served: cert-manager.io/v1)',
    ]);
  });

  it('hands kinds no CRD defines to the core-kind validator', async () => {
    const check = await validator.validate({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } });
    assert.deepEqual(check, { status: 'unknown-kind' });
    assert.ok(core.seen.includes('apps/v1 Deployment'));
    assert.deepEqual(await issuesOf({ kind: 'ConfigMap' }), ['apiVersion and kind must both be set']);
  });

  it('reads the schema directory once, on first use, and parses multi-CRD files', async () => {
    const dir = defaultCrdSchemaDir();
    const kustomizations = await readFile(join(dir, 'kustomize.toolkit.fluxcd.io_kustomizations.yaml'), 'utf8');
    const sealed = await readFile(join(dir, 'bitnami.com_sealedsecrets.yaml'), 'utf8');
    const files = new Map([
      ['flux.yaml', `${kustomizations}\n---\n${sealed}`],
      ['README.md', '# not a schema'],
    ]);
    const counts = { list: 0, read: 0 };
    const lazy = new SchemaValidator({ schemas: countingReader(memoryRepoReader(files), counts), coreKinds: coreStub() });
    assert.deepEqual(counts, { list: 0, read: 0 });
    const [a, b] = await Promise.all([lazy.validate(kustomization({ dependOn: [] })), lazy.validate(kustomization({}))]);
    await lazy.validate({ apiVersion: 'bitnami.com/v1alpha1', kind: 'SealedSecret', metadata: { name: 's' }, spec: { encryptedData: {} } });
    assert.deepEqual(counts, { list: 1, read: 1 });
    assert.equal(a.status === 'checked' && a.issues.length, 1);
    assert.deepEqual(b, { status: 'checked', issues: [] });
  });
});
