/**
 * healthChecks that wait for nothing. Flux waits for each named object to be
 * Ready; one the Kustomization's build does not produce is never found, so
 * the Kustomization times out and everything depending on it waits forever.
 */
import { appliedNamespace, groupOf, nameOf, specOf, type AppliedKustomization } from './applied-object.js';
import type { Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';

/** One finding per healthChecks entry that names no object of the build. */
export function checkHealthCheckTargets(kustomizations: readonly AppliedKustomization[]): Finding[] {
  const findings: Finding[] = [];
  for (const k of kustomizations) {
    const checks = specOf(k.object).healthChecks;
    if (!Array.isArray(checks)) continue;
    checks.forEach((check, index) => {
      if (!isRecord(check) || typeof check.kind !== 'string' || typeof check.name !== 'string') return;
      const namespace = typeof check.namespace === 'string' ? check.namespace : undefined;
      // A value still holding ${var} is resolved on the cluster; nothing to compare offline.
      if ([check.name, namespace ?? ''].some((v) => v.includes('${'))) return;
      const group = typeof check.apiVersion === 'string' ? groupOf(check.apiVersion) : undefined;
      const match = k.objects.some(
        (o) =>
          o.kind === check.kind &&
          nameOf(o) === check.name &&
          (group === undefined || groupOf(o.apiVersion) === group) &&
          (namespace === undefined || appliedNamespace(o, k.object) === namespace),
      );
      if (match) return;
      const target = `${check.kind} ${namespace !== undefined ? `${namespace}/` : ''}${check.name}`;
      const sameName = k.objects.filter((o) => o.kind === check.kind).map((o) => `${appliedNamespace(o, k.object) ?? ''}/${nameOf(o)}`.replace(/^\//, ''));
      findings.push({
        file: k.file,
        object: `Kustomization ${k.key}`,
        message: `spec.healthChecks[${index}] waits for ${target}, which ${k.dir} does not build: the Kustomization never becomes Ready. Name an object it applies${sameName.length > 0 ? ` (its ${check.kind}s: ${sameName.sort().join(', ')})` : ''}, or move the check to the Kustomization that applies it`,
      });
    });
  }
  return findings;
}
