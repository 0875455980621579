/**
 * Golden renders: the tree each shipped platform renders for one cluster, kept
 * in Git beside this file, so a change to the renderer or to a platform shows
 * as a reviewable diff of generated files rather than as a few assertions.
 *
 * The render is made reproducible: a fixed byte source for every generated
 * credential, and the sealed values (whose RSA and AES randomness is the
 * controller's business, not ours) and the certificate's identity written as
 * placeholders. Everything else is byte for byte what a run would push.
 *
 *   UPDATE_GOLDEN=1 node --import tsx --test test/golden/golden-render.test.ts   # write the new renders
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shippedPlatformFiles } from '../../src/git/shipped-platform-files.js';
import { memoryRepoReader } from '../../src/gitops/repo-reader.js';
import { renderCluster } from '../../src/gitops/render-cluster.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const certificate = parseSealingCertificate(createTestCertificate().certificatePem);

/** A counter, not randomness: the same credentials on every render. */
const fixedRandom = (size: number): Uint8Array => new Uint8Array(size).map((_, i) => (i * 7 + 3) % 256);

/** The rendered tree as one text: each file under a header, sealed values and the certificate's identity as placeholders. */
function goldenText(tree: ReadonlyMap<string, string>): string {
  const fingerprint = /\b[0-9a-f]{64}\b/g;
  return [...tree]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([path, text]) => {
      const stable = text
        // encryptedData values: one base64 line each, under encryptedData:.
        .replace(/^(\s+[\w.-]+: )[A-Za-z0-9+/]{300,}={0,2}$/gm, '$1<sealed>')
        .replace(fingerprint, '<certificate-sha256>')
        .replace(/^(\s*(?:notBefore|notAfter|not_before|not_after|sealedAt|sealed_at|valid_until|validUntil): ).*$/gm, '$1<certificate-time>');
      return `=== ${path} ===\n${stable}`;
    })
    .join('\n');
}

const CASES = [
  { platform: 'default', cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' } },
  {
    platform: 'matrix-example',
    cluster: { name: 'env-aws', domain: 'env-aws.mojaloop.example.net', region: 'eu-west-1', role: 'env', infra_provider: 'aws', dns_provider: 'route53' },
  },
] as const;

describe('golden renders of the shipped platforms', () => {
  for (const { platform, cluster } of CASES) {
    it(`${platform}: ${cluster.name} renders as test/golden/${platform}.txt says`, async () => {
      const { tree } = await renderCluster(memoryRepoReader(await shippedPlatformFiles(platform)), {
        cluster,
        pass: 'all',
        certificate,
        random: fixedRandom,
        generatorVersion: 'golden',
      });
      const actual = goldenText(tree);
      // Rendering twice gives the same text: the placeholders cover every source of randomness.
      const again = goldenText(
        (
          await renderCluster(memoryRepoReader(await shippedPlatformFiles(platform)), {
            cluster,
            pass: 'all',
            certificate,
            random: fixedRandom,
            generatorVersion: 'golden',
          })
        ).tree,
      );
      assert.equal(again, actual, 'the render is reproducible');
      const file = join(HERE, `${platform}.txt`);
      if (process.env['UPDATE_GOLDEN'] === '1') await writeFile(file, actual);
      const expected = await readFile(file, 'utf8').catch(() => assert.fail(`${file} is missing: run with UPDATE_GOLDEN=1 and review the result`));
      assert.equal(actual, expected, `the render changed: run with UPDATE_GOLDEN=1, then review and commit the diff of test/golden/${platform}.txt`);
    });
  }
});
