/**
 * The Flux Operator upgrading itself: what a cluster with a FluxInstance gets
 * in flux/, read back from the render and validated against the real
 * OCIRepository and HelmRelease CRDs.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse, parseAllDocuments } from 'yaml';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { shippedPlatformFiles } from '../git/shipped-platform-files.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import { SchemaValidator } from '../verify/schema-validator.js';
import { FLUX_OPERATOR_FILE, renderFluxOperatorRelease } from './flux-operator-release.js';
import { OPERATOR_CHART_RANGE } from './flux-instance-schema.js';
import { memoryRepoReader } from './repo-reader.js';
import { renderCluster } from './render-cluster.js';

const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });

interface Source {
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: {
    ref?: { semver?: string; tag?: string };
    verify?: { provider: string; matchOIDCIdentity: { issuer: string; subject: string }[] };
    chartRef?: { kind: string; name: string };
    releaseName?: string;
    serviceAccountName?: string;
  };
}

async function render(scaffold?: (text: string) => string): Promise<Map<string, string>> {
  const files = await shippedPlatformFiles();
  if (scaffold) files.set('scaffold.yaml', scaffold(files.get('scaffold.yaml')!));
  const result = await renderCluster(memoryRepoReader(files), {
    cluster: { name: 'c1', domain: 'c1.example.net', region: 'eu-west-1' },
    pass: 'infrastructure',
    generatorVersion: '0.0.0-test',
    random: (size) => new Uint8Array(size),
    fluxInstance: true,
    syncUrl: 'https://git.example.net/platform/gitops.git',
  });
  return new Map(result.tree);
}

describe('the Flux Operator upgrades itself from Git', () => {
  it('follows its signed chart within a semver range, over the release made at bootstrap, and is never pruned', async () => {
    const tree = await render();
    const text = tree.get(`clusters/c1/${FLUX_OPERATOR_FILE}`);
    assert.ok(text, 'flux/flux-operator.yaml is rendered beside the FluxInstance');
    assert.ok(
      (parse(tree.get('clusters/c1/flux/kustomization.yaml')!) as { resources: string[] }).resources.includes('flux-operator.yaml'),
      'and listed, so the sync applies it',
    );
    const [source, release] = parseAllDocuments(text).map((d) => d.toJS() as Source);
    assert.equal(source!.kind, 'OCIRepository');
    assert.equal(source!.spec.ref?.semver, OPERATOR_CHART_RANGE, 'a range, not a pin: the bootstrap version is the floor');
    assert.equal(source!.spec.ref?.tag, undefined);
    assert.deepEqual(source!.spec.verify, {
      provider: 'cosign',
      matchOIDCIdentity: [
        {
          issuer: '^https://token\\.actions\\.githubusercontent\\.com$',
          subject: '^https://github\\.com/controlplaneio-fluxcd/charts/\\.github/workflows/release\\.yml@refs/tags/v.+$',
        },
      ],
    });
    // The signer's identity must match the charts' release workflow and nothing else.
    const subject = new RegExp(source!.spec.verify!.matchOIDCIdentity[0]!.subject);
    assert.ok(subject.test('https://github.com/controlplaneio-fluxcd/charts/.github/workflows/release.yml@refs/tags/v0.49.0'));
    assert.ok(!subject.test('https://github.com/someone/charts/.github/workflows/release.yml@refs/tags/v0.49.0'));
    assert.ok(!subject.test('https://github.com/controlplaneio-fluxcd/charts/.github/workflows/release.yml@refs/heads/main'));
    assert.equal(release!.kind, 'HelmRelease');
    assert.deepEqual(
      [release!.spec.releaseName, release!.spec.serviceAccountName, release!.metadata.namespace],
      ['flux-operator', 'flux-operator', 'flux-system'],
    );
    assert.deepEqual(release!.spec.chartRef, { kind: 'OCIRepository', name: 'flux-operator' });
    for (const object of [source!, release!]) {
      assert.equal(object.metadata.labels['kustomize.toolkit.fluxcd.io/prune'], 'disabled');
      assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
    }
    assert.doesNotMatch(text, /&\w+|\*\w+/, 'no YAML anchors or aliases');
  });

  it('is left out when scaffold.yaml turns it off, and follows the range scaffold.yaml gives', async () => {
    const off = await render((t) => {
      assert.match(t, /\n {4}upgrade: true\n/);
      return t.replace(/\n {4}upgrade: true\n/, '\n    upgrade: false\n');
    });
    assert.equal(off.get(`clusters/c1/${FLUX_OPERATOR_FILE}`), undefined);
    assert.ok(!(parse(off.get('clusters/c1/flux/kustomization.yaml')!) as { resources: string[] }).resources.includes('flux-operator.yaml'));
    const pinned = parseAllDocuments(renderFluxOperatorRelease('>=0.52.0 <0.60.0', 'c1')).map((d) => d.toJS() as Source);
    assert.equal(pinned[0]!.spec.ref?.semver, '>=0.52.0 <0.60.0');
  });
});
