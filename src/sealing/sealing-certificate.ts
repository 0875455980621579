/**
 * The public half of a cluster's Sealed Secrets key, as the controller serves it
 * at `/v1/cert.pem` and as `kubeseal --cert` reads it.
 */
import { X509Certificate, createHash, type KeyObject } from 'node:crypto';
import { ValidationError } from '../errors.js';
import { CANDIDATE_CACHE_LIMIT, ContentCache } from './candidate-cache.js';

/** A parsed sealing certificate: the key to seal with and what identifies it. */
export interface SealingCertificate {
  /** RSA public key; values are sealed to it with RSA-OAEP (SHA-256). */
  readonly publicKey: KeyObject;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** SHA-256 of the certificate's DER encoding, lower-case hex without separators. */
  readonly fingerprint: string;
}

// Below this the key gives no real protection; the controller's own default is 4096.
const MIN_MODULUS_BITS = 2048;

/**
 * How far ahead of our clock a certificate's notBefore may be. The controller
 * stamps a new key's notBefore with its own "now", and a run fetches that
 * certificate seconds later: a clock a little behind the cluster's must not
 * refuse a key the controller has just made.
 */
export const SEALING_CERTIFICATE_CLOCK_SKEW_MS = 5 * 60_000;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

// X509Certificate#validFrom is OpenSSL's ASN1_TIME_print form, e.g. "Jan  2 15:04:05 2026 GMT".
// Node 20 has no validFromDate (added in 22.10), and Date's string parser is
// implementation-defined, so the form is read explicitly.
const OPENSSL_TIME = /^([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4,}) GMT$/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function parseOpensslTime(text: string): Date | undefined {
  const m = OPENSSL_TIME.exec(text);
  if (!m) return undefined;
  const month = MONTHS.indexOf(m[1] ?? '');
  if (month < 0) return undefined;
  return new Date(Date.UTC(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])));
}

/** Certificates parsed before, by the hash of their PEM block (candidate-cache.ts). */
export const parsedCertificates = new ContentCache<SealingCertificate>(CANDIDATE_CACHE_LIMIT);

function readCandidate(block: string, position: number, field: string): SealingCertificate {
  // What a block parses to depends on its text alone; a refusal names its position and field, so it is not kept.
  return parsedCertificates.get(block, () => parseCandidate(block, position, field));
}

function parseCandidate(block: string, position: number, field: string): SealingCertificate {
  const where = `${field}: certificate #${position + 1}`;
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(block);
  } catch (cause) {
    throw new ValidationError(`${where} is not a valid X.509 certificate`, { cause });
  }
  const { publicKey } = x509;
  // 'rsa-pss' keys are RSA too, but restricted to signatures: OAEP cannot use them.
  if (publicKey.asymmetricKeyType !== 'rsa') {
    throw new ValidationError(`${where} has a key of type ${publicKey.asymmetricKeyType ?? 'unknown'}; Sealed Secrets certificates carry an RSA key`);
  }
  const bits = publicKey.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_MODULUS_BITS) {
    throw new ValidationError(`${where} has a ${bits}-bit RSA key; at least ${MIN_MODULUS_BITS} bits are required`);
  }
  const notBefore = parseOpensslTime(x509.validFrom);
  const notAfter = parseOpensslTime(x509.validTo);
  if (!notBefore || !notAfter) {
    throw new ValidationError(`${where} has a validity period that cannot be read`);
  }
  const fingerprint = createHash('sha256').update(x509.raw).digest('hex');
  return { publicKey, notBefore, notAfter, fingerprint };
}

// Whole seconds, as X.509 stores them: "2034-02-27T12:00:00Z".
const isoSeconds = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Refuses a certificate outside its validity window at `now`. notAfter is
 * inclusive (RFC 5280 4.1.2.5); notBefore is allowed {@link SEALING_CERTIFICATE_CLOCK_SKEW_MS}
 * of clock skew.
 */
function assertValidAt(certificate: SealingCertificate, position: number, field: string, now: Date): void {
  const window = `valid from ${isoSeconds(certificate.notBefore)} to ${isoSeconds(certificate.notAfter)}`;
  const at = now.getTime();
  if (Number.isNaN(at)) throw new TypeError('parseSealingCertificate: now is not a valid date');
  if (at > certificate.notAfter.getTime()) {
    throw new ValidationError([
      {
        field,
        message: `certificate #${position + 1} expired on ${isoSeconds(certificate.notAfter)} (${window}; now is ${isoSeconds(now)}); fetch the cluster's current Sealed Secrets certificate`,
      },
    ]);
  }
  if (at < certificate.notBefore.getTime() - SEALING_CERTIFICATE_CLOCK_SKEW_MS) {
    throw new ValidationError([
      {
        field,
        message: `certificate #${position + 1} is not valid yet (${window}; now is ${isoSeconds(now)})`,
      },
    ]);
  }
}

/**
 * Parses the PEM text of a sealing certificate.
 *
 * The text may hold several certificates (the controller keeps every key it
 * ever generated, and `kubectl get secret -l sealedsecrets.bitnami.com/sealed-secrets-key`
 * dumps all of them). The one with the latest `notBefore` is chosen, because the
 * controller seals with, and serves, its newest key; older keys only decrypt.
 * On a tie the later certificate in the text wins. Other PEM blocks (a private
 * key, for instance) are ignored.
 *
 * The chosen certificate must be valid at `now`: an expired or not-yet-valid
 * one is refused (a controller serves a current key; sealing to any other means
 * the certificate is stale or not the cluster's). Older certificates in a bundle
 * may have expired, as they only decrypt; they must still hold an RSA key.
 *
 * @param pem - PEM text with at least one `CERTIFICATE` block
 * @param field - field path used in error messages, e.g. `sealing.certificate`
 * @param now - the time to check validity at; a parameter so that tests and
 *   callers with their own clock are deterministic
 * @default field `certificate`, now the current time
 * @throws ValidationError when there is no certificate, one is malformed, a key
 *   is not RSA (2048 bits or more), or the chosen certificate is not valid at `now`
 */
export function parseSealingCertificate(pem: string, field = 'certificate', now: Date = new Date()): SealingCertificate {
  if (typeof pem !== 'string') throw new ValidationError([{ field, message: 'must be PEM text' }]);
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    throw new ValidationError([{ field, message: 'no PEM certificate found (expected "-----BEGIN CERTIFICATE-----")' }]);
  }
  const candidates = blocks.map((block, i) => readCandidate(block, i, field));
  // Candidates come in text order, so ">=" lets the later one win a tie.
  let chosen = 0;
  candidates.forEach((c, i) => {
    if (c.notBefore.getTime() >= (candidates[chosen] as SealingCertificate).notBefore.getTime()) chosen = i;
  });
  const newest = candidates[chosen] as SealingCertificate;
  assertValidAt(newest, chosen, field, now);
  return newest;
}
