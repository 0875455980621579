/**
 * The bootstrap layer scaffold.yaml declares: what must run before anything
 * else can (a CNI, without which no node is Ready and no Pod starts; CRDs
 * that many layers use, such as the Gateway API's). It must have no
 * dependsOn, every other Kustomization must wait for it, it must install the
 * CRDs declared for it, and a CNI chart must be released nowhere else.
 */
import type { PlatformPrerequisites } from '../gitops/platform-prerequisites.js';
import { dependencyClosure, helmReleasesOf, type AppliedKustomization } from './applied-object.js';
import { crdObjectsOf, deferredCrdsOf } from './crd-availability.js';
import type { Finding } from './finding.js';
import { objectLabel } from './object-label.js';

/** flux bootstrap's own sync, which applies the root: it runs before every layer by construction. */
const BOOTSTRAP_SYNC = 'flux-system/flux-system';

/** Findings against scaffold.yaml's `bootstrap`; none when it declares none. */
export function checkBootstrapPrerequisites(
  clusterDir: string,
  kustomizations: readonly AppliedKustomization[],
  prerequisites: PlatformPrerequisites,
): Finding[] {
  const bootstrap = prerequisites.bootstrap;
  if (bootstrap === undefined) return [];
  const findings: Finding[] = [];
  const first = kustomizations.find((k) => k.key.endsWith(`/${bootstrap.layer}`));
  if (first === undefined) {
    return [
      {
        file: clusterDir,
        message: `scaffold.yaml bootstrap.layer ${bootstrap.layer} is not a Kustomization of this cluster: nothing installs the CNI and CRDs every layer needs first. Add the layer (render it from the catalog) or fix bootstrap.layer`,
      },
    ];
  }
  if (first.dependsOn.length > 0) {
    findings.push({
      file: first.file,
      object: `Kustomization ${first.key}`,
      message: `is the bootstrap layer but depends on ${first.dependsOn.join(', ')}: it must come first in the DAG. Remove its dependsOn`,
    });
  }
  const byKey = new Map(kustomizations.map((k) => [k.key, k]));
  for (const k of kustomizations) {
    if (k === first || k.key === BOOTSTRAP_SYNC || dependencyClosure(k.key, byKey).has(first.key)) continue;
    findings.push({
      file: k.file,
      object: `Kustomization ${k.key}`,
      message: `does not wait for the bootstrap layer ${first.key}: on a fresh cluster it runs before the CNI and the CRDs it needs. Add dependsOn ${first.key} (or on a layer that depends on it)`,
    });
  }
  const cni = new Set(bootstrap.cni);
  for (const k of kustomizations) {
    if (k === first) continue;
    for (const release of helmReleasesOf(k.objects, k.object)) {
      if (!cni.has(release.chart)) continue;
      findings.push({
        file: k.dir,
        object: objectLabel(release.object),
        message: `releases the CNI chart ${release.chart} from Kustomization ${k.key}, after the bootstrap layer: no node is Ready until it runs, so nothing before it can start. Move it into ${first.dir} (bootstrap layer ${first.key})`,
      });
    }
  }
  const installed = new Set([...crdObjectsOf(first.objects), ...deferredCrdsOf(first, prerequisites).keys()]);
  for (const crd of bootstrap.crds) {
    if (installed.has(crd)) continue;
    findings.push({
      file: first.file,
      object: `Kustomization ${first.key}`,
      message: `does not install ${crd}, which scaffold.yaml bootstrap.crds says every layer may need: add its CustomResourceDefinition to ${first.dir}, or apply the chart or artifact installing it there (declared in scaffold.yaml charts or artifacts)`,
    });
  }
  return findings;
}
