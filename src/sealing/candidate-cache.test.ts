import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
import { ContentCache } from './candidate-cache.js';
import { parseSealingCertificate, parsedCertificates } from './sealing-certificate.js';
import { createTestCertificate } from './test-certificate.js';

describe('parsed certificate cache', () => {
  it("parses a certificate once, and still checks its validity against every caller's clock", () => {
    const { certificatePem } = createTestCertificate({ notBefore: new Date('2030-01-01T00:00:00Z'), notAfter: new Date('2031-01-01T00:00:00Z') });
    const before = parsedCertificates.stats;
    const first = parseSealingCertificate(certificatePem, 'certificate', new Date('2030-06-01T00:00:00Z'));
    const second = parseSealingCertificate(certificatePem, 'sealing.certificate', new Date('2030-07-01T00:00:00Z'));
    assert.equal(second.fingerprint, first.fingerprint);
    assert.equal(parsedCertificates.stats.misses, before.misses + 1);
    assert.equal(parsedCertificates.stats.hits, before.hits + 1);
    // Kept, yet expired for a later clock, and not valid yet for an earlier one.
    assert.throws(
      () => parseSealingCertificate(certificatePem, 'certificate', new Date('2032-01-01T00:00:00Z')),
      (error: unknown) => error instanceof ValidationError && /expired/.test(JSON.stringify(error)),
    );
    assert.throws(
      () => parseSealingCertificate(certificatePem, 'certificate', new Date('2029-01-01T00:00:00Z')),
      (error: unknown) => error instanceof ValidationError && /not valid yet/.test(JSON.stringify(error)),
    );
  });

  it("keeps no refusal: a malformed certificate is refused every time, naming the caller's field", () => {
    const bad = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----';
    const before = parsedCertificates.stats.size;
    for (const field of ['one', 'two']) {
      assert.throws(
        () => parseSealingCertificate(bad, field),
        (error: unknown) => error instanceof ValidationError && error.message.startsWith(`${field}:`),
      );
    }
    assert.equal(parsedCertificates.stats.size, before);
  });

  it('holds at most its limit, dropping the least recently used', () => {
    const cache = new ContentCache<number>(2);
    let made = 0;
    const get = (text: string) => cache.get(text, () => ++made);
    assert.equal(get('a'), 1);
    assert.equal(get('b'), 2);
    assert.equal(get('a'), 1); // a is now the most recent
    assert.equal(get('c'), 3); // b goes
    assert.equal(cache.stats.size, 2);
    assert.equal(get('a'), 1);
    assert.equal(get('b'), 4);
  });
});
