/**
 * Which certificate each SealedSecret was sealed with. The generator records
 * it on every SealedSecret it writes, as an annotation on the SealedSecret's
 * own metadata (never copied to the Secret: the controller builds the Secret
 * from `spec.template`). When the controller renews its key (every 30 days by
 * default) or a cluster is rebuilt with a new one, comparing the annotation
 * with the certificate the controller serves now says which SealedSecrets to
 * reseal, without decrypting anything.
 * https://github.com/bitnami-labs/sealed-secrets#sealing-key-renewal
 */
import type { SealingCertificate } from '../sealing/sealing-certificate.js';
import { parseYamlDocuments } from './yaml.js';

/** The annotation: `sha256:<hex>` of the certificate's DER bytes (what `openssl x509 -fingerprint -sha256` prints, without colons). */
export const SEALED_WITH_ANNOTATION = 'gitops-scaffolder.io/sealed-with';

/** The annotation's value for a certificate. */
export function sealedWithOf(certificate: Pick<SealingCertificate, 'fingerprint'>): string {
  return `sha256:${certificate.fingerprint.toLowerCase()}`;
}

/** A SealedSecret as the repository records it: where it is and what certificate it says it was sealed with. */
export interface SealedSecretRecord {
  /** The file it is in, as given. */
  readonly file: string;
  readonly namespace: string;
  readonly name: string;
  /** The recorded fingerprint (`sha256:<hex>`, lower case), or undefined when none was recorded (sealed by hand or by an older generator). */
  readonly sealedWith?: string;
}

/** A SealedSecret sealed with another certificate than the current one. */
export type StaleSealedSecret = SealedSecretRecord;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function compareRecords(a: SealedSecretRecord, b: SealedSecretRecord): number {
  return a.file < b.file ? -1 : a.file > b.file ? 1 : a.name.localeCompare(b.name);
}

/**
 * Every SealedSecret among `files` (path → YAML text; other kinds and
 * unparsable files are skipped) with the certificate it records, sorted by
 * file then name.
 */
export function sealedSecretsIn(files: ReadonlyMap<string, string>): SealedSecretRecord[] {
  const records: SealedSecretRecord[] = [];
  for (const [file, text] of files) {
    let objects: unknown[];
    try {
      objects = parseYamlDocuments(text, file);
    } catch {
      continue;
    }
    for (const object of objects) {
      if (!isRecord(object) || object.kind !== 'SealedSecret' || !isRecord(object.metadata)) continue;
      const annotations = isRecord(object.metadata.annotations) ? object.metadata.annotations : {};
      const recorded = annotations[SEALED_WITH_ANNOTATION];
      const sealedWith = typeof recorded === 'string' ? recorded.toLowerCase() : undefined;
      records.push({
        file,
        namespace: String(object.metadata.namespace ?? ''),
        name: String(object.metadata.name ?? ''),
        ...(sealedWith !== undefined ? { sealedWith } : {}),
      });
    }
  }
  return records.sort(compareRecords);
}

/**
 * The SealedSecrets among `files` that were not sealed with `certificate`,
 * sorted by file then name. One without the annotation is listed too: nothing
 * says it was sealed with the current key.
 */
export function sealedWithOtherCertificate(files: ReadonlyMap<string, string>, certificate: Pick<SealingCertificate, 'fingerprint'>): StaleSealedSecret[] {
  const current = sealedWithOf(certificate);
  return sealedSecretsIn(files).filter((record) => record.sealedWith !== current);
}
