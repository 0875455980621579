/**
 * The cluster's credentials as SealedSecrets, one file each under
 * `<layer>/sealed/`, plus a kustomization listing them.
 *
 * Credentials converge: an existing sealed file for the same Secret with the
 * same keys is kept byte for byte (no rotation, no new commit) unless rotation
 * is asked for. Keys tied by `sameAs` are rotated together, since a kept
 * ciphertext's plaintext cannot be recovered to seal it again. Every SealedSecret
 * written records the certificate it was sealed with (`sealed-with.ts`).
 */
import { ValidationError } from '../errors.js';
import type { SealingCertificate } from '../sealing/sealing-certificate.js';
import { buildSealedSecret } from '../sealing/sealed-secret.js';
import { assertDockerConfigJson, credentialValues, type ProducedValues, type SuppliedKind } from './credential-values.js';
import { assertNotificationAddress } from './notification-schema.js';
import type { CredentialSpec } from './platform-descriptor.js';
import type { RandomBytes } from './random-string.js';
import { SEALED_WITH_ANNOTATION, sealedWithOf } from './sealed-with.js';
import { parseYamlDocuments, toYaml } from './yaml.js';
import { isRecord } from '../model/is-record.js';

/** What happened to one credential in a render. */
export interface CredentialOutcome {
  readonly namespace: string;
  readonly name: string;
  readonly layer: string;
  readonly file: string;
  /**
   * `omitted`: a supplied credential nobody supplied; none is invented, so none is written (a registry
   * credential: images are pulled anonymously; a notification address: no Provider or Alert).
   */
  readonly action: 'generated' | 'supplied' | 'kept' | 'omitted';
  /** For a credential only the caller gives: which kind (registry-auth, notification-address). */
  readonly supplied?: SuppliedKind;
}

/** Inputs of {@link renderSealedCredentials}. */
export interface SealedCredentialsOptions {
  readonly credentials: readonly CredentialSpec[];
  /** Existing files of the cluster, by path relative to the cluster directory. */
  readonly existing: ReadonlyMap<string, string>;
  readonly certificate?: SealingCertificate;
  readonly registryAuth?: string;
  /** A caller-supplied webhook address for the notification Provider (`{ supplied: notification-address }`). */
  readonly notificationAddress?: string;
  /**
   * Seal fresh values even where sealed ones exist: all of them (`true`) or
   * the credentials named (`name` or `namespace/name`). @default false
   * @throws ValidationError (from the render) when a name matches no credential
   */
  readonly rotate?: CredentialRotation;
  readonly random: RandomBytes;
}

/** Which credentials to seal anew even where sealed ones exist: none, all, or these names (`name` or `namespace/name`). */
export type CredentialRotation = boolean | readonly string[];

/** The rotation as a predicate; every name must match a credential. */
function rotationOf(rotate: CredentialRotation | undefined, credentials: readonly CredentialSpec[]): (c: CredentialSpec) => boolean {
  if (rotate === undefined || typeof rotate === 'boolean') return () => rotate === true;
  const matches = (name: string, c: CredentialSpec) => name === c.name || name === `${c.namespace}/${c.name}`;
  const unknown = rotate.filter((name) => !credentials.some((c) => matches(name, c)));
  if (unknown.length > 0) {
    const known = credentials
      .map((c) => `${c.namespace}/${c.name}`)
      .sort()
      .join(', ');
    throw new ValidationError([{ field: 'credential', message: `${unknown.join(', ')}: no such credential in scaffold.yaml (known: ${known || 'none'})` }]);
  }
  return (c) => rotate.some((name) => matches(name, c));
}

/** The file of one credential, relative to the cluster directory. */
export function sealedFileOf(credential: Pick<CredentialSpec, 'layer' | 'name'>): string {
  return `${credential.layer}/sealed/sealed-${credential.name}.yaml`;
}

// A kept file must still be the same Secret with at least the same keys; anything
// else (renamed, keys added in the descriptor, hand-edited) is sealed anew.
function reusable(text: string | undefined, credential: CredentialSpec, file: string): boolean {
  if (text === undefined) return false;
  let objects: unknown[];
  try {
    objects = parseYamlDocuments(text, file);
  } catch {
    return false;
  }
  const object = objects[0];
  if (objects.length !== 1 || !isRecord(object) || object.kind !== 'SealedSecret') return false;
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const spec = isRecord(object.spec) ? object.spec : {};
  const encrypted = isRecord(spec.encryptedData) ? spec.encryptedData : {};
  if (metadata.name !== credential.name || metadata.namespace !== credential.namespace) return false;
  return Object.keys(credential.keys).every((key) => typeof encrypted[key] === 'string' && encrypted[key] !== '');
}

/**
 * A supplied credential: only its owner can give it (a registry credential:
 * `--registry-auth`, `registry_pull_secret`; a notification address:
 * `--notification-address-file`, `notifications.address`). A generated one
 * would be a random password the registry never issued, or a URL nobody listens on.
 * @returns the kind supplied, undefined for a generated credential
 */
function suppliedKindOf(credential: CredentialSpec): SuppliedKind | undefined {
  for (const source of Object.values(credential.keys)) if ('supplied' in source) return source.supplied;
  return undefined;
}

function suppliedOf(credential: CredentialSpec): { supplied?: SuppliedKind } {
  const kind = suppliedKindOf(credential);
  return kind === undefined ? {} : { supplied: kind };
}

function sameAsTargets(credential: CredentialSpec): string[] {
  return Object.values(credential.keys).flatMap((s) => ('sameAs' in s ? [s.sameAs.split('/').slice(0, 2).join('/')] : []));
}

/**
 * Seals (or keeps) every credential.
 * @returns files relative to the cluster directory and what happened to each credential
 * @throws ValidationError when a credential must be sealed and no certificate was given
 */
export function renderSealedCredentials(options: SealedCredentialsOptions): { files: Map<string, string>; outcomes: CredentialOutcome[] } {
  const key = (c: Pick<CredentialSpec, 'namespace' | 'name'>) => `${c.namespace}/${c.name}`;
  const fresh = new Set<string>();
  const rotated = rotationOf(options.rotate, options.credentials);
  for (const c of options.credentials) {
    if (rotated(c) || !reusable(options.existing.get(sealedFileOf(c)), c, sealedFileOf(c))) fresh.add(key(c));
  }
  // sameAs ties credentials together: if either side is sealed anew, both are.
  for (let changed = true; changed;) {
    changed = false;
    for (const c of options.credentials) {
      for (const target of sameAsTargets(c)) {
        if (fresh.has(target) !== fresh.has(key(c))) {
          fresh.add(target);
          fresh.add(key(c));
          changed = true;
        }
      }
    }
  }
  const supplied: Partial<Record<SuppliedKind, string>> = {
    ...(options.registryAuth === undefined ? {} : { 'registry-auth': assertDockerConfigJson(options.registryAuth, 'registry-auth') }),
    ...(options.notificationAddress === undefined
      ? {}
      : { 'notification-address': assertNotificationAddress(options.notificationAddress, 'notification-address') }),
  };
  // Never invented: without a supplied one, a supplied credential is kept as sealed before, or not written at all.
  const omitted = new Set<string>();
  for (const c of options.credentials) {
    const kind = suppliedKindOf(c);
    if (kind === undefined || supplied[kind] !== undefined || !fresh.has(key(c))) continue;
    fresh.delete(key(c));
    if (!reusable(options.existing.get(sealedFileOf(c)), c, sealedFileOf(c))) omitted.add(key(c));
  }
  if (fresh.size > 0 && !options.certificate) {
    throw new ValidationError([
      { field: 'cert', message: `sealing ${[...fresh].sort().join(', ')} needs the cluster's Sealed Secrets certificate (--cert, or let the runner fetch it)` },
    ]);
  }

  const files = new Map<string, string>();
  const outcomes: CredentialOutcome[] = [];
  const produced: ProducedValues = new Map();
  // Credentials other keys refer to are produced first.
  const ordered = [...options.credentials].sort((a, b) => sameAsTargets(a).length - sameAsTargets(b).length);
  for (const credential of ordered) {
    const file = sealedFileOf(credential);
    if (omitted.has(key(credential))) {
      outcomes.push({ namespace: credential.namespace, name: credential.name, layer: credential.layer, file, action: 'omitted', ...suppliedOf(credential) });
      continue;
    }
    if (!fresh.has(key(credential))) {
      files.set(file, options.existing.get(file)!);
      outcomes.push({ namespace: credential.namespace, name: credential.name, layer: credential.layer, file, action: 'kept', ...suppliedOf(credential) });
      continue;
    }
    const kind = suppliedKindOf(credential);
    const useSupplied = kind !== undefined && supplied[kind] !== undefined;
    const data = credentialValues(credential, {
      random: options.random,
      produced,
      ...(useSupplied ? { supplied } : {}),
    });
    const sealed = buildSealedSecret({
      name: credential.name,
      namespace: credential.namespace,
      scope: 'strict',
      type: credential.type,
      data,
      labels: { 'app.kubernetes.io/managed-by': 'gitops-scaffolder' },
      certificate: options.certificate!,
    });
    // Which key it was sealed for, so a later key renewal shows which files to reseal.
    sealed.metadata.annotations = { ...sealed.metadata.annotations, [SEALED_WITH_ANNOTATION]: sealedWithOf(options.certificate!) };
    files.set(file, toYaml(sealed, `${credential.namespace}/${credential.name}, sealed for this cluster only (strict scope). Generated by gitops-scaffolder.`));
    outcomes.push({
      namespace: credential.namespace,
      name: credential.name,
      layer: credential.layer,
      file,
      action: useSupplied ? 'supplied' : 'generated',
      ...suppliedOf(credential),
    });
  }

  const byLayer = new Map<string, string[]>();
  for (const c of options.credentials)
    byLayer.set(c.layer, [...(byLayer.get(c.layer) ?? []), ...(omitted.has(key(c)) ? [] : [sealedFileOf(c).split('/').pop()!])]);
  for (const [layer, names] of [...byLayer].sort(([a], [b]) => a.localeCompare(b))) {
    // A layer whose only credentials were omitted gets no sealed/ (its overlay does not list one).
    if (names.length === 0 && options.credentials.every((c) => c.layer !== layer || omitted.has(key(c)))) continue;
    files.set(
      `${layer}/sealed/kustomization.yaml`,
      toYaml(
        { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [...names].sort() },
        "Credentials of this layer, sealed with this cluster's own key. Generated by gitops-scaffolder.",
      ),
    );
  }
  outcomes.sort((a, b) => a.file.localeCompare(b.file));
  return { files, outcomes };
}
