/**
 * Which of a cluster's SealedSecrets were sealed with the certificate its
 * controller serves now. The controller keeps every key it ever had, so an
 * older SealedSecret still decrypts; but a key that leaked, or a cluster
 * rebuilt with a new key, makes those the ones to reseal (`rotate`). The
 * comparison reads only the `sealed-with` annotation: nothing is decrypted.
 * https://github.com/bitnami-labs/sealed-secrets#sealing-key-renewal
 */
import type { RepoReader } from '../gitops/repo-reader.js';
import { sealedSecretsIn, sealedWithOf, type SealedSecretRecord } from '../gitops/sealed-with.js';
import type { SealingCertificate } from '../sealing/sealing-certificate.js';

/** A cluster's SealedSecrets, split by the certificate they record. */
export interface SealingFreshness {
  /** Sealed with another certificate than the controller's current one (`sealedWith` is set). */
  readonly stale: readonly SealedSecretRecord[];
  /** Without the annotation (sealed by hand or by an older generator): nothing says which key sealed them. */
  readonly unknown: readonly SealedSecretRecord[];
  /** Sealed with the controller's current certificate. */
  readonly current: readonly SealedSecretRecord[];
}

/**
 * Splits `records` against the fingerprint of the certificate the controller
 * serves now, given as the certificate's hex SHA-256 or as the annotation's
 * `sha256:<hex>` (either case).
 */
export function sealingFreshness(records: readonly SealedSecretRecord[], controllerFingerprint: string): SealingFreshness {
  const current = sealedWithOf({ fingerprint: controllerFingerprint.replace(/^sha256:/i, '') });
  const split = { stale: [] as SealedSecretRecord[], unknown: [] as SealedSecretRecord[], current: [] as SealedSecretRecord[] };
  for (const record of records) {
    if (record.sealedWith === undefined) split.unknown.push(record);
    else if (record.sealedWith === current) split.current.push(record);
    else split.stale.push(record);
  }
  return split;
}

/** The files of `clusters/<name>/` a SealedSecret can be in. */
const MANIFEST = /\.ya?ml$/;

/** Every SealedSecret under `clusters/<name>/`, with the certificate it records, sorted by file then name. */
export async function readClusterSealedSecrets(reader: RepoReader, name: string): Promise<SealedSecretRecord[]> {
  const files = new Map<string, string>();
  for (const path of await reader.list(`clusters/${name}`)) {
    if (!MANIFEST.test(path)) continue;
    const text = await reader.read(path);
    if (text !== undefined) files.set(path, text);
  }
  return sealedSecretsIn(files);
}

/** One SealedSecret as printed and served. */
export interface SealedSecretView {
  readonly path: string;
  readonly namespace: string;
  readonly name: string;
  /** The recorded fingerprint; absent for an unknown one. */
  readonly sealed_with?: string;
}

/**
 * The `sealing` section of a cluster's detail, shared by `generate-gitops-env
 * clusters --cert` and `GET /api/v1/clusters/{name}`. Without the controller's
 * certificate only the SealedSecrets that record none can be named; `stale`
 * is then empty and `current_count` null, and `reason` says why.
 */
export interface SealingView {
  readonly controller_certificate: { readonly fingerprint: string; readonly not_after: string } | null;
  readonly reason?: string;
  readonly sealed_secrets: number;
  readonly stale: SealedSecretView[];
  readonly unknown: SealedSecretView[];
  readonly current_count: number | null;
}

function recordView(record: SealedSecretRecord): SealedSecretView {
  return { path: record.file, namespace: record.namespace, name: record.name, ...(record.sealedWith !== undefined ? { sealed_with: record.sealedWith } : {}) };
}

/** The section for `records`, compared with `certificate` when it is known (else `reason` says why not). */
export function sealingView(
  records: readonly SealedSecretRecord[],
  certificate: Pick<SealingCertificate, 'fingerprint' | 'notAfter'> | undefined,
  reason?: string,
): SealingView {
  if (certificate === undefined) {
    return {
      controller_certificate: null,
      ...(reason !== undefined ? { reason } : {}),
      sealed_secrets: records.length,
      stale: [],
      unknown: records.filter((r) => r.sealedWith === undefined).map(recordView),
      current_count: null,
    };
  }
  const split = sealingFreshness(records, certificate.fingerprint);
  return {
    controller_certificate: { fingerprint: sealedWithOf(certificate), not_after: certificate.notAfter.toISOString() },
    sealed_secrets: records.length,
    stale: split.stale.map(recordView),
    unknown: split.unknown.map(recordView),
    current_count: split.current.length,
  };
}
