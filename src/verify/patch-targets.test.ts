import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import { unmatchedPatchTargets } from './patch-targets.js';

const deployment = (name: string, namespace?: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, ...(namespace !== undefined ? { namespace } : {}) },
});

const REPLICAS = '- op: replace\n  path: /spec/replicas\n  value: 3\n';

/** Findings of the layer `layer/` whose kustomization is `kustomization`, beside `files`, built to `built`. */
async function findingsOf(kustomization: string, built: readonly Record<string, unknown>[], files: Record<string, string> = {}): Promise<string[]> {
  const reader = memoryRepoReader(
    new Map([
      ['layer/kustomization.yaml', kustomization],
      ['layer/replicas.yaml', REPLICAS],
      ...Object.entries(files).map(([k, v]) => [`layer/${k}`, v] as const),
    ]),
  );
  return (await unmatchedPatchTargets(reader, 'layer', built)).map((f) => `${f.file}: ${f.message}`);
}

describe('unmatchedPatchTargets', () => {
  it('names the patch, its target and where it is declared when the target selects nothing', async () => {
    const lines = await findingsOf('patches:\n  - path: replicas.yaml\n    target: {kind: Deployment, name: api, namespace: tcr}\n', [
      deployment('api-server', 'tcr'),
    ]);
    assert.deepEqual(lines, [
      'layer/kustomization.yaml: patch replicas.yaml targets Deployment tcr/api, which layer does not build: kustomize skips a patch whose target selects nothing, without an error',
    ]);
  });

  it('says nothing when the target selects an object, a pattern included', async () => {
    assert.deepEqual(await findingsOf('patches:\n  - path: replicas.yaml\n    target: {kind: Deployment, name: api}\n', [deployment('api', 'tcr')]), []);
    assert.deepEqual(await findingsOf('patches:\n  - path: replicas.yaml\n    target: {name: "api-.*"}\n', [deployment('api-server', 'tcr')]), []);
  });

  it("checks the patches of the components the layer includes, in the component's own file", async () => {
    const lines = await findingsOf('components: [identity]\n', [deployment('api', 'tcr')], {
      'identity/kustomization.yaml':
        'kind: Component\npatches:\n  - path: dns.yaml\n    target: {group: helm.toolkit.fluxcd.io, kind: HelmRelease, name: external-dns}\n',
      'identity/dns.yaml': '- op: add\n  path: /spec/values/txtOwnerId\n  value: eu-1\n',
    });
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^layer\/identity\/kustomization\.yaml: patch dns\.yaml targets HelmRelease \(helm\.toolkit\.fluxcd\.io\) external-dns,/);
  });

  it('selects a generated object by the name its generator gives, before the hash suffix', async () => {
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings-2hm8dc6g5t', namespace: 'tcr' } };
    assert.deepEqual(await findingsOf('patches:\n  - path: replicas.yaml\n    target: {kind: ConfigMap, name: settings}\n', [configMap]), []);
  });

  it('keeps silent where the output does not show what the patches selected, or kustomize would read the selector otherwise', async () => {
    const objects = [deployment('api', 'tcr'), deployment('cluster-wide')];
    const silent = [
      // Renamed or moved after the patches selected: the output's names are not theirs.
      'namePrefix: eu-\npatches:\n  - path: replicas.yaml\n    target: {name: nothing}\n',
      'namespace: other\npatches:\n  - path: replicas.yaml\n    target: {name: nothing}\n',
      'patches:\n  - path: replicas.yaml\n    target: {name: nothing}\n  - patch: "- op: replace\\n  path: /metadata/name\\n  value: x"\n    target: {name: api}\n',
      'patches:\n  - path: replicas.yaml\n    target: {name: nothing}\n  - patch: "$patch: delete\\napiVersion: apps/v1\\nkind: Deployment\\nmetadata: {name: api}"\n',
      // Selectors judged elsewhere, or in Go's syntax alone.
      'patches:\n  - path: replicas.yaml\n    target: {labelSelector: app=nothing}\n',
      'patches:\n  - path: replicas.yaml\n    target: {kind: "(?i)deploy"}\n',
      // Is an object without a namespace in default, or cluster-scoped? kustomize knows its kind.
      'patches:\n  - path: replicas.yaml\n    target: {name: cluster-wide, namespace: default}\n',
      // A patch file that is not there: kustomize reports that itself.
      'patches:\n  - path: missing.yaml\n    target: {name: nothing}\n',
    ];
    for (const kustomization of silent) assert.deepEqual(await findingsOf(kustomization, objects), [], kustomization);
  });

  it('still judges a patch that only tests an object name (a test op writes nothing)', async () => {
    const lines = await findingsOf('patches:\n  - patch: "- op: test\\n  path: /metadata/name\\n  value: api"\n    target: {kind: Deployment, name: web}\n', [
      deployment('api', 'tcr'),
    ]);
    assert.equal(lines.length, 1);
  });
});
