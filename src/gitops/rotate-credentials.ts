/**
 * Credential rotation for a generated cluster: reseal chosen credentials with
 * fresh values under the certificate the cluster's controller serves now, and
 * change nothing else. The cluster is rendered again from what its provenance
 * recorded (identity, attributes, reference), but only the SealedSecret files
 * of the rotated credentials are taken from that render: a rotation is not an
 * upgrade, so a reference that moved on since is not pulled in with it.
 */
import { NotFoundError, ValidationError } from '../errors.js';
import type { SealingCertificate } from '../sealing/sealing-certificate.js';
import { PLATFORM_DESCRIPTOR_PATH, parsePlatformDescriptor } from './platform-descriptor.js';
import { PROVENANCE_FILE, parseProvenance } from './provenance.js';
import type { RandomBytes } from './random-string.js';
import { renderCluster } from './render-cluster.js';
import type { RepoReader } from './repo-reader.js';
import type { CredentialOutcome } from './sealed-credentials.js';
import { sealedWithOtherCertificate, type StaleSealedSecret } from './sealed-with.js';

/** Inputs of {@link rotateCredentials}. */
export interface RotateCredentialsOptions {
  readonly cluster: string;
  /** The certificate the cluster's Sealed Secrets controller serves now. */
  readonly certificate: SealingCertificate;
  /**
   * Credentials to rotate (`name` or `namespace/name`).
   * @default every credential whose SealedSecret was sealed with another certificate (or records none)
   */
  readonly credentials?: readonly string[];
  readonly random: RandomBytes;
  readonly generatorVersion: string;
}

/** What a rotation did, or would do. */
export interface RotationPlan {
  /** `clusters/<name>`. */
  readonly gitopsPath: string;
  /** Before: SealedSecrets of the cluster sealed with another certificate. */
  readonly stale: readonly StaleSealedSecret[];
  /** Credentials sealed anew (sameAs partners of a chosen one included). */
  readonly rotated: readonly CredentialOutcome[];
  /** Repository-relative path → content: only the rotated SealedSecrets. */
  readonly files: ReadonlyMap<string, string>;
  /** After: SealedSecrets still sealed with another certificate (not rotated, or not the generator's). */
  readonly remaining: readonly StaleSealedSecret[];
}

/**
 * Plans the rotation of a generated cluster's credentials; the caller writes `files`.
 * @throws NotFoundError when `clusters/<name>/` has no provenance (not a generated cluster)
 * @throws ValidationError when the cluster has only its first pass (nothing sealed yet),
 *   or a named credential is not in scaffold.yaml
 */
export async function rotateCredentials(reader: RepoReader, options: RotateCredentialsOptions): Promise<RotationPlan> {
  const gitopsPath = `clusters/${options.cluster}`;
  const provenance = parseProvenance(await reader.read(`${gitopsPath}/${PROVENANCE_FILE}`));
  if (!provenance) throw new NotFoundError(`${gitopsPath}/${PROVENANCE_FILE} not found or unreadable: ${options.cluster} is not a cluster this generator rendered`);
  if (provenance.pass !== 'all') {
    throw new ValidationError([{ field: 'cluster', message: `${gitopsPath} has only its first pass: nothing is sealed yet (finish the scaffold instead)` }]);
  }
  const existing = new Map<string, string>();
  for (const path of await reader.list(gitopsPath)) {
    if (!/\/sealed\/[^/]+\.ya?ml$/.test(path)) continue;
    const text = await reader.read(path);
    if (text !== undefined) existing.set(path, text);
  }
  const stale = sealedWithOtherCertificate(existing, options.certificate);
  // By default the stale ones the generator owns; a SealedSecret sealed by hand stays in `remaining`.
  const declared = new Set(parsePlatformDescriptor(await reader.read(PLATFORM_DESCRIPTOR_PATH)).credentials.map((c) => `${c.namespace}/${c.name}`));
  const chosen = options.credentials ?? stale.map((s) => `${s.namespace}/${s.name}`).filter((name) => declared.has(name));

  const result = await renderCluster(reader, {
    cluster: provenance.cluster,
    reference: provenance.reference,
    pass: 'all',
    certificate: options.certificate,
    // An empty choice still renders (kept files only), so a name that matches nothing is still refused.
    rotateCredentials: chosen.length > 0 ? chosen : false,
    random: options.random,
    generatorVersion: options.generatorVersion,
    platformCommit: provenance.platformCommit,
  });
  const rotated = result.credentials.filter((c) => c.action !== 'kept');
  const files = new Map(rotated.map((c) => [`${gitopsPath}/${c.file}`, result.tree.get(`${gitopsPath}/${c.file}`)!] as const));
  const after = new Map(existing);
  for (const [path, text] of files) after.set(path, text);
  return { gitopsPath, stale, rotated, files, remaining: sealedWithOtherCertificate(after, options.certificate) };
}
