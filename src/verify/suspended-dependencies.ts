/**
 * Opt-in layers ship suspended (`spec.suspend: true`), and Flux holds back a
 * Kustomization whose dependsOn names a suspended one for as long as it stays
 * suspended: it reports DependencyNotReady and never becomes Ready. A layer
 * that is not suspended itself may therefore depend on a suspended one only
 * by mistake: the platform made an always-on layer depend on an optional one,
 * or the cluster enabled a layer without the optional layer it needs.
 */
import { refKey, type FluxNode } from '../graph/flux-graph.js';
import type { Finding } from './finding.js';

/** One Kustomization of the cluster, where it is written. */
export interface SuspendableKustomization {
  readonly node: FluxNode;
  readonly file: string;
}

/** A finding per dependsOn from an active Kustomization onto a suspended one. */
export function checkSuspendedDependencies(kustomizations: readonly SuspendableKustomization[]): Finding[] {
  const suspended = new Set(kustomizations.filter((k) => k.node.suspended).map((k) => refKey(k.node)));
  const findings: Finding[] = [];
  for (const { node, file } of kustomizations) {
    if (node.suspended) continue;
    for (const dependency of node.dependsOn) {
      const key = refKey(dependency);
      if (!suspended.has(key)) continue;
      findings.push({
        file,
        object: `Kustomization ${refKey(node)}`,
        message:
          `dependsOn ${key}, which is suspended (spec.suspend: true, an opt-in layer not enabled here): Flux holds this one back as DependencyNotReady and it never becomes Ready. ` +
          'Enable that layer on this cluster, make this layer optional too, or drop the dependency',
      });
    }
  }
  return findings;
}
