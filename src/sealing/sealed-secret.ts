/**
 * The SealedSecret object (bitnami.com/v1alpha1), shaped the way `kubeseal`
 * writes it, so the controller turns it into the Secret the caller described.
 */
import { ValidationError, type FieldIssue } from '../errors.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { SEALING_SCOPES, scopeLabel, sealValue, type SealingScope } from './seal.js';
import type { SealingCertificate } from './sealing-certificate.js';

const NAMESPACE_WIDE = 'sealedsecrets.bitnami.com/namespace-wide';
const CLUSTER_WIDE = 'sealedsecrets.bitnami.com/cluster-wide';

// kubectl and kubecfg keep a full copy of an applied object here, which for a
// Secret is its plaintext; upstream strips them for that reason (sealed-secrets #227).
const LAST_APPLIED = ['kubectl.kubernetes.io/last-applied-configuration', 'kubecfg.ksonnet.io/last-applied-configuration'];

// A Secret's name is a DNS-1123 subdomain (dots allowed), its namespace a label.
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// Secret data keys: k8s.io/apimachinery validation.IsConfigMapKey.
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;

/** A SealedSecret as plain data, ready to serialize. */
export interface SealedSecretObject {
  apiVersion: 'bitnami.com/v1alpha1';
  kind: 'SealedSecret';
  metadata: {
    name: string;
    namespace: string;
    /** Carries the scope: the controller reads it here, not from the template. */
    annotations?: Record<string, string>;
  };
  spec: {
    /** Key → sealed value, keys sorted. */
    encryptedData: Record<string, string>;
    template: {
      metadata: {
        name: string;
        namespace: string;
        labels?: Record<string, string>;
        annotations?: Record<string, string>;
      };
      type: string;
      immutable?: boolean;
    };
  };
}

function sortedRecord(entries: Iterable<readonly [string, string]>): Record<string, string> {
  return Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function scopeAnnotations(scope: SealingScope): Record<string, string> {
  // The string "true", exactly: the controller compares with == "true", so a YAML boolean does not count.
  if (scope === 'namespace-wide') return { [NAMESPACE_WIDE]: 'true' };
  if (scope === 'cluster-wide') return { [CLUSTER_WIDE]: 'true' };
  return {};
}

function checkStringMap(map: Readonly<Record<string, unknown>> | undefined, field: string, issues: FieldIssue[]): void {
  for (const [key, value] of Object.entries(map ?? {})) {
    if (typeof value !== 'string') issues.push({ field: `${field}.${key}`, message: 'must be a string' });
  }
}

/**
 * Builds a SealedSecret whose every value is sealed with the certificate's key
 * under the scope's label.
 *
 * The scope goes on the SealedSecret's own `metadata.annotations`, where the
 * controller reads it; like `kubeseal`, it is repeated on the template (whose
 * annotations become the Secret's), which is where `SealedSecret.Scope()` in
 * upstream tooling looks. Scope annotations passed in `annotations` are replaced
 * by the ones `scope` implies, and kubectl/kubecfg last-applied annotations are
 * dropped so no plaintext copy rides along. Keys are sorted so the same input
 * has the same shape; the ciphertexts themselves differ on every call.
 *
 * @param opts.data - key → raw value (a string is taken as UTF-8), not base64
 * @param opts.type - the Secret type
 * @default opts.type `Opaque`
 * @throws ValidationError naming each bad field (`metadata.name`, `metadata.namespace`, `data`, `data.<key>`, …)
 */
export function buildSealedSecret(opts: {
  name: string;
  namespace: string;
  scope: SealingScope;
  type?: string;
  immutable?: boolean;
  data: Readonly<Record<string, Buffer | string>>;
  labels?: Readonly<Record<string, string>>;
  annotations?: Readonly<Record<string, string>>;
  certificate: SealingCertificate;
}): SealedSecretObject {
  const { name, namespace, scope, certificate } = opts;
  const type = opts.type ?? 'Opaque';
  const issues: FieldIssue[] = [];

  if (typeof name !== 'string' || name === '') {
    issues.push({ field: 'metadata.name', message: 'is required' });
  } else if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    issues.push({
      field: 'metadata.name',
      message: 'must be a DNS-1123 subdomain: lower-case letters, digits, "-" and ".", at most 253 characters',
    });
  }
  const ns = clusterNameSchema.safeParse(namespace);
  if (namespace === undefined || namespace === '') {
    issues.push({ field: 'metadata.namespace', message: 'is required' });
  } else if (!ns.success) {
    issues.push({ field: 'metadata.namespace', message: ns.error.issues[0]?.message ?? 'is not a valid namespace' });
  }
  if (!SEALING_SCOPES.includes(scope)) issues.push({ field: 'scope', message: `must be one of ${SEALING_SCOPES.join(', ')}` });
  if (typeof type !== 'string' || type === '') issues.push({ field: 'type', message: 'must be a non-empty string' });

  const dataKeys = Object.keys(opts.data ?? {});
  if (dataKeys.length === 0) issues.push({ field: 'data', message: 'must hold at least one value' });
  for (const key of dataKeys) {
    const value = opts.data[key];
    if (key.length > 253 || !DATA_KEY.test(key) || key === '.' || key === '..') {
      issues.push({ field: `data.${key}`, message: 'key must consist of letters, digits, "-", "_" and "." (at most 253)' });
    } else if (typeof value !== 'string' && !Buffer.isBuffer(value)) {
      issues.push({ field: `data.${key}`, message: 'must be a string or bytes' });
    }
  }
  checkStringMap(opts.labels, 'metadata.labels', issues);
  checkStringMap(opts.annotations, 'metadata.annotations', issues);
  if (issues.length > 0) throw new ValidationError(issues);

  const label = scopeLabel(scope, namespace, name);
  const encryptedData = sortedRecord(
    dataKeys.map((key) => [key, sealValue({ publicKey: certificate.publicKey, label, value: opts.data[key] ?? '' })] as const),
  );

  const ownAnnotations = scopeAnnotations(scope);
  const templateAnnotations = sortedRecord([
    ...Object.entries(opts.annotations ?? {}).filter(([key]) => !LAST_APPLIED.includes(key) && key !== NAMESPACE_WIDE && key !== CLUSTER_WIDE),
    ...Object.entries(ownAnnotations),
  ]);
  const labels = sortedRecord(Object.entries(opts.labels ?? {}));

  return {
    apiVersion: 'bitnami.com/v1alpha1',
    kind: 'SealedSecret',
    metadata: {
      name,
      namespace,
      ...(Object.keys(ownAnnotations).length > 0 ? { annotations: ownAnnotations } : {}),
    },
    spec: {
      encryptedData,
      template: {
        metadata: {
          name,
          namespace,
          ...(Object.keys(labels).length > 0 ? { labels } : {}),
          ...(Object.keys(templateAnnotations).length > 0 ? { annotations: templateAnnotations } : {}),
        },
        type,
        ...(opts.immutable !== undefined ? { immutable: opts.immutable } : {}),
      },
    },
  };
}

/**
 * The scope a SealedSecret declares, read the way the controller reads it: from
 * its own `metadata.annotations`, cluster-wide first, and only the string `"true"` counts.
 */
export function scopeOfSealedSecret(obj: { readonly metadata?: { readonly annotations?: Readonly<Record<string, unknown>> | null } | null }): SealingScope {
  const annotations = obj.metadata?.annotations ?? {};
  if (annotations[CLUSTER_WIDE] === 'true') return 'cluster-wide';
  if (annotations[NAMESPACE_WIDE] === 'true') return 'namespace-wide';
  return 'strict';
}
