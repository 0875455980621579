/**
 * Credential rotation for a generated cluster, in two kinds that never mix:
 *
 * - **Same values, new key** (the default): a SealedSecret sealed with an old
 *   key is re-encrypted for the certificate the controller serves now, every
 *   value unchanged. Offline, that needs the old private key (`keep`); in a run
 *   the controller does it itself (`/v1/rotate`). Nothing on the cluster changes
 *   but the ciphertext: no database or workload notices.
 * - **New values** (`fresh`, asked for explicitly): the chosen credentials are
 *   sealed anew with fresh values, and for each one whose database keeps the
 *   password (`passwordChange` in scaffold.yaml) a Job is written beside it that
 *   sets the new password there; the plan names the workloads that read the
 *   Secret and must restart to pick the values up.
 *
 * Fresh values render the cluster again from what its provenance recorded, but
 * only the rotated files are taken from that render: a rotation is not an upgrade.
 */
import type { KeyObject } from 'node:crypto';
import { parseDocument } from 'yaml';
import { NotFoundError, ValidationError } from '../errors.js';
import { isRecord } from '../model/is-record.js';
import { reencryptedData } from '../sealing/reencrypt.js';
import type { SealingCertificate } from '../sealing/sealing-certificate.js';
import { passwordChangeJobName, passwordChangeManifest } from './password-change-job.js';
import { PLATFORM_DESCRIPTOR_PATH, parsePlatformDescriptor, type CredentialSpec, type PlatformDescriptor } from './platform-descriptor.js';
import { PROVENANCE_FILE, parseProvenance } from './provenance.js';
import type { RandomBytes } from './random-string.js';
import { renderCluster } from './render-cluster.js';
import type { RepoReader } from './repo-reader.js';
import { sealedFileOf } from './sealed-credentials.js';
import { SEALED_WITH_ANNOTATION, sealedWithOf, sealedWithOtherCertificate, type StaleSealedSecret } from './sealed-with.js';
import { documentToYaml, parseYamlDocuments, toYaml } from './yaml.js';

/**
 * Re-encrypts one SealedSecret (as parsed from Git) with the controller's newest key, same values
 * (`SealingCertificateSource.reencrypt`, bound to the cluster's controller). @returns its answer
 */
export type ControllerReencrypt = (sealedSecret: Readonly<Record<string, unknown>>) => Promise<unknown>;

/**
 * Which values the rotated SealedSecrets hold: the same ones, re-encrypted offline with the old
 * private keys (`keep`) or by the cluster's controller (`controller`), or fresh ones.
 */
export type RotationValues =
  | { readonly keep: { readonly privateKeys: readonly KeyObject[] } }
  | { readonly controller: { readonly reencrypt: ControllerReencrypt } }
  | { readonly fresh: { readonly random: RandomBytes } };

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
  readonly values: RotationValues;
  readonly generatorVersion: string;
}

/** One credential a rotation sealed again. */
export interface RotatedCredential {
  readonly namespace: string;
  readonly name: string;
  readonly layer: string;
  /** Relative to the cluster directory. */
  readonly file: string;
  readonly values: 'same' | 'fresh';
}

/** A Job that sets a credential's new passwords in its database. */
export interface PasswordChangeJob {
  readonly namespace: string;
  readonly credential: string;
  readonly job: string;
  /** Repository-relative. */
  readonly file: string;
}

/** What a rotation did, or would do. */
export interface RotationPlan {
  /** `clusters/<name>`. */
  readonly gitopsPath: string;
  /** Before: SealedSecrets of the cluster sealed with another certificate. */
  readonly stale: readonly StaleSealedSecret[];
  /** Credentials sealed again (with fresh values: sameAs partners of a chosen one included). */
  readonly rotated: readonly RotatedCredential[];
  /** Repository-relative path → content: the rotated SealedSecrets (and, with fresh values, the password-change Jobs and their kustomizations). */
  readonly files: ReadonlyMap<string, string>;
  /** After: SealedSecrets still sealed with another certificate (not rotated, or not the generator's). */
  readonly remaining: readonly StaleSealedSecret[];
  /**
   * `namespace/name` of the remaining ones that are credentials the caller supplies (a registry pull
   * secret): fresh values cannot be generated for them, only the same values re-encrypted.
   */
  readonly suppliedRemaining: readonly string[];
  /** Fresh values only: the Jobs that change the passwords where the databases keep them. */
  readonly passwordChanges: readonly PasswordChangeJob[];
  /** Fresh values only: `Kind namespace/name` of each workload that reads a rotated Secret (restart it to pick the new values up), sorted. */
  readonly restart: readonly string[];
  /** Fresh values only: rotated credentials with no `passwordChange`, whose consumers only read them (nothing to change elsewhere). */
  readonly readOnly: readonly string[];
}

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob']);

/** The Secrets a workload's pod template reads (env, envFrom, volumes, imagePullSecrets). */
function secretsReadBy(object: Record<string, unknown>): Set<string> {
  const names = new Set<string>();
  const visit = (value: unknown, parentKey?: string): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, parentKey);
      return;
    }
    if (!isRecord(value)) return;
    if ((parentKey === 'secretKeyRef' || parentKey === 'secretRef') && typeof value.name === 'string') names.add(value.name);
    if (parentKey === 'secret' && typeof value.secretName === 'string') names.add(value.secretName);
    if (parentKey === 'imagePullSecrets' && typeof value.name === 'string') names.add(value.name);
    for (const [key, child] of Object.entries(value)) visit(child, key);
  };
  visit(object.spec);
  return names;
}

/** Workloads under base/ and the cluster's directory that read any of `secrets` (`namespace/name`). */
async function readersOf(reader: RepoReader, gitopsPath: string, secrets: readonly { namespace: string; name: string }[]): Promise<string[]> {
  const found = new Set<string>();
  for (const path of [...(await reader.list('base')), ...(await reader.list(gitopsPath))]) {
    if (!/\.ya?ml$/.test(path)) continue;
    let objects: unknown[];
    try {
      objects = parseYamlDocuments((await reader.read(path)) ?? '', path);
    } catch {
      continue;
    }
    for (const object of objects) {
      if (!isRecord(object) || typeof object.kind !== 'string' || !WORKLOAD_KINDS.has(object.kind) || !isRecord(object.metadata)) continue;
      const namespace = typeof object.metadata.namespace === 'string' ? object.metadata.namespace : undefined;
      const reads = secretsReadBy(object);
      // A base manifest may leave its namespace to its kustomization: matched by name then.
      if (secrets.some((s) => reads.has(s.name) && (namespace === undefined || namespace === s.namespace))) {
        found.add(`${object.kind} ${namespace ?? secrets.find((s) => reads.has(s.name))!.namespace}/${String(object.metadata.name)}`);
      }
    }
  }
  return [...found].sort();
}

/** Adds `resource` to a kustomization's resources (sorted), keeping its comments. */
function withResource(text: string, resource: string): string {
  const doc = parseDocument(text);
  const resources = (doc.get('resources') as { toJSON(): unknown } | undefined)?.toJSON();
  const list = Array.isArray(resources) ? resources.filter((r): r is string => typeof r === 'string') : [];
  doc.set('resources', [...new Set([...list, resource])].sort());
  return documentToYaml(doc);
}

/**
 * Plans the rotation of a generated cluster's credentials; the caller writes `files`.
 * @throws NotFoundError when `clusters/<name>/` has no provenance (not a generated cluster)
 * @throws ValidationError when the cluster has only its first pass (nothing sealed yet),
 *   a named credential is not in scaffold.yaml, or (same values) no given key opens a value
 */
export async function rotateCredentials(reader: RepoReader, options: RotateCredentialsOptions): Promise<RotationPlan> {
  const gitopsPath = `clusters/${options.cluster}`;
  const provenance = parseProvenance(await reader.read(`${gitopsPath}/${PROVENANCE_FILE}`));
  if (!provenance)
    throw new NotFoundError(`${gitopsPath}/${PROVENANCE_FILE} not found or unreadable: ${options.cluster} is not a cluster this generator rendered`);
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
  const descriptor = parsePlatformDescriptor(await reader.read(PLATFORM_DESCRIPTOR_PATH));
  // By default the stale ones the generator owns; a SealedSecret sealed by hand stays in `remaining`.
  const declared = new Set(descriptor.credentials.map((c) => `${c.namespace}/${c.name}`));
  const chosen = options.credentials ?? stale.map((s) => `${s.namespace}/${s.name}`).filter((name) => declared.has(name));
  const matches = (name: string, c: CredentialSpec) => name === c.name || name === `${c.namespace}/${c.name}`;
  const unknown = chosen.filter((name) => !descriptor.credentials.some((c) => matches(name, c)));
  if (unknown.length > 0) {
    const known = descriptor.credentials
      .map((c) => `${c.namespace}/${c.name}`)
      .sort()
      .join(', ');
    throw new ValidationError([{ field: 'credential', message: `${unknown.join(', ')}: no such credential in scaffold.yaml (known: ${known || 'none'})` }]);
  }

  const files = new Map<string, string>();
  const rotated: RotatedCredential[] = [];
  const passwordChanges: PasswordChangeJob[] = [];
  let restart: readonly string[] = [];
  let readOnly: readonly string[] = [];
  if (!('fresh' in options.values)) {
    const values = options.values;
    for (const credential of descriptor.credentials.filter((c) => chosen.some((name) => matches(name, c)))) {
      const file = sealedFileOf(credential);
      const path = `${gitopsPath}/${file}`;
      const text = existing.get(path);
      if (text === undefined)
        throw new ValidationError([
          { field: 'credential', message: `${credential.namespace}/${credential.name} has no SealedSecret at ${path} to re-encrypt` },
        ]);
      const object = sealedSecretIn(text, path);
      const data =
        'keep' in values
          ? reencryptedData(object, values.keep.privateKeys, options.certificate)
          : controllerData(object, await values.controller.reencrypt(object), path);
      files.set(path, withEncryptedData(text, data, options.certificate));
      rotated.push({ namespace: credential.namespace, name: credential.name, layer: credential.layer, file, values: 'same' });
    }
  } else {
    refuseFreshSupplied(descriptor, options.credentials ?? []);
    const result = await renderCluster(reader, {
      cluster: provenance.cluster,
      reference: provenance.reference,
      pass: 'all',
      certificate: options.certificate,
      // An empty choice still renders (kept files only), so a name that matches nothing is still refused.
      rotateCredentials: chosen.length > 0 ? chosen : false,
      random: options.values.fresh.random,
      generatorVersion: options.generatorVersion,
      platformCommit: provenance.platformCommit,
    });
    // Only what was sealed anew: a kept one is unchanged, an omitted pull secret (none supplied) is not in the tree.
    for (const c of result.credentials.filter((o) => o.action === 'generated' || o.action === 'supplied')) {
      const path = `${gitopsPath}/${c.file}`;
      files.set(path, result.tree.get(path)!);
      rotated.push({ namespace: c.namespace, name: c.name, layer: c.layer, file: c.file, values: 'fresh' });
    }
    const followUp = await freshValuesFollowUp(reader, { gitopsPath, descriptor, rotated, tree: files });
    for (const [path, text] of followUp.files) files.set(path, text);
    passwordChanges.push(...followUp.passwordChanges);
    ({ restart, readOnly } = followUp);
  }
  const after = new Map(existing);
  for (const [path, text] of files) if (existing.has(path)) after.set(path, text);
  const remaining = sealedWithOtherCertificate(after, options.certificate);
  const suppliedRemaining = remaining
    .filter((r) => descriptor.credentials.some((c) => c.namespace === r.namespace && c.name === r.name && isSuppliedCredential(c)))
    .map((r) => `${r.namespace}/${r.name}`);
  return { gitopsPath, stale, rotated, files, remaining, suppliedRemaining, passwordChanges, restart, readOnly };
}

/**
 * Refuses fresh values for a credential the caller supplies (the registry pull
 * secret): there is no value the generator could make up for it.
 * @throws ValidationError naming the supplied ones among `names` (`name` or `namespace/name`)
 */
export function refuseFreshSupplied(descriptor: PlatformDescriptor, names: readonly string[]): void {
  const matches = (name: string, c: CredentialSpec) => name === c.name || name === `${c.namespace}/${c.name}`;
  const namedSupplied = names.filter((name) => descriptor.credentials.some((c) => matches(name, c) && isSuppliedCredential(c)));
  if (namedSupplied.length > 0) {
    const kinds = new Set(
      descriptor.credentials
        .filter((c) => namedSupplied.some((name) => matches(name, c)))
        .flatMap((c) => Object.values(c.keys).flatMap((s) => ('supplied' in s ? [s.supplied] : []))),
    );
    // Where a new value comes from, in the flags that give it.
    const flags = [...(kinds.has('registry-auth') ? ['--registry-auth'] : []), ...(kinds.has('notification-address') ? ['--notification-address-file'] : [])];
    throw new ValidationError([
      {
        field: 'credential',
        message: `${namedSupplied.join(', ')}: supplied by the caller (${[...kinds].sort().join(', ')}), not generated, so there are no fresh values to make up: re-encrypt the one in Git with the controller's old private key (--recovery-private-key), or render the cluster with the new credential (${flags.join(', ')})`,
      },
    ]);
  }
}

const isSuppliedCredential = (c: CredentialSpec) => Object.values(c.keys).some((source) => 'supplied' in source);

/** What fresh values need besides their SealedSecrets. */
export interface FreshValuesFollowUp {
  /** Repository-relative path → content: the password-change Jobs and the kustomizations listing them. */
  readonly files: ReadonlyMap<string, string>;
  readonly passwordChanges: readonly PasswordChangeJob[];
  /** `Kind namespace/name` of each workload that reads a rotated Secret, sorted. */
  readonly restart: readonly string[];
  /** Rotated credentials with no `passwordChange`: nothing to change besides the Secret. */
  readonly readOnly: readonly string[];
}

/**
 * For credentials just sealed anew with fresh values: the Job beside each one
 * whose database keeps the password (`passwordChange` in scaffold.yaml), named
 * by the hash of its new ciphertexts, listed in its layer's sealed
 * kustomization; and the workloads to restart. `rotate --fresh-values` and a
 * rotation run with fresh values both write exactly these.
 * @param tree - holds each rotated SealedSecret as sealed now (repository-relative paths); kustomizations are read from it, else from `reader`
 */
export async function freshValuesFollowUp(
  reader: RepoReader,
  options: {
    readonly gitopsPath: string;
    readonly descriptor: PlatformDescriptor;
    readonly rotated: readonly Omit<RotatedCredential, 'values'>[];
    readonly tree: ReadonlyMap<string, string>;
  },
): Promise<FreshValuesFollowUp> {
  const { gitopsPath, descriptor, rotated, tree } = options;
  const files = new Map<string, string>();
  const passwordChanges: PasswordChangeJob[] = [];
  for (const c of rotated) {
    const spec = descriptor.credentials.find((d) => d.namespace === c.namespace && d.name === c.name);
    if (spec?.passwordChange === undefined) continue;
    const path = `${gitopsPath}/${c.file}`;
    const sealed = parseYamlDocuments(tree.get(path)!, path)[0] as { spec: { encryptedData: Record<string, string> } };
    const input = { namespace: c.namespace, name: c.name, change: spec.passwordChange, encryptedData: sealed.spec.encryptedData };
    const job = passwordChangeJobName(input);
    const jobFile = `${gitopsPath}/${c.layer}/sealed/${job}.yaml`;
    files.set(jobFile, passwordChangeManifest(input));
    passwordChanges.push({ namespace: c.namespace, credential: c.name, job, file: jobFile });
  }
  // The Jobs are applied with the layer's SealedSecrets: listed in the same kustomization.
  for (const change of passwordChanges) {
    const kustomization = `${change.file.slice(0, change.file.lastIndexOf('/'))}/kustomization.yaml`;
    const text =
      files.get(kustomization) ??
      tree.get(kustomization) ??
      (await reader.read(kustomization)) ??
      toYaml({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [] });
    files.set(kustomization, withResource(text, change.file.slice(change.file.lastIndexOf('/') + 1)));
  }
  const restart = await readersOf(reader, gitopsPath, rotated);
  const readOnly = rotated
    .filter((r) => descriptor.credentials.find((d) => d.namespace === r.namespace && d.name === r.name)?.passwordChange === undefined)
    .map((r) => `${r.namespace}/${r.name}`);
  return { files, passwordChanges, restart, readOnly };
}

/** The SealedSecret a credential's file holds. */
function sealedSecretIn(text: string, path: string): Record<string, unknown> {
  const object = parseYamlDocuments(text, path)[0];
  if (!isRecord(object) || object.kind !== 'SealedSecret') throw new ValidationError([{ field: 'credential', message: `${path} is not a SealedSecret` }]);
  return object;
}

/**
 * The `encryptedData` of the controller's answer, checked against what was sent: the same name,
 * namespace and keys. Only the ciphertext is taken: the answer's template is the controller's
 * rebuild (it copies the SealedSecret's metadata, our annotation included, into the template when
 * the two differ), and taking it would change the Secret the cluster gets.
 */
function controllerData(sent: Record<string, unknown>, answer: unknown, path: string): Record<string, string> {
  const refuse = (why: string) =>
    new ValidationError([{ field: 'credential', message: `the Sealed Secrets controller's /v1/rotate answer for ${path} ${why}: nothing was written` }]);
  const sentMeta = isRecord(sent.metadata) ? sent.metadata : {};
  const sentData = isRecord(sent.spec) && isRecord(sent.spec.encryptedData) ? sent.spec.encryptedData : {};
  if (!isRecord(answer) || !isRecord(answer.metadata) || !isRecord(answer.spec) || !isRecord(answer.spec.encryptedData)) throw refuse('is not a SealedSecret');
  if (answer.metadata.name !== sentMeta.name || answer.metadata.namespace !== sentMeta.namespace) throw refuse('names another SealedSecret');
  const data = answer.spec.encryptedData;
  const keys = (o: Record<string, unknown>) => Object.keys(o).sort().join(',');
  if (keys(data) !== keys(sentData) || !Object.values(data).every((v) => typeof v === 'string' && v.length > 0)) throw refuse('does not hold the same keys');
  return data as Record<string, string>;
}

/** A SealedSecret file with new `encryptedData` sealed for `certificate` (same values, same scope), its comments and other fields kept. */
function withEncryptedData(text: string, data: Record<string, string>, certificate: SealingCertificate): string {
  const doc = parseDocument(text);
  doc.setIn(['spec', 'encryptedData'], doc.createNode(data));
  doc.setIn(['metadata', 'annotations', SEALED_WITH_ANNOTATION], sealedWithOf(certificate));
  return documentToYaml(doc);
}
