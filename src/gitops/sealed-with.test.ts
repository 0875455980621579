import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sealedWithOtherCertificate } from './sealed-with.js';

const CURRENT = { fingerprint: 'ab'.repeat(32) };
const OLD = `sha256:${'cd'.repeat(32)}`;

function sealedSecret(name: string, sealedWith?: string): string {
  const annotations = sealedWith ? `\n  annotations:\n    gitops-scaffolder.io/sealed-with: "${sealedWith}"` : '';
  return `apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: ${name}\n  namespace: tcr${annotations}\nspec:\n  encryptedData: {k: AgB}\n`;
}

describe('sealedWithOtherCertificate', () => {
  it('lists the SealedSecrets sealed with another certificate or with none recorded, and nothing else', () => {
    const files = new Map([
      ['apps/sealed/b.yaml', sealedSecret('b', OLD)],
      ['apps/sealed/a.yaml', sealedSecret('a', `SHA256:${'AB'.repeat(32)}`)],
      ['apps/sealed/c.yaml', `${sealedSecret('c2')}---\n${sealedSecret('c1', `sha256:${'ab'.repeat(32)}`)}`],
      ['apps/sealed/kustomization.yaml', 'resources: [a.yaml]\n'],
      ['apps/broken.yaml', 'kind: [unclosed\n'],
    ]);
    assert.deepEqual(sealedWithOtherCertificate(files, CURRENT), [
      { file: 'apps/sealed/b.yaml', namespace: 'tcr', name: 'b', sealedWith: OLD },
      { file: 'apps/sealed/c.yaml', namespace: 'tcr', name: 'c2' },
    ]);
  });
});
