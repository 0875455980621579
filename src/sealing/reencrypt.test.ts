import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { stringify } from 'yaml';
import { ValidationError } from '../errors.js';
import { SEALING_SCOPES, scopeLabel } from './seal.js';
import { buildSealedSecret } from './sealed-secret.js';
import { parseSealingCertificate } from './sealing-certificate.js';
import { createTestCertificate } from './test-certificate.js';
import { parseRecoveryKeys, reencryptedData } from './reencrypt.js';
import { unsealValue } from './unseal.js';

const oldKey = createTestCertificate();
const newKey = createTestCertificate();
const oldCert = parseSealingCertificate(oldKey.certificatePem);
const newCert = parseSealingCertificate(newKey.certificatePem);
const pkcs8 = (key: typeof oldKey.privateKey): string => key.export({ type: 'pkcs8', format: 'pem' }) as string;

describe('reencryptedData', () => {
  for (const scope of SEALING_SCOPES) {
    it(`re-seals a ${scope} value for the new key under the same scope label, and no other`, () => {
      const sealed = buildSealedSecret({ name: 'db', namespace: 'database', scope, data: { password: 's3cret' }, certificate: oldCert });
      const out = reencryptedData(sealed, [newKey.privateKey, oldKey.privateKey], newCert);
      const label = scopeLabel(scope, 'database', 'db');
      assert.equal(unsealValue({ privateKey: newKey.privateKey, label, ciphertext: out['password'] ?? '' }).toString(), 's3cret');
      for (const other of SEALING_SCOPES.filter((s) => s !== scope)) {
        assert.throws(
          () => unsealValue({ privateKey: newKey.privateKey, label: scopeLabel(other, 'database', 'db'), ciphertext: out['password'] ?? '' }),
          ValidationError,
          `a ${scope} value does not open as ${other}`,
        );
      }
    });
  }

  it('names the SealedSecret and key, never the value, when no given key opens it', () => {
    const sealed = buildSealedSecret({ name: 'db', namespace: 'database', scope: 'strict', data: { password: 's3cret' }, certificate: oldCert });
    assert.throws(
      () => reencryptedData(sealed, [newKey.privateKey], newCert),
      (e: unknown) =>
        e instanceof ValidationError &&
        e.issues[0]?.field === 'recovery-private-key' &&
        /database\/db key password/.test(e.message) &&
        !e.message.includes('s3cret'),
    );
  });
});

describe('parseRecoveryKeys', () => {
  it('reads PEM private keys and the controller key backup (a List of Secrets with data."tls.key")', () => {
    assert.equal(parseRecoveryKeys(pkcs8(oldKey.privateKey) + pkcs8(newKey.privateKey)).length, 2);
    const backup = stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [oldKey, newKey].map((k) => ({ apiVersion: 'v1', kind: 'Secret', data: { 'tls.key': Buffer.from(pkcs8(k.privateKey)).toString('base64') } })),
    });
    assert.equal(parseRecoveryKeys(backup).length, 2);
  });

  it('refuses a file whose only key is not RSA, naming the field and not echoing the file', () => {
    const ec = pkcs8(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey);
    assert.throws(
      () => parseRecoveryKeys(ec, '--recovery-private-key'),
      (e: unknown) =>
        e instanceof ValidationError &&
        e.issues[0]?.field === '--recovery-private-key' &&
        /holds no RSA private key/.test(e.message) &&
        !e.message.includes('PRIVATE KEY'),
    );
    // Beside an RSA key, the EC one is left out rather than tried.
    assert.equal(parseRecoveryKeys(ec + pkcs8(oldKey.privateKey)).length, 1);
  });

  it('refuses text that holds no key at all', () => {
    assert.throws(() => parseRecoveryKeys('just: text\n'), ValidationError);
  });
});
