/**
 * The certificate facts the rotate confirmation names, computed the way the
 * browser does (WebCrypto, a DER walk): the same fingerprint and validity as
 * Node's X509Certificate and the service's sealed-with form, and null, never a
 * throw, for anything that is not a certificate.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fc from 'fast-check';
import { sealedWithOf } from '../../src/gitops/sealed-with.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { certificateFacts, firstCertificateDer, validityOf } from '../../ui/src/certificate-facts.js';

describe('certificate facts in the browser', () => {
  it('names the fingerprint and validity the service and Node read from the same PEM', async () => {
    for (let i = 0; i < 3; i++) {
      const pem = createTestCertificate().certificatePem;
      const facts = await certificateFacts(`some text before\n${pem}`);
      assert.ok(facts !== null);
      const x509 = new X509Certificate(pem);
      assert.equal(facts.fingerprint, `sha256:${x509.fingerprint256.replace(/:/g, '').toLowerCase()}`);
      assert.equal(facts.fingerprint, sealedWithOf(parseSealingCertificate(pem)));
      assert.equal(facts.notBefore.getTime(), new Date(x509.validFrom).getTime());
      assert.equal(facts.notAfter.getTime(), new Date(x509.validTo).getTime());
    }
  });

  it('gives null for text that is no certificate, and never throws on hostile bytes', async () => {
    assert.equal(await certificateFacts(''), null);
    assert.equal(await certificateFacts('-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----'), null);
    const der = firstCertificateDer(createTestCertificate().certificatePem)!;
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 600 }), fc.nat(der.length - 1), fc.uint8Array({ minLength: 1, maxLength: 8 }), async (noise, at, patch) => {
        const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
        const pem = (bytes: Uint8Array) => `-----BEGIN CERTIFICATE-----\n${b64(bytes)}\n-----END CERTIFICATE-----\n`;
        const facts = await certificateFacts(pem(noise));
        assert.ok(facts === null || facts.notBefore instanceof Date);
        // A real certificate with a few bytes overwritten: a validity read, or null.
        const mutated = Uint8Array.from(der);
        mutated.set(patch.subarray(0, der.length - at), at);
        const validity = validityOf(mutated);
        assert.ok(validity === null || (!Number.isNaN(validity.notBefore.getTime()) && !Number.isNaN(validity.notAfter.getTime())));
      }),
      { numRuns: 300 },
    );
  });
});
