/**
 * Secrets and ConfigMaps a workload mounts or reads that nothing creates. The
 * Pod then never starts (CreateContainerConfigError, a volume that cannot
 * mount, an image it cannot pull) and the Kustomization's health check times
 * out. A reference resolves when the cluster's tree holds the object in the
 * same namespace: a Secret or ConfigMap, a SealedSecret that unseals into it
 * (named as built, and only when built for the scope it was sealed for), a
 * cert-manager Certificate or an ExternalSecret that writes it, or an entry of
 * scaffold.yaml `provided`. HelmRelease `valuesFrom` and Flux source
 * `secretRef` are read the same way. References marked optional are skipped.
 */
import type { ProvidedSpec } from '../gitops/platform-prerequisites.js';
import { appliedNamespace, metadataOf, nameOf, specOf, type AppliedKustomization } from './applied-object.js';
import { fieldPath } from './field-path.js';
import type { Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';
import { objectLabel } from './object-label.js';
import { isSealedSecret, scopeMismatch } from './sealed-secret-scope.js';

type RefKind = 'Secret' | 'ConfigMap';

interface Reference {
  readonly kind: RefKind;
  readonly name: string;
  readonly path: (string | number)[];
}

/** The pod spec of a workload, and its path in the object. */
function podSpecOf(object: Record<string, unknown>): { spec: Record<string, unknown>; path: string[] } | undefined {
  const spec = specOf(object);
  if (object.kind === 'Pod') return { spec, path: ['spec'] };
  if (object.kind === 'CronJob') {
    const job = isRecord(spec.jobTemplate) ? specOf(spec.jobTemplate) : {};
    const template = isRecord(job.template) ? specOf(job.template) : undefined;
    return template ? { spec: template, path: ['spec', 'jobTemplate', 'spec', 'template', 'spec'] } : undefined;
  }
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'].includes(String(object.kind)) && isRecord(spec.template)) {
    return { spec: specOf(spec.template), path: ['spec', 'template', 'spec'] };
  }
  return undefined;
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** Every required Secret/ConfigMap reference of a pod spec. */
function referencesOf(spec: Record<string, unknown>, base: string[]): Reference[] {
  const refs: Reference[] = [];
  const add = (kind: RefKind, holder: unknown, key: string, path: (string | number)[]): void => {
    if (!isRecord(holder) || holder.optional === true || typeof holder[key] !== 'string') return;
    refs.push({ kind, name: holder[key], path: [...base, ...path] });
  };
  list(spec.imagePullSecrets).forEach((s, i) => add('Secret', s, 'name', ['imagePullSecrets', i]));
  for (const group of ['initContainers', 'containers', 'ephemeralContainers']) {
    list(spec[group]).forEach((c, i) => {
      list(c.env).forEach((e, j) => {
        const from = isRecord(e.valueFrom) ? e.valueFrom : {};
        add('Secret', from.secretKeyRef, 'name', [group, i, 'env', j, 'valueFrom', 'secretKeyRef']);
        add('ConfigMap', from.configMapKeyRef, 'name', [group, i, 'env', j, 'valueFrom', 'configMapKeyRef']);
      });
      list(c.envFrom).forEach((e, j) => {
        add('Secret', e.secretRef, 'name', [group, i, 'envFrom', j, 'secretRef']);
        add('ConfigMap', e.configMapRef, 'name', [group, i, 'envFrom', j, 'configMapRef']);
      });
    });
  }
  list(spec.volumes).forEach((v, i) => {
    add('Secret', v.secret, 'secretName', ['volumes', i, 'secret']);
    add('ConfigMap', v.configMap, 'name', ['volumes', i, 'configMap']);
    const projected = isRecord(v.projected) ? list(v.projected.sources) : [];
    projected.forEach((s, j) => {
      add('Secret', s.secret, 'name', ['volumes', i, 'projected', 'sources', j, 'secret']);
      add('ConfigMap', s.configMap, 'name', ['volumes', i, 'projected', 'sources', j, 'configMap']);
    });
  });
  return refs;
}

/**
 * Every required Secret/ConfigMap reference of an object, all read in its own
 * namespace: a workload's pod spec, a HelmRelease's `valuesFrom` (helm-controller
 * fails the release without it), a Flux source's `secretRef` (its credentials).
 */
function objectReferencesOf(object: Record<string, unknown>): Reference[] {
  const pod = podSpecOf(object);
  if (pod) return referencesOf(pod.spec, pod.path);
  const spec = specOf(object);
  const group = typeof object.apiVersion === 'string' ? object.apiVersion.split('/')[0] : '';
  if (object.kind === 'HelmRelease' && group === 'helm.toolkit.fluxcd.io') {
    return list(spec.valuesFrom).flatMap((v, i) =>
      (v.kind === 'Secret' || v.kind === 'ConfigMap') && v.optional !== true && typeof v.name === 'string'
        ? [{ kind: v.kind, name: v.name, path: ['spec', 'valuesFrom', i] }]
        : [],
    );
  }
  // The cluster's own sync source reads the Secret `flux bootstrap` (or whoever installs the FluxInstance) creates outside Git.
  const clusterSync = nameOf(object) === 'flux-system' && metadataOf(object).namespace === 'flux-system';
  if (group === 'source.toolkit.fluxcd.io' && !clusterSync && isRecord(spec.secretRef) && typeof spec.secretRef.name === 'string') {
    return [{ kind: 'Secret', name: spec.secretRef.name, path: ['spec', 'secretRef'] }];
  }
  return [];
}

/** `Kind namespace/name` of every Secret and ConfigMap the objects create, directly or through a controller. */
function createdBy(object: Record<string, unknown>, namespace: string | undefined): string[] {
  const spec = specOf(object);
  if (object.kind === 'Secret' || object.kind === 'ConfigMap') return namespace ? [`${object.kind} ${namespace}/${nameOf(object)}`] : [];
  if (isSealedSecret(object)) {
    // The controller names the Secret after the SealedSecret as applied, never
    // after spec.template (Unseal sets both from the SealedSecret's own
    // metadata), and creates none when the values were sealed for another scope.
    return namespace && scopeMismatch(object, namespace) === undefined ? [`Secret ${namespace}/${nameOf(object)}`] : [];
  }
  if (object.kind === 'Certificate' && typeof spec.secretName === 'string' && namespace) return [`Secret ${namespace}/${spec.secretName}`];
  if (object.kind === 'ExternalSecret' && namespace) {
    const target = isRecord(spec.target) && typeof spec.target.name === 'string' ? spec.target.name : nameOf(object);
    return [`Secret ${namespace}/${target}`];
  }
  return [];
}

/** What the check reads. */
export interface WorkloadReferencesInput {
  readonly kustomizations: readonly AppliedKustomization[];
  /** What the root sync applies (applied into flux-system when it names no namespace). */
  readonly rootObjects?: readonly Record<string, unknown>[];
  readonly provided?: ProvidedSpec;
  /**
   * `namespace/name` of pull secrets written only when the caller supplies
   * them. Missing, they are no finding as an imagePullSecrets entry: the
   * kubelet then pulls anonymously (a FailedToRetrieveImagePullSecret warning),
   * so public images start. Read any other way they must exist.
   */
  readonly suppliedPullSecrets?: readonly string[];
}

/** One finding per reference to a Secret or ConfigMap nothing in the tree creates. */
export function checkWorkloadReferences(input: WorkloadReferencesInput): Finding[] {
  const created = new Set<string>([
    ...(input.provided?.secrets ?? []).map((s) => `Secret ${s}`),
    ...(input.provided?.configMaps ?? []).map((s) => `ConfigMap ${s}`),
  ]);
  for (const object of input.rootObjects ?? []) {
    for (const ref of createdBy(object, typeof metadataOf(object).namespace === 'string' ? String(metadataOf(object).namespace) : 'flux-system'))
      created.add(ref);
  }
  for (const k of input.kustomizations)
    for (const object of k.objects) for (const ref of createdBy(object, appliedNamespace(object, k.object))) created.add(ref);

  const findings: Finding[] = [];
  for (const k of input.kustomizations) {
    for (const object of k.objects) {
      const namespace = appliedNamespace(object, k.object);
      if (namespace === undefined) continue;
      for (const ref of objectReferencesOf(object)) {
        // Kubernetes creates this one in every namespace.
        if (ref.kind === 'ConfigMap' && ref.name === 'kube-root-ca.crt') continue;
        if (ref.name.includes('${') || created.has(`${ref.kind} ${namespace}/${ref.name}`)) continue;
        if (ref.path.includes('imagePullSecrets') && input.suppliedPullSecrets?.includes(`${namespace}/${ref.name}`)) continue;
        const elsewhere = [...created].filter((c) => c.startsWith(`${ref.kind} `) && c.endsWith(`/${ref.name}`)).map((c) => c.slice(ref.kind.length + 1));
        findings.push({
          file: k.dir,
          object: objectLabel({ ...object, metadata: { ...metadataOf(object), namespace } }),
          message: `${fieldPath(ref.path)}: ${ref.kind} ${namespace}/${ref.name} does not exist in the cluster's tree${elsewhere.length > 0 ? ` (only ${elsewhere.sort().join(', ')}: ${podSpecOf(object) ? 'a Pod reads' : `a ${String(object.kind)} reads`} its own namespace only)` : ''}: add it (sealed, for a Secret), fix the name, or list it in scaffold.yaml provided.${ref.kind === 'Secret' ? 'secrets' : 'configMaps'}`,
        });
      }
    }
  }
  return findings;
}
