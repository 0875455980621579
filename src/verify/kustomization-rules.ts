/**
 * The rules of the generated tree for one Flux Kustomization's own spec
 * (DESIGN.md, "Rules of the generated tree"): a source, bounded and retried
 * reconciles, and "applied" meaning "ready" before dependents start.
 * flux bootstrap writes (and rewrites) the cluster's own sync Kustomization
 * in flux-system/; the tree's rules for its layers are not its author's to meet.
 */
import { isRecord } from '../model/is-record.js';

const FLUX_NAMESPACE = 'flux-system';
/** DESIGN: every Kustomization sets these, so a failure retries and "applied" is bounded in time. */
const REQUIRED_SETTINGS = ['prune', 'interval', 'retryInterval', 'timeout'] as const;

/** The sync Kustomization `flux bootstrap` writes into `<cluster>/flux-system/`. */
export function isBootstrapSync(key: string, file: string, clusterDir: string): boolean {
  return key === `${FLUX_NAMESPACE}/${FLUX_NAMESPACE}` && file.startsWith(`${clusterDir}/${FLUX_NAMESPACE}/`);
}

/** One message per rule the spec breaks. */
export function kustomizationRuleIssues(spec: Record<string, unknown>, bootstrapSync: boolean): string[] {
  const issues: string[] = [];
  const sourceRef = spec.sourceRef;
  if (!isRecord(sourceRef) || typeof sourceRef.kind !== 'string' || typeof sourceRef.name !== 'string') {
    issues.push('spec.sourceRef is not set (kind and name)');
  }
  if (bootstrapSync) return issues;
  const missing = REQUIRED_SETTINGS.filter((name) => spec[name] === undefined || spec[name] === null);
  if (missing.length > 0) {
    issues.push(`${missing.map((m) => `spec.${m}`).join(', ')} not set: every Kustomization sets prune, interval, retryInterval and timeout`);
  }
  const healthChecks = Array.isArray(spec.healthChecks) && spec.healthChecks.length > 0;
  const healthCheckExprs = Array.isArray(spec.healthCheckExprs) && spec.healthCheckExprs.length > 0;
  if (!healthChecks && !healthCheckExprs && spec.wait !== true) {
    issues.push('neither spec.healthChecks nor spec.wait: true is set: "applied" would not mean "ready" before dependents start');
  }
  return issues;
}
