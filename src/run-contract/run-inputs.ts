/**
 * The rules every scaffold request must pass, wherever it enters: the HTTP
 * API (runs and dry runs), retries, and the runner's flags. A request that
 * can only fail is refused here, before a run is stored or a step starts, and
 * no edge keeps a second copy of a rule. Edges differ only in how they name
 * fields (`sealing.certificate` on the API, `--cert` on the runner).
 */
import type { FieldIssue } from '../errors.js';
import { ValidationError } from '../errors.js';
import { assertDockerConfigJson } from '../gitops/credential-values.js';
import { assertNotificationAddress, assertNotificationProvider } from '../gitops/notification-schema.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { CLUSTER_ATTRIBUTES, clusterSpecSchema, fieldIssuesOf, type ClusterSpec } from '../model/cluster-spec.js';
import { kubeconfigIssues } from '../model/kubeconfig-policy.js';

/** A request's inputs before validation, as an edge collected them. */
export interface RunInputsDraft {
  readonly cluster: unknown;
  /** The reference environment the run renders from; a cluster may not take its name. */
  readonly reference: string;
  /** The clock a certificate's validity window is read against. @default now */
  readonly now?: Date;
  readonly certificatePem?: string;
  /** Kubeconfig text the caller sent (a Secret reference is checked where it is read). */
  readonly kubeconfig?: string;
  readonly registryDockerconfigjson?: string;
  /** Failure notifications: a Provider type and its webhook address (https). */
  readonly notifications?: { readonly provider: string; readonly address: string };
}

/** How an edge names each input in its messages. */
export interface RunInputFields {
  /** Prefix of the cluster's fields: `cluster` gives `cluster.name`. */
  readonly cluster: string;
  readonly certificate: string;
  readonly kubeconfig: string;
  readonly registry: string;
  /** The Provider type and its address, e.g. `notifications.provider` / `--notification-provider`. @default notifications.provider, notifications.address */
  readonly notificationProvider?: string;
  readonly notificationAddress?: string;
}

/** The field names of the HTTP API. */
export const API_FIELDS: RunInputFields = {
  cluster: 'cluster',
  certificate: 'sealing.certificate',
  kubeconfig: 'kubeconfig.inline',
  registry: 'registry_pull_secret.dockerconfigjson',
};

/** The attributes a platform's layer catalog knows; `undefined` when it could not be read. */
export type KnownCatalog = readonly { readonly name: string; readonly values: readonly string[] }[];

function issuesOf(error: unknown): FieldIssue[] {
  if (error instanceof ValidationError) return [...error.issues];
  throw error;
}

/**
 * Checks a request's inputs: the cluster spec (and that its name is not the
 * reference environment's), the sealing certificate, the kubeconfig (inline
 * data only) and a `.dockerconfigjson`.
 *
 * @returns the parsed cluster (when it is valid) and every issue found
 */
export function runInputIssues(draft: RunInputsDraft, fields: RunInputFields): { cluster?: ClusterSpec; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  const parsed = clusterSpecSchema.safeParse(draft.cluster);
  if (!parsed.success) issues.push(...fieldIssuesOf(parsed.error, fields.cluster));
  else if (parsed.data.name === draft.reference) {
    issues.push({
      field: `${fields.cluster}.name`,
      message: `"${draft.reference}" is the reference environment every cluster is rendered from; choose another name`,
    });
  }
  if (draft.certificatePem !== undefined) {
    try {
      parseSealingCertificate(draft.certificatePem, fields.certificate, draft.now ?? new Date());
    } catch (error) {
      // Some messages carry the field as a "field: " prefix as well.
      for (const issue of issuesOf(error)) issues.push({ field: fields.certificate, message: issue.message.replace(`${fields.certificate}: `, '') });
    }
  }
  if (draft.kubeconfig !== undefined) issues.push(...kubeconfigIssues(draft.kubeconfig, fields.kubeconfig));
  if (draft.registryDockerconfigjson !== undefined) {
    try {
      assertDockerConfigJson(draft.registryDockerconfigjson, fields.registry);
    } catch (error) {
      issues.push(...issuesOf(error));
    }
  }
  if (draft.notifications !== undefined) {
    // The platform may offer fewer types; the render says so. These are the types any platform can have.
    for (const check of [
      () => assertNotificationProvider(draft.notifications!.provider, fields.notificationProvider ?? 'notifications.provider'),
      () => assertNotificationAddress(draft.notifications!.address, fields.notificationAddress ?? 'notifications.address'),
    ]) {
      try {
        check();
      } catch (error) {
        issues.push(...issuesOf(error));
      }
    }
  }
  return { ...(parsed.success ? { cluster: parsed.data } : {}), issues };
}

/**
 * Checks a cluster's catalog attributes against the platform's layer catalog,
 * when it is known: an attribute the platform has no catalog for, or a value
 * its catalog does not list, would only fail the render later.
 */
export function catalogIssues(cluster: ClusterSpec, catalog: KnownCatalog, prefix: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const name of CLUSTER_ATTRIBUTES) {
    const value = cluster[name];
    if (value === undefined) continue;
    const attribute = catalog.find((a) => a.name === name);
    if (attribute === undefined) {
      issues.push({
        field: `${prefix}.${name}`,
        message:
          catalog.length === 0
            ? 'the target platform has no layer catalog, so it takes no cluster attributes; leave it out'
            : `the target platform's layer catalog does not select by ${name}; leave it out`,
      });
    } else if (!attribute.values.includes(value)) {
      issues.push({ field: `${prefix}.${name}`, message: `must be one of the values the target platform's catalog lists: ${attribute.values.join(', ')}` });
    }
  }
  return issues;
}
