import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { constants, createDecipheriv, createHash, generateKeyPairSync, privateDecrypt, type KeyObject } from 'node:crypto';
import { ValidationError } from '../errors.js';
import { scopeLabel, sealValue } from './seal.js';
import { createTestCertificate } from './test-certificate.js';

// The controller's default key size: framing is checked against it.
const controllerKey = createTestCertificate({ bits: 4096 });

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
 * An independent HybridDecrypt: raw RSA, then RFC 8017 7.1.2 EME-OAEP decoding
 * written out by hand, then AES-GCM with a zero nonce. It shares no code with
 * unseal.ts, so agreement means the bytes follow the spec, not just each other.
 */
function handDecrypt(privateKey: KeyObject, label: Buffer, base64: string, labelHash = 'sha256'): Buffer {
  const bytes = Buffer.from(base64, 'base64');
  const rsaLength = bytes.readUInt16BE(0);
  const em = privateDecrypt({ key: privateKey, padding: constants.RSA_NO_PADDING }, bytes.subarray(2, 2 + rsaLength));
  const hLen = 32;
  assert.equal(em[0], 0, 'EM starts with 0x00');
  const maskedSeed = em.subarray(1, 1 + hLen);
  const maskedDb = em.subarray(1 + hLen);
  const seed = xor(maskedSeed, mgf1(maskedDb, hLen));
  const db = xor(maskedDb, mgf1(seed, maskedDb.length));
  const lHash = createHash(labelHash).update(label).digest().subarray(0, hLen);
  if (!db.subarray(0, hLen).equals(lHash)) throw new Error('label hash mismatch');
  const separator = db.indexOf(1, hLen);
  assert.ok(
    db.subarray(hLen, separator).every((b) => b === 0),
    'PS is zeros',
  );
  const sessionKey = db.subarray(separator + 1);
  assert.equal(sessionKey.length, 32, 'a 32-byte session key');

  const body = bytes.subarray(2 + rsaLength);
  const decipher = createDecipheriv('aes-256-gcm', sessionKey, Buffer.alloc(12));
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]);
}

describe('scopeLabel', () => {
  it('is namespace/name for strict, the namespace for namespace-wide, empty for cluster-wide', () => {
    assert.equal(scopeLabel('strict', 'database', 'postgresql-credentials').toString(), 'database/postgresql-credentials');
    assert.equal(scopeLabel('namespace-wide', 'database', 'postgresql-credentials').toString(), 'database');
    assert.equal(scopeLabel('cluster-wide', 'database', 'postgresql-credentials').length, 0);
  });

  it('rejects an unknown scope instead of falling back to strict', () => {
    assert.throws(() => scopeLabel('global' as never, 'a', 'b'), ValidationError);
  });
});

describe('sealValue', () => {
  const label = scopeLabel('strict', 'database', 'postgresql-credentials');

  it('frames the value as 2-byte length || RSA ciphertext || AES-GCM ciphertext || 16-byte tag, on one base64 line', () => {
    const modulusBytes = 4096 / 8;
    for (const size of [0, 1, 31, 1000, 70_000]) {
      const sealed = sealValue({ publicKey: controllerKey.publicKey, label, value: Buffer.alloc(size, 7) });

      assert.match(sealed, /^[A-Za-z0-9+/]+={0,2}$/, 'one line of standard base64');
      const bytes = Buffer.from(sealed, 'base64');
      assert.equal(bytes.readUInt16BE(0), modulusBytes, 'length prefix equals the modulus size');
      assert.equal(bytes.length, 2 + modulusBytes + size + 16);
    }
  });

  it('decrypts with an independent RFC 8017 decoder, for every scope label', () => {
    const value = Buffer.from([0, 1, 2, 255, 254, 10, 13]);
    for (const scope of ['strict', 'namespace-wide', 'cluster-wide'] as const) {
      const l = scopeLabel(scope, 'database', 'postgresql-credentials');
      const sealed = sealValue({ publicKey: controllerKey.publicKey, label: l, value });
      assert.deepEqual(handDecrypt(controllerKey.privateKey, l, sealed), value, scope);
    }
  });

  it('binds the label with SHA-256, not Node’s SHA-1 default', () => {
    const sealed = sealValue({ publicKey: controllerKey.publicKey, label, value: 's3cret' });
    assert.throws(() => handDecrypt(controllerKey.privateKey, label, sealed, 'sha1'), /label hash mismatch/);
    assert.throws(() => handDecrypt(controllerKey.privateKey, Buffer.from('database/other'), sealed), /label hash mismatch/);
  });

  it('seals a string as its UTF-8 bytes', () => {
    const sealed = sealValue({ publicKey: controllerKey.publicKey, label, value: 'pässwörd ✓' });
    assert.deepEqual(handDecrypt(controllerKey.privateKey, label, sealed), Buffer.from('pässwörd ✓', 'utf8'));
  });

  it('uses a fresh session key each time: the same value never seals the same way twice', () => {
    const a = sealValue({ publicKey: controllerKey.publicKey, label, value: 'same' });
    const b = sealValue({ publicKey: controllerKey.publicKey, label, value: 'same' });
    assert.notEqual(a, b);
    const aesPart = (s: string): string =>
      Buffer.from(s, 'base64')
        .subarray(2 + 512)
        .toString('hex');
    assert.notEqual(aesPart(a), aesPart(b), 'the AES part differs too, so the zero nonce is never reused with one key');
  });

  it('refuses a key that is not RSA', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    assert.throws(
      () => sealValue({ publicKey, label, value: 'x' }),
      (e: unknown) => e instanceof ValidationError && /RSA public key, got ec/.test(e.message),
    );
  });
});
