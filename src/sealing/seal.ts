/**
 * Sealing one value, byte-compatible with the sealed-secrets controller's
 * `HybridEncrypt` (bitnami-labs/sealed-secrets, pkg/crypto/crypto.go) and the
 * label rules of `EncryptionLabel` (pkg/apis/sealedsecrets/v1alpha1/sealedsecret_expansion.go).
 */
import { constants, createCipheriv, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { ValidationError } from '../errors.js';

/**
 * Where a sealed value may be unsealed: `strict` binds it to one namespace and
 * name, `namespace-wide` to a namespace (any name), `cluster-wide` to nothing.
 */
export type SealingScope = 'strict' | 'namespace-wide' | 'cluster-wide';

/** Every scope, in the controller's order; for validating flags and request fields. */
export const SEALING_SCOPES: readonly SealingScope[] = ['strict', 'namespace-wide', 'cluster-wide'];

/**
 * The RSA-OAEP label that binds a sealed value to its scope. The controller
 * derives the same label from the SealedSecret it unseals, so a value sealed for
 * `database/postgresql-credentials` fails to decrypt under any other name.
 *
 * @returns `namespace/name` (strict), `namespace` (namespace-wide) or empty (cluster-wide)
 */
export function scopeLabel(scope: SealingScope, namespace: string, name: string): Buffer {
  switch (scope) {
    case 'cluster-wide':
      return Buffer.alloc(0);
    case 'namespace-wide':
      return Buffer.from(namespace, 'utf8');
    case 'strict':
      return Buffer.from(`${namespace}/${name}`, 'utf8');
    default:
      // Reached only from untyped callers; a silent fallback to strict would hide the typo.
      throw new ValidationError([{ field: 'scope', message: `must be one of ${SEALING_SCOPES.join(', ')}` }]);
  }
}

// crypto.go: sessionKeyBytes = 32, i.e. AES-256; GCM's standard 12-byte nonce, 16-byte tag.
const SESSION_KEY_BYTES = 32;
const GCM_NONCE_BYTES = 12;

/**
 * Seals one value for the controller that owns `publicKey`.
 *
 * Output, base64 (standard alphabet, padded, one line):
 * `uint16be(len(rsa)) || rsa || aesGcm(plaintext) || tag(16)`, where `rsa` is the
 * fresh 32-byte session key under RSA-OAEP with SHA-256 (hash and MGF1) and the
 * scope label, and AES-256-GCM uses that session key with an all-zero nonce,
 * which is safe only because each session key encrypts exactly one value.
 *
 * @param opts.value - the raw secret bytes (a string is taken as UTF-8), not the Secret's base64
 * @param opts.label - from {@link scopeLabel}
 * @returns the value for `spec.encryptedData.<key>`
 * @throws ValidationError when the key is not an RSA key
 */
export function sealValue(opts: { publicKey: KeyObject; label: Buffer; value: Buffer | string }): string {
  const { publicKey, label } = opts;
  if (publicKey.asymmetricKeyType !== 'rsa') {
    throw new ValidationError(`sealing needs an RSA public key, got ${publicKey.asymmetricKeyType ?? publicKey.type}`);
  }
  const plaintext = typeof opts.value === 'string' ? Buffer.from(opts.value, 'utf8') : opts.value;
  const sessionKey = randomBytes(SESSION_KEY_BYTES);
  try {
    // Node's OAEP default hash is SHA-1; Go's rsa.EncryptOAEP(sha256.New(), …) uses
    // SHA-256 for both the label hash and MGF1, which is what oaepHash selects.
    const rsaCiphertext = publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256', oaepLabel: label }, sessionKey);
    const length = Buffer.alloc(2);
    length.writeUInt16BE(rsaCiphertext.length);

    const cipher = createCipheriv('aes-256-gcm', sessionKey, Buffer.alloc(GCM_NONCE_BYTES));
    const aesCiphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    // Go's aead.Seal appends the tag to the ciphertext; Node hands it out separately.
    return Buffer.concat([length, rsaCiphertext, aesCiphertext, cipher.getAuthTag()]).toString('base64');
  } finally {
    sessionKey.fill(0);
  }
}
