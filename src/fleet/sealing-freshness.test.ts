import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import { readClusterSealedSecrets, sealingFreshness, sealingView } from './sealing-freshness.js';

const NOW = 'ab'.repeat(32);
const OLD = `sha256:${'cd'.repeat(32)}`;

function sealedSecret(name: string, sealedWith?: string): string {
  const annotations = sealedWith ? `\n  annotations:\n    gitops-scaffolder.io/sealed-with: "${sealedWith}"` : '';
  return `apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: ${name}\n  namespace: tcr${annotations}\nspec:\n  encryptedData: {k: AgB}\n`;
}

const records = [
  { file: 'clusters/eu-1/apps/a.yaml', namespace: 'tcr', name: 'a', sealedWith: `sha256:${NOW}` },
  { file: 'clusters/eu-1/apps/b.yaml', namespace: 'tcr', name: 'b', sealedWith: OLD },
  { file: 'clusters/eu-1/apps/c.yaml', namespace: 'tcr', name: 'c' },
];

describe('sealingFreshness', () => {
  it('splits SealedSecrets into sealed with another certificate, recording none, and sealed with the current one', () => {
    const split = sealingFreshness(records, NOW);
    assert.deepEqual(
      split.stale.map((r) => r.name),
      ['b'],
    );
    assert.deepEqual(
      split.unknown.map((r) => r.name),
      ['c'],
    );
    assert.deepEqual(
      split.current.map((r) => r.name),
      ['a'],
    );
  });

  it('takes the fingerprint as hex or as the annotation value, in either case', () => {
    for (const given of [NOW.toUpperCase(), `sha256:${NOW}`, `SHA256:${NOW.toUpperCase()}`]) {
      assert.deepEqual(
        sealingFreshness(records, given).current.map((r) => r.name),
        ['a'],
        given,
      );
    }
  });

  it('calls everything with a recorded fingerprint stale after the controller renewed its key', () => {
    const split = sealingFreshness(records, 'ef'.repeat(32));
    assert.deepEqual(
      split.stale.map((r) => r.name),
      ['a', 'b'],
    );
    assert.equal(split.current.length, 0);
  });

  it('has nothing to say about a cluster without SealedSecrets', () => {
    assert.deepEqual(sealingFreshness([], NOW), { stale: [], unknown: [], current: [] });
  });
});

describe('sealingView', () => {
  it('names the stale ones with the fingerprint they record, and the controller certificate compared with', () => {
    const view = sealingView(records, { fingerprint: NOW, notAfter: new Date('2036-01-01T00:00:00Z') });
    assert.deepEqual(view, {
      controller_certificate: { fingerprint: `sha256:${NOW}`, not_after: '2036-01-01T00:00:00.000Z' },
      sealed_secrets: 3,
      stale: [{ path: 'clusters/eu-1/apps/b.yaml', namespace: 'tcr', name: 'b', sealed_with: OLD }],
      unknown: [{ path: 'clusters/eu-1/apps/c.yaml', namespace: 'tcr', name: 'c' }],
      current_count: 1,
    });
  });

  it('without the certificate, says why and names only the ones that record none', () => {
    const view = sealingView(records, undefined, 'no kubeconfig');
    assert.deepEqual(view, {
      controller_certificate: null,
      reason: 'no kubeconfig',
      sealed_secrets: 3,
      stale: [],
      unknown: [{ path: 'clusters/eu-1/apps/c.yaml', namespace: 'tcr', name: 'c' }],
      current_count: null,
    });
  });
});

describe('readClusterSealedSecrets', () => {
  it('reads the SealedSecrets of one cluster only, from its YAML files', async () => {
    const reader = memoryRepoReader(
      new Map([
        ['clusters/eu-1/apps/sealed/b.yaml', sealedSecret('b', OLD)],
        ['clusters/eu-1/apps/sealed/a.yaml', sealedSecret('a')],
        ['clusters/eu-1/apps/sealed/kustomization.yaml', 'resources: [a.yaml, b.yaml]\n'],
        ['clusters/eu-1/README.md', 'kind: SealedSecret\n'],
        ['clusters/eu-10/apps/sealed/x.yaml', sealedSecret('x', OLD)],
      ]),
    );
    assert.deepEqual(await readClusterSealedSecrets(reader, 'eu-1'), [
      { file: 'clusters/eu-1/apps/sealed/a.yaml', namespace: 'tcr', name: 'a' },
      { file: 'clusters/eu-1/apps/sealed/b.yaml', namespace: 'tcr', name: 'b', sealedWith: OLD },
    ]);
  });
});
