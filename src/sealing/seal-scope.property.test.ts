/**
 * The scope binding, as a property against an independent consumer: SealedSecrets
 * built by our code are opened by a decrypt written here from node:crypto alone
 * (no seal.ts, no unseal.ts), which derives the OAEP label from the object the
 * way the controller does (`EncryptionLabel`: its own annotations, cluster-wide
 * first, then `namespace/name`, `namespace` or nothing). Over generated names,
 * namespaces and scopes, a copy under another namespace or name must stop
 * opening exactly where the scope says it is bound.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { constants, createDecipheriv, privateDecrypt, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { SEALING_SCOPES, type SealingScope } from './seal.js';
import { buildSealedSecret, type SealedSecretObject } from './sealed-secret.js';
import { parseSealingCertificate } from './sealing-certificate.js';
import { createTestCertificate } from './test-certificate.js';

const controller = createTestCertificate();
const certificate = parseSealingCertificate(controller.certificatePem);

/** The controller's label for an object, read from the object (not from what it was built with). */
function controllerLabel(obj: Pick<SealedSecretObject, 'metadata'>): Buffer {
  const annotations = obj.metadata.annotations ?? {};
  if (annotations['sealedsecrets.bitnami.com/cluster-wide'] === 'true') return Buffer.alloc(0);
  if (annotations['sealedsecrets.bitnami.com/namespace-wide'] === 'true') return Buffer.from(obj.metadata.namespace, 'utf8');
  return Buffer.from(`${obj.metadata.namespace}/${obj.metadata.name}`, 'utf8');
}

/** HybridDecrypt from node:crypto: OAEP (SHA-256, the label) for the session key, AES-GCM with a zero nonce and a 16-byte tag. */
function open(privateKey: KeyObject, label: Buffer, base64: string): Buffer {
  const bytes = Buffer.from(base64, 'base64');
  const rsaLength = bytes.readUInt16BE(0);
  const sessionKey = privateDecrypt(
    { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256', oaepLabel: label },
    bytes.subarray(2, 2 + rsaLength),
  );
  const body = bytes.subarray(2 + rsaLength);
  const decipher = createDecipheriv('aes-256-gcm', sessionKey, Buffer.alloc(12), { authTagLength: 16 });
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]);
}

const opens = (obj: Pick<SealedSecretObject, 'metadata'>, value: string): boolean => {
  try {
    open(controller.privateKey, controllerLabel(obj), value);
    return true;
  } catch {
    return false;
  }
};

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
const dnsSubdomain = fc.array(dnsLabel, { minLength: 1, maxLength: 3 }).map((labels) => labels.join('.'));
const scope = fc.constantFrom<SealingScope>(...SEALING_SCOPES);

describe('sealing scope, opened by an independent decrypt', () => {
  it('opens where it was sealed, and under another namespace or name only as far as its scope allows', () => {
    fc.assert(
      fc.property(
        dnsLabel,
        dnsSubdomain,
        dnsLabel,
        dnsSubdomain,
        scope,
        fc.uint8Array({ minLength: 0, maxLength: 64 }),
        (namespace, name, otherNamespace, otherName, sealingScope, raw) => {
          fc.pre(namespace !== otherNamespace && name !== otherName);
          const value = Buffer.from(raw);
          const sealed = buildSealedSecret({ name, namespace, scope: sealingScope, data: { v: value }, certificate });
          const ciphertext = sealed.spec.encryptedData['v'] ?? '';

          assert.deepEqual(open(controller.privateKey, controllerLabel(sealed), ciphertext), value, 'opens where it was sealed');
          // A copy of the object elsewhere keeps its annotations (and so its scope) and changes only where it lives.
          const moved = (ns: string, n: string) => ({ metadata: { ...sealed.metadata, namespace: ns, name: n } });
          const expectOpen = {
            otherName: sealingScope !== 'strict',
            otherNamespace: sealingScope === 'cluster-wide',
            both: sealingScope === 'cluster-wide',
          };
          assert.equal(opens(moved(namespace, otherName), ciphertext), expectOpen.otherName, `${sealingScope}: another name`);
          assert.equal(opens(moved(otherNamespace, name), ciphertext), expectOpen.otherNamespace, `${sealingScope}: another namespace`);
          assert.equal(opens(moved(otherNamespace, otherName), ciphertext), expectOpen.both, `${sealingScope}: both`);
          // The scope the object declares is the one asked for: stripping its annotations (strict) only opens a strict value.
          assert.equal(opens({ metadata: { name, namespace } }, ciphertext), sealingScope === 'strict', `${sealingScope}: read as strict`);
        },
      ),
      { numRuns: 60 },
    );
  });
});
