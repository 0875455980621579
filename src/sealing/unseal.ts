/**
 * Unsealing one value: the controller's `HybridDecrypt`
 * (bitnami-labs/sealed-secrets, pkg/crypto/crypto.go). The product never holds
 * a controller's private key; this exists so tests and tooling can prove that
 * what we seal is what the controller would read.
 */
import { constants, createDecipheriv, privateDecrypt, type KeyObject } from 'node:crypto';
import { ValidationError } from '../errors.js';

const GCM_NONCE_BYTES = 12;
const GCM_TAG_BYTES = 16;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

// Go's aes.NewCipher accepts 16-, 24- and 32-byte keys, so the controller would
// unseal a value whose session key has any of these sizes; so do we.
const GCM_BY_KEY_BYTES: Readonly<Record<number, 'aes-128-gcm' | 'aes-192-gcm' | 'aes-256-gcm'>> = {
  16: 'aes-128-gcm',
  24: 'aes-192-gcm',
  32: 'aes-256-gcm',
};

/**
 * Decrypts one sealed value with the controller's private key.
 *
 * Error messages describe the framing only; they never contain plaintext or
 * key material.
 *
 * @param opts.label - the scope label the value was sealed with (see `scopeLabel`)
 * @param opts.ciphertext - one `spec.encryptedData` value (base64)
 * @returns the raw secret bytes
 * @throws ValidationError when the input is not base64, is too short, or does not
 *   decrypt (wrong key, or a label of another scope, namespace or name)
 */
export function unsealValue(opts: { privateKey: KeyObject; label: Buffer; ciphertext: string }): Buffer {
  const { privateKey, label } = opts;
  // Go's base64.StdEncoding skips CR and LF, so a value wrapped by an editor still decodes there.
  const text = typeof opts.ciphertext === 'string' ? opts.ciphertext.replace(/[\r\n]/g, '') : '';
  if (text === '' || !BASE64.test(text)) {
    throw new ValidationError('sealed value is not standard padded base64');
  }
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length < 2) throw new ValidationError('sealed value is too short');
  const rsaLength = bytes.readUInt16BE(0);
  if (bytes.length < 2 + rsaLength + GCM_TAG_BYTES) {
    throw new ValidationError(
      `sealed value is too short: ${bytes.length} bytes, the header announces ${rsaLength} bytes of RSA ciphertext plus a ${GCM_TAG_BYTES}-byte tag`,
    );
  }
  const rsaCiphertext = bytes.subarray(2, 2 + rsaLength);
  const aesCiphertext = bytes.subarray(2 + rsaLength, bytes.length - GCM_TAG_BYTES);
  const tag = bytes.subarray(bytes.length - GCM_TAG_BYTES);

  let sessionKey: Buffer;
  try {
    sessionKey = privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256', oaepLabel: label }, rsaCiphertext);
  } catch (cause) {
    // OpenSSL's reason is deliberately uniform across padding failures; so is ours.
    throw new ValidationError('sealed value does not decrypt: sealed for another key, or for another scope, namespace or name', { cause });
  }
  try {
    const algorithm = GCM_BY_KEY_BYTES[sessionKey.length];
    if (!algorithm) throw new ValidationError(`sealed value carries a ${sessionKey.length}-byte session key; expected 16, 24 or 32`);
    const decipher = createDecipheriv(algorithm, sessionKey, Buffer.alloc(GCM_NONCE_BYTES));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(aesCiphertext), decipher.final()]);
    } catch (cause) {
      throw new ValidationError('sealed value failed authentication: the ciphertext was altered or truncated', { cause });
    }
  } finally {
    sessionKey.fill(0);
  }
}
