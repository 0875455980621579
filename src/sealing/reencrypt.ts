/**
 * Re-encrypting a SealedSecret for a new sealing key with the SAME values:
 * what `kubeseal --re-encrypt` asks the controller to do (`/v1/rotate`), done
 * offline with the old private key, as `kubeseal --recovery-unseal
 * --recovery-private-key` reads it. Each value is unsealed with whichever old
 * key opens it and sealed again for the new certificate under the same scope
 * label; the plaintext lives only in a buffer that is zeroed at once.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import { ValidationError } from '../errors.js';
import { scopeLabel, sealValue } from './seal.js';
import { scopeOfSealedSecret } from './sealed-secret.js';
import type { SealingCertificate } from './sealing-certificate.js';
import { unsealValue } from './unseal.js';

/** What re-encryption reads of a SealedSecret. */
export interface SealedSecretLike {
  readonly metadata?: { readonly name?: unknown; readonly namespace?: unknown; readonly annotations?: Readonly<Record<string, unknown>> | null } | null;
  readonly spec?: { readonly encryptedData?: Readonly<Record<string, unknown>> | null } | null;
}

/**
 * The `spec.encryptedData` of `sealed`, every value re-encrypted for `certificate`.
 * @throws ValidationError naming the SealedSecret and key when no given key opens a value (never its content)
 */
export function reencryptedData(
  sealed: SealedSecretLike,
  privateKeys: readonly KeyObject[],
  certificate: Pick<SealingCertificate, 'publicKey'>,
): Record<string, string> {
  const namespace = typeof sealed.metadata?.namespace === 'string' ? sealed.metadata.namespace : '';
  const name = typeof sealed.metadata?.name === 'string' ? sealed.metadata.name : '';
  const label = scopeLabel(scopeOfSealedSecret(sealed), namespace, name);
  const out: Record<string, string> = {};
  for (const [key, ciphertext] of Object.entries(sealed.spec?.encryptedData ?? {})) {
    let plaintext: Buffer | undefined;
    for (const privateKey of privateKeys) {
      try {
        plaintext = unsealValue({ privateKey, label, ciphertext: String(ciphertext) });
        break;
      } catch {
        // Another key may open it.
      }
    }
    if (plaintext === undefined) {
      throw new ValidationError([
        { field: 'recovery-private-key', message: `no given private key opens ${namespace}/${name} key ${key}: it was sealed with a key not given` },
      ]);
    }
    try {
      out[key] = sealValue({ publicKey: certificate.publicKey, label, value: plaintext });
    } finally {
      plaintext.fill(0);
    }
  }
  return out;
}

/**
 * The RSA private keys in a recovery file: PEM blocks (`kubeseal
 * --recovery-private-key`), or the controller's key backup (`kubectl get
 * secret -l sealedsecrets.bitnami.com/sealed-secrets-key -o yaml`: a Secret
 * or a List of them, each with `data."tls.key"`).
 * @throws ValidationError naming `field` when it holds no usable key (without echoing the file)
 */
export function parseRecoveryKeys(text: string, field = 'recovery-private-key'): KeyObject[] {
  const pems = [...text.matchAll(/-----BEGIN (?:RSA )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA )?PRIVATE KEY-----/g)].map((m) => m[0]);
  if (pems.length === 0) {
    try {
      for (const doc of parseAllDocuments(text)) {
        const value = 'toJS' in doc ? (doc.toJS() as unknown) : undefined;
        const items = (value as { kind?: unknown; items?: unknown } | null)?.kind === 'List' ? (value as { items: unknown[] }).items : [value];
        for (const item of Array.isArray(items) ? items : []) {
          const encoded = (item as { data?: Record<string, unknown> } | null)?.data?.['tls.key'];
          if (typeof encoded === 'string') pems.push(Buffer.from(encoded, 'base64').toString('utf8'));
        }
      }
    } catch {
      // Neither PEM nor a key backup: refused below.
    }
  }
  const keys: KeyObject[] = [];
  for (const pem of pems) {
    try {
      const key = createPrivateKey(pem);
      if (key.asymmetricKeyType === 'rsa') keys.push(key);
    } catch {
      // Not a key: refused below if nothing else is one.
    }
  }
  if (keys.length === 0) throw new ValidationError([{ field, message: 'holds no RSA private key (PEM, or the controller\'s key backup with data."tls.key")' }]);
  return keys;
}
