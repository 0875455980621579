/**
 * SealedSecrets that the controller cannot unseal where the tree puts them.
 * Sealing binds each value to a label: `namespace/name` in strict scope (the
 * default), `namespace` when `sealedsecrets.bitnami.com/namespace-wide`, none
 * when `cluster-wide`. The controller decrypts with the label of the
 * SealedSecret *as applied* (its own metadata, read in Unseal through
 * labelFor(smeta)) and names the Secret after that metadata too, whatever
 * spec.template says. So a kustomize `namePrefix`/`namespace` transform, a Flux
 * `targetNamespace`, or a hand edit of metadata that moves a strict-scoped
 * SealedSecret leaves it undecryptable, and every reference to its Secret
 * dangles. (bitnami-labs/sealed-secrets, pkg/apis/sealedsecrets/v1alpha1/
 * sealedsecret_expansion.go: EncryptionLabel, Unseal.)
 *
 * The scope it was sealed for is not readable from the ciphertext without the
 * private key. What the tree records is spec.template.metadata: the generator
 * (sealing/sealed-secret.ts) writes the namespace and name it seals for there,
 * and so does kubeseal (NewSealedSecret copies the Secret's ObjectMeta into the
 * template). Neither kustomize's name/namespace transformers nor Flux's
 * targetNamespace rewrite it for a custom kind, so after the build it still
 * says what the values were sealed for. The sealed-with record
 * (gitops/sealed-with.ts) names only the certificate, and provenance only
 * file paths, so neither can say it. A SealedSecret whose template names
 * neither is checked by nothing here: nothing says what it was sealed for.
 */
import { scopeOfSealedSecret } from '../sealing/sealed-secret.js';
import type { SealingScope } from '../sealing/seal.js';
import { appliedNamespace, groupOf, metadataOf, nameOf, specOf, type AppliedKustomization } from './applied-object.js';
import type { Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';

/** The objects of one applier, with the namespace each lands in. */
export interface SealedSecretScopeInput {
  readonly clusterDir: string;
  readonly rootObjects?: readonly Record<string, unknown>[];
  readonly kustomizations: readonly AppliedKustomization[];
}

/** Why a SealedSecret cannot be unsealed where it is applied; undefined when it can (or nothing says). */
export interface ScopeMismatch {
  readonly scope: SealingScope;
  /** `namespace/name` (strict) or `namespace` (namespace-wide) it was sealed for. */
  readonly sealedFor: string;
  /** The same, as built. */
  readonly built: string;
}

export function isSealedSecret(object: Record<string, unknown>): boolean {
  return object.kind === 'SealedSecret' && groupOf(object.apiVersion) === 'bitnami.com';
}

/** Compares the label the values were sealed with against the one the controller will use for this built object. */
export function scopeMismatch(object: Record<string, unknown>, namespace: string | undefined): ScopeMismatch | undefined {
  const scope = scopeOfSealedSecret(object as { metadata?: { annotations?: Record<string, unknown> } });
  if (scope === 'cluster-wide' || namespace === undefined) return undefined;
  const template = isRecord(specOf(object).template) ? metadataOf(specOf(object).template) : {};
  const sealedNamespace = typeof template.namespace === 'string' && template.namespace !== '' ? template.namespace : undefined;
  const sealedName = typeof template.name === 'string' && template.name !== '' ? template.name : undefined;
  const name = nameOf(object);
  if (scope === 'namespace-wide') {
    if (sealedNamespace === undefined || sealedNamespace === namespace) return undefined;
    return { scope, sealedFor: sealedNamespace, built: namespace };
  }
  if (sealedNamespace === undefined && sealedName === undefined) return undefined;
  if ((sealedNamespace ?? namespace) === namespace && (sealedName ?? name) === name) return undefined;
  return { scope, sealedFor: `${sealedNamespace ?? namespace}/${sealedName ?? name}`, built: `${namespace}/${name}` };
}

/** One finding per SealedSecret built under another namespace/name than the one its values were sealed for. */
export function checkSealedSecretScopes(input: SealedSecretScopeInput): Finding[] {
  const findings: Finding[] = [];
  const check = (object: Record<string, unknown>, namespace: string | undefined, file: string): void => {
    if (!isSealedSecret(object)) return;
    const mismatch = scopeMismatch(object, namespace);
    if (mismatch === undefined) return;
    const { scope, sealedFor, built } = mismatch;
    const secret = `${namespace}/${nameOf(object)}`;
    findings.push({
      file,
      object: `SealedSecret ${secret}`,
      message: `sealed for ${sealedFor} (${scope} scope, spec.template.metadata) but built as ${built}: the controller decrypts with the applied ${scope === 'strict' ? 'namespace/name' : 'namespace'}, so unsealing fails and Secret ${secret} is never created. Keep it out of the namePrefix/nameSuffix/namespace transform (or targetNamespace) that renames it, or reseal it for ${built}`,
    });
  };
  for (const object of input.rootObjects ?? []) {
    const own = metadataOf(object).namespace;
    check(object, typeof own === 'string' && own !== '' ? own : 'flux-system', input.clusterDir);
  }
  for (const k of input.kustomizations) for (const object of k.objects) check(object, appliedNamespace(object, k.object), k.dir);
  return findings;
}
