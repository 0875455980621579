/**
 * Unseals a SealedSecret the way the Sealed Secrets controller does, written
 * from its source (pkg/apis/sealedsecrets/v1alpha1: SecretScope, EncryptionLabel;
 * pkg/crypto: HybridDecrypt) and sharing no code with the product: the scope
 * from the object's own annotations, the label from its own namespace and name,
 * RSA-OAEP (SHA-256, that label) for the session key, AES-GCM with a zero nonce
 * for the value. A sealing round trip checked with the product's own label
 * function on both sides would pass with that function wrong.
 */
import { constants, createCipheriv, createDecipheriv, privateDecrypt, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';

interface SealedSecretLike {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly annotations?: Readonly<Record<string, string>> };
  readonly spec: { readonly encryptedData: Readonly<Record<string, string>> };
}

/** The label the controller decrypts with: "" cluster-wide, "NS" namespace-wide, "NS/NAME" otherwise. */
export function controllerLabel(object: SealedSecretLike): string {
  const annotations = object.metadata.annotations ?? {};
  if (annotations['sealedsecrets.bitnami.com/cluster-wide'] === 'true') return '';
  if (annotations['sealedsecrets.bitnami.com/namespace-wide'] === 'true') return object.metadata.namespace;
  return `${object.metadata.namespace}/${object.metadata.name}`;
}

/** One value: 2-byte big-endian RSA length, RSA-OAEP ciphertext, then AES-GCM ciphertext with its 16-byte tag. */
export function controllerDecrypt(privateKey: KeyObject, label: string, base64: string): Buffer {
  const bytes = Buffer.from(base64, 'base64');
  const rsaLength = bytes.readUInt16BE(0);
  const sessionKey = privateDecrypt(
    { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256', oaepLabel: Buffer.from(label, 'utf8') },
    bytes.subarray(2, 2 + rsaLength),
  );
  const rest = bytes.subarray(2 + rsaLength);
  const decipher = createDecipheriv(`aes-${sessionKey.length * 8}-gcm` as 'aes-256-gcm', sessionKey, Buffer.alloc(12));
  decipher.setAuthTag(rest.subarray(rest.length - 16));
  return Buffer.concat([decipher.update(rest.subarray(0, rest.length - 16)), decipher.final()]);
}

/** Every value of `object`, as the controller would write them into the Secret. */
export function controllerUnseal(object: SealedSecretLike, privateKey: KeyObject): Record<string, Buffer> {
  const label = controllerLabel(object);
  return Object.fromEntries(Object.entries(object.spec.encryptedData).map(([key, ciphertext]) => [key, controllerDecrypt(privateKey, label, ciphertext)]));
}

/**
 * One value sealed the way the controller's `/v1/rotate` seals it (pkg/crypto HybridEncrypt):
 * a fresh 32-byte session key under RSA-OAEP (SHA-256, `label`), the value under AES-256-GCM with a zero nonce.
 */
export function controllerEncrypt(publicKey: KeyObject, label: string, plaintext: Buffer): string {
  const sessionKey = randomBytes(32);
  const rsa = publicEncrypt(
    { key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256', oaepLabel: Buffer.from(label, 'utf8') },
    sessionKey,
  );
  const cipher = createCipheriv('aes-256-gcm', sessionKey, Buffer.alloc(12));
  const sealed = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(rsa.length);
  return Buffer.concat([length, rsa, sealed]).toString('base64');
}
