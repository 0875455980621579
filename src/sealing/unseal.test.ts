import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { constants, createCipheriv, createHash, publicEncrypt, type KeyObject } from 'node:crypto';
import { ValidationError } from '../errors.js';
import { scopeLabel, sealValue, type SealingScope } from './seal.js';
import { unsealValue } from './unseal.js';
import { createTestCertificate } from './test-certificate.js';

const controller = createTestCertificate();
const otherController = createTestCertificate();

/** RFC 8017 B.2.1 MGF1 with SHA-256. */
function mgf1(seed: Buffer, length: number): Buffer {
  const blocks: Buffer[] = [];
  for (let counter = 0; blocks.length * 32 < length; counter++) {
    const c = Buffer.alloc(4);
    c.writeUInt32BE(counter);
    blocks.push(createHash('sha256').update(seed).update(c).digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}

const xor = (a: Buffer, b: Buffer): Buffer => Buffer.from(a.map((v, i) => v ^ (b[i] ?? 0)));

/**
 * RFC 8017 7.1.1 RSAES-OAEP-ENCRYPT (SHA-256, MGF1-SHA-256) with a caller-chosen
 * seed, then raw RSA: deterministic, and independent of Node's OAEP.
 */
function oaepEncrypt(publicKey: KeyObject, message: Buffer, label: Buffer, seed: Buffer): Buffer {
  const k = (publicKey.asymmetricKeyDetails?.modulusLength ?? 0) / 8;
  const hLen = 32;
  const lHash = createHash('sha256').update(label).digest();
  const ps = Buffer.alloc(k - message.length - 2 * hLen - 2);
  const db = Buffer.concat([lHash, ps, Buffer.from([1]), message]);
  const maskedDb = xor(db, mgf1(seed, k - hLen - 1));
  const maskedSeed = xor(seed, mgf1(maskedDb, hLen));
  const em = Buffer.concat([Buffer.from([0]), maskedSeed, maskedDb]);
  return publicEncrypt({ key: publicKey, padding: constants.RSA_NO_PADDING }, em);
}

/** Builds a sealed value by hand from fixed parts, the way HybridEncrypt lays them out. */
function fixedVector(opts: { sessionKey: Buffer; seed: Buffer; label: Buffer; aesPart: Buffer }): string {
  const rsa = oaepEncrypt(controller.publicKey, opts.sessionKey, opts.label, opts.seed);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(rsa.length);
  return Buffer.concat([length, rsa, opts.aesPart]).toString('base64');
}

const seed = Buffer.from(Array.from({ length: 32 }, (_, i) => 0xa0 + i));

describe('unsealValue', () => {
  it('decrypts a fixed vector: NIST GCM test case 14 behind a hand-made OAEP header', () => {
    // NIST GCM spec test case 14: K = 0^256, IV = 0^96, P = 0^128.
    const aesPart = Buffer.from('cea7403d4d606b6e074ec5d3baf39d18' + 'd0d1c8a799996bf0265b98b5d48ab919', 'hex');
    const label = scopeLabel('strict', 'database', 'postgresql-credentials');
    const vector = fixedVector({ sessionKey: Buffer.alloc(32), seed, label, aesPart });

    assert.equal(vector, fixedVector({ sessionKey: Buffer.alloc(32), seed, label, aesPart }), 'the vector is deterministic');
    assert.deepEqual(unsealValue({ privateKey: controller.privateKey, label, ciphertext: vector }), Buffer.alloc(16));
  });

  it('decrypts a fixed vector with a non-zero session key and a text value', () => {
    const sessionKey = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
    const plaintext = Buffer.from('correct horse battery staple', 'utf8');
    const cipher = createCipheriv('aes-256-gcm', sessionKey, Buffer.alloc(12));
    const aesPart = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    const label = scopeLabel('namespace-wide', 'tcr', 'ignored');

    const vector = fixedVector({ sessionKey, seed, label, aesPart });

    assert.deepEqual(unsealValue({ privateKey: controller.privateKey, label, ciphertext: vector }), plaintext);
  });

  it('accepts an AES-128 session key, as Go’s aes.NewCipher does', () => {
    const sessionKey = Buffer.alloc(16, 0x42);
    const cipher = createCipheriv('aes-128-gcm', sessionKey, Buffer.alloc(12));
    const aesPart = Buffer.concat([cipher.update('short key'), cipher.final(), cipher.getAuthTag()]);
    const vector = fixedVector({ sessionKey, seed, label: Buffer.alloc(0), aesPart });

    assert.equal(unsealValue({ privateKey: controller.privateKey, label: Buffer.alloc(0), ciphertext: vector }).toString(), 'short key');
  });

  it('round-trips sealValue for every scope', () => {
    const value = Buffer.from('s3cr3t\u0000\u00ff', 'latin1');
    for (const scope of ['strict', 'namespace-wide', 'cluster-wide'] as const) {
      const label = scopeLabel(scope, 'database', 'postgresql-credentials');
      const ciphertext = sealValue({ publicKey: controller.publicKey, label, value });
      assert.deepEqual(unsealValue({ privateKey: controller.privateKey, label, ciphertext }), value, scope);
    }
  });

  it('binds a value to its scope: another name or namespace does not decrypt', () => {
    const seal = (scope: SealingScope): string =>
      sealValue({ publicKey: controller.publicKey, label: scopeLabel(scope, 'database', 'postgresql-credentials'), value: 'pw' });
    const opens = (ciphertext: string, scope: SealingScope, namespace: string, name: string): boolean => {
      try {
        unsealValue({ privateKey: controller.privateKey, label: scopeLabel(scope, namespace, name), ciphertext });
        return true;
      } catch (e) {
        assert.ok(e instanceof ValidationError);
        assert.match(e.message, /does not decrypt: sealed for another key, or for another scope, namespace or name/);
        return false;
      }
    };

    const strict = seal('strict');
    assert.equal(opens(strict, 'strict', 'database', 'postgresql-credentials'), true);
    assert.equal(opens(strict, 'strict', 'database', 'stolen-copy'), false, 'strict: other name');
    assert.equal(opens(strict, 'strict', 'attacker', 'postgresql-credentials'), false, 'strict: other namespace');
    assert.equal(opens(strict, 'cluster-wide', 'database', 'postgresql-credentials'), false, 'strict: relabelled cluster-wide');

    const namespaceWide = seal('namespace-wide');
    assert.equal(opens(namespaceWide, 'namespace-wide', 'database', 'any-other-name'), true, 'namespace-wide: any name');
    assert.equal(opens(namespaceWide, 'namespace-wide', 'attacker', 'postgresql-credentials'), false, 'namespace-wide: other namespace');

    const clusterWide = seal('cluster-wide');
    assert.equal(opens(clusterWide, 'cluster-wide', 'anywhere', 'anything'), true, 'cluster-wide: anywhere');
    assert.equal(opens(clusterWide, 'strict', 'database', 'postgresql-credentials'), false, 'cluster-wide is not strict');
  });

  it('does not decrypt with another controller’s key', () => {
    const label = scopeLabel('strict', 'a', 'b');
    const ciphertext = sealValue({ publicKey: controller.publicKey, label, value: 'x' });
    assert.throws(() => unsealValue({ privateKey: otherController.privateKey, label, ciphertext }), ValidationError);
  });

  it('detects a tampered or truncated value without revealing the plaintext', () => {
    const label = scopeLabel('strict', 'a', 'b');
    const secret = 'hunter2-very-secret';
    const bytes = Buffer.from(sealValue({ publicKey: controller.publicKey, label, value: secret }), 'base64');
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 20] = (flipped[flipped.length - 20] ?? 0) ^ 1;

    const cases: Array<[string, RegExp]> = [
      [flipped.toString('base64'), /failed authentication/],
      [bytes.subarray(0, 2 + 256 + 20).toString('base64'), /failed authentication/],
      [bytes.subarray(0, 2 + 256 + 4).toString('base64'), /too short/],
      [bytes.subarray(0, 100).toString('base64'), /too short: 100 bytes, the header announces 256 bytes/],
      [Buffer.from([1]).toString('base64'), /too short/],
      ['', /not standard padded base64/],
      ['not base64!', /not standard padded base64/],
      ['QUJD', /too short/],
    ];
    for (const [ciphertext, message] of cases) {
      assert.throws(
        () => unsealValue({ privateKey: controller.privateKey, label, ciphertext }),
        (e: unknown) => {
          assert.ok(e instanceof ValidationError);
          assert.match(e.message, message);
          assert.ok(!e.message.includes(secret));
          return true;
        },
      );
    }
  });

  it('checks all 16 bytes of the GCM tag: a change in any one of them fails authentication', () => {
    // Node accepts tags as short as 4 bytes; Go's GCM always checks 16. Handing Node a
    // shorter tag would still catch a flipped ciphertext byte, but not a flipped tag tail.
    const label = scopeLabel('strict', 'a', 'b');
    const bytes = Buffer.from(sealValue({ publicKey: controller.publicKey, label, value: 'tag-checked' }), 'base64');
    for (let i = 1; i <= 16; i++) {
      const altered = Buffer.from(bytes);
      altered[altered.length - i] = (altered[altered.length - i] ?? 0) ^ 0x80;
      assert.throws(
        () => unsealValue({ privateKey: controller.privateKey, label, ciphertext: altered.toString('base64') }),
        (e: unknown) => e instanceof ValidationError && /failed authentication/.test(e.message),
        `tag byte ${16 - i} altered`,
      );
    }
  });

  it('accepts base64 wrapped with CR/LF, as Go’s decoder does', () => {
    const label = scopeLabel('strict', 'a', 'b');
    const ciphertext = sealValue({ publicKey: controller.publicKey, label, value: 'wrapped' });
    const wrapped = (ciphertext.match(/.{1,76}/g) ?? []).join('\r\n');
    assert.equal(unsealValue({ privateKey: controller.privateKey, label, ciphertext: wrapped }).toString(), 'wrapped');
  });
});
