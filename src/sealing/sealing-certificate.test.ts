import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { ValidationError } from '../errors.js';
import { parseSealingCertificate } from './sealing-certificate.js';
import { createTestCertificate } from './test-certificate.js';

const spki = (key: { export(o: { type: 'spki'; format: 'der' }): Buffer }): string => key.export({ type: 'spki', format: 'der' }).toString('hex');

// The tests with fixed dates check them at a fixed time, so they pass in any year.
const AT = new Date('2026-01-15T00:00:00Z');

describe('parseSealingCertificate', () => {
  it('reads the key, validity and SHA-256 fingerprint of a certificate', () => {
    const notBefore = new Date('2024-03-01T12:00:00Z');
    const notAfter = new Date('2034-02-27T12:00:00Z');
    const cert = createTestCertificate({ notBefore, notAfter });

    const parsed = parseSealingCertificate(cert.certificatePem, 'certificate', AT);

    assert.equal(spki(parsed.publicKey), spki(cert.publicKey));
    assert.deepEqual(parsed.notBefore, notBefore);
    assert.deepEqual(parsed.notAfter, notAfter);
    const expected = new X509Certificate(cert.certificatePem).fingerprint256.replaceAll(':', '').toLowerCase();
    assert.equal(parsed.fingerprint, expected);
    assert.match(parsed.fingerprint, /^[0-9a-f]{64}$/);
    // The test helper's certificate is a real one: openssl reads the same dates.
    const dates = execFileSync('openssl', ['x509', '-noout', '-startdate', '-enddate'], { input: cert.certificatePem, timeout: 60_000 }).toString();
    assert.match(dates, /notBefore=Mar {2}1 12:00:00 2024 GMT\nnotAfter=Feb 27 12:00:00 2034 GMT/);
  });

  it('reads a certificate made by openssl, with the fingerprint openssl reports', () => {
    // Key and certificate both on stdout: no temporary files to clean up.
    const out = execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', '-', '-out', '-', '-subj', '/O=sealed-secret/CN=sealed-secret', '-days', '3650'],
      { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 },
    ).toString();
    const keyPem = /-----BEGIN PRIVATE KEY-----[\s\S]*?-----END PRIVATE KEY-----/.exec(out)?.[0] ?? '';
    const certPem = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(out)?.[0] ?? '';

    const parsed = parseSealingCertificate(certPem);

    assert.equal(spki(parsed.publicKey), spki(createPublicKey(createPrivateKey(keyPem))));
    const reported = execFileSync('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], { input: certPem, timeout: 60_000 })
      .toString()
      .replace(/^.*=/, '')
      .trim();
    assert.equal(parsed.fingerprint, reported.replaceAll(':', '').toLowerCase());
    assert.ok(parsed.notAfter.getTime() > parsed.notBefore.getTime());
  });

  it('picks the newest certificate when the PEM holds several, whatever their order', () => {
    const old = createTestCertificate({ notBefore: new Date('2020-01-01T00:00:00Z') });
    const newest = createTestCertificate({ notBefore: new Date('2025-06-01T00:00:00Z') });
    const middle = createTestCertificate({ notBefore: new Date('2023-01-01T00:00:00Z') });
    // A private key block in the bundle (as `kubectl get secret … -o yaml` dumps give) is ignored.
    const keyPem = old.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const bundle = [middle.certificatePem, keyPem, newest.certificatePem, old.certificatePem].join('');

    const parsed = parseSealingCertificate(bundle, 'certificate', AT);

    assert.equal(spki(parsed.publicKey), spki(newest.publicKey));
    assert.deepEqual(parsed.notBefore, new Date('2025-06-01T00:00:00Z'));
    assert.equal(parsed.fingerprint, parseSealingCertificate(newest.certificatePem, 'certificate', AT).fingerprint);
  });

  it('accepts CRLF line endings and, on equal notBefore, takes the later certificate', () => {
    const notBefore = new Date('2024-01-01T00:00:00Z');
    const first = createTestCertificate({ notBefore });
    const second = createTestCertificate({ notBefore });
    const crlf = (first.certificatePem + second.certificatePem).replaceAll('\n', '\r\n');

    assert.equal(spki(parseSealingCertificate(crlf, 'certificate', AT).publicKey), spki(second.publicKey));
  });

  it('reads dates on either side of 2050 (UTCTime and GeneralizedTime)', () => {
    const notBefore = new Date('1999-12-31T23:59:59Z');
    const notAfter = new Date('2060-07-04T01:02:03Z');
    const parsed = parseSealingCertificate(createTestCertificate({ notBefore, notAfter }).certificatePem, 'certificate', AT);
    assert.deepEqual([parsed.notBefore, parsed.notAfter], [notBefore, notAfter]);
  });

  it('rejects text without a certificate, naming the field', () => {
    for (const text of ['', 'hello', generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString()]) {
      assert.throws(
        () => parseSealingCertificate(text, 'sealing.certificate'),
        (e: unknown) => e instanceof ValidationError && e.issues[0]?.field === 'sealing.certificate' && /no PEM certificate found/.test(e.message),
      );
    }
  });

  it('rejects a damaged certificate block', () => {
    const pem = createTestCertificate().certificatePem;
    const lines = pem.split('\n');
    lines[3] = 'A'.repeat(64);
    assert.throws(
      () => parseSealingCertificate(lines.join('\n')),
      (e: unknown) => e instanceof ValidationError && /certificate #1 is not a valid X\.509 certificate/.test(e.message),
    );
  });

  it('rejects a certificate whose key is not RSA, even beside an RSA one', () => {
    const ec = createTestCertificate({ keyType: 'ec' });
    const rsa = createTestCertificate();
    assert.throws(
      () => parseSealingCertificate(rsa.certificatePem + ec.certificatePem),
      (e: unknown) => e instanceof ValidationError && /certificate #2 has a key of type ec; .*RSA/.test(e.message),
    );
  });

  it('rejects an RSA key below 2048 bits', () => {
    const weak = createTestCertificate({ bits: 1024 });
    assert.throws(
      () => parseSealingCertificate(weak.certificatePem),
      (e: unknown) => e instanceof ValidationError && /1024-bit RSA key; at least 2048/.test(e.message),
    );
  });

  describe('validity window', () => {
    const notBefore = new Date('2025-01-01T00:00:00Z');
    const notAfter = new Date('2026-01-01T00:00:00Z');
    const cert = createTestCertificate({ notBefore, notAfter });
    const isIssue = (pattern: RegExp) => isIssueAt('sealing.certificate', pattern);
    const isIssueAt = (field: string, pattern: RegExp) => (e: unknown) =>
      e instanceof ValidationError &&
      e.issues.length === 1 &&
      e.issues[0]?.field === field &&
      pattern.test(e.issues[0].message) &&
      e.message.startsWith(`${field}: certificate #1 `);

    it('accepts a certificate inside its window, up to and including notAfter', () => {
      for (const at of [notBefore, new Date('2025-06-01T00:00:00Z'), notAfter]) {
        assert.deepEqual(parseSealingCertificate(cert.certificatePem, 'sealing.certificate', at).notAfter, notAfter);
      }
    });

    it('refuses an expired certificate, giving its validity window', () => {
      assert.throws(
        () => parseSealingCertificate(cert.certificatePem, 'sealing.certificate', new Date('2026-01-01T00:00:01Z')),
        isIssue(/^certificate #1 expired on 2026-01-01T00:00:00Z \(valid from 2025-01-01T00:00:00Z to 2026-01-01T00:00:00Z; now is 2026-01-01T00:00:01Z\)/),
      );
    });

    it('refuses a certificate that is not valid yet, allowing five minutes of clock skew', () => {
      assert.throws(
        () => parseSealingCertificate(cert.certificatePem, 'sealing.certificate', new Date('2024-12-31T23:54:59Z')),
        isIssue(/^certificate #1 is not valid yet \(valid from 2025-01-01T00:00:00Z to 2026-01-01T00:00:00Z; now is 2024-12-31T23:54:59Z\)$/),
      );
      // A controller that made its key a moment ago on a clock slightly ahead of ours.
      assert.ok(parseSealingCertificate(cert.certificatePem, 'sealing.certificate', new Date('2024-12-31T23:55:00Z')));
    });

    it('checks the clock at call time by default', () => {
      const expired = createTestCertificate({ notBefore: new Date(Date.now() - 2 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) });
      assert.throws(() => parseSealingCertificate(expired.certificatePem), isIssueAt('certificate', /expired on/));
      const future = createTestCertificate({ notBefore: new Date(Date.now() + 86_400_000) });
      assert.throws(() => parseSealingCertificate(future.certificatePem), isIssueAt('certificate', /is not valid yet/));
      // The test helper's default certificate is valid now and for ten years.
      const fresh = createTestCertificate();
      assert.ok(parseSealingCertificate(fresh.certificatePem));
      assert.ok(parseSealingCertificate(fresh.certificatePem, 'certificate', new Date(Date.now() + 3649 * 86_400_000)));
    });

    it('checks the certificate it seals with; older ones in a bundle may have expired', () => {
      const older = createTestCertificate({ notBefore: new Date('2014-01-01T00:00:00Z'), notAfter: new Date('2015-01-01T00:00:00Z') });
      const at = new Date('2025-03-01T00:00:00Z');
      const parsed = parseSealingCertificate(older.certificatePem + cert.certificatePem, 'sealing.certificate', at);
      assert.equal(spki(parsed.publicKey), spki(cert.publicKey));
      // The newest one (certificate #2 here) out of its window is named by position.
      assert.throws(
        () => parseSealingCertificate(older.certificatePem + cert.certificatePem, 'sealing.certificate', new Date('2027-01-01T00:00:00Z')),
        (e: unknown) => e instanceof ValidationError && /^sealing\.certificate: certificate #2 expired on 2026-01-01T00:00:00Z/.test(e.message),
      );
    });
  });
});
