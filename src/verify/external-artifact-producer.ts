/**
 * Kustomizations waiting for an artifact nothing produces. A Kustomization
 * with `sourceRef.kind: ExternalArtifact` applies what an ArtifactGenerator
 * sliced out of a source, and ArtifactGenerator is reconciled by
 * source-watcher alone: on a cluster whose FluxInstance does not install it,
 * the ExternalArtifact never gets an artifact and the Kustomization stays not
 * Ready ("source not found") for good. A tree without a FluxInstance (flux
 * bootstrap, whose components verify cannot see) is not judged.
 */
import { SOURCE_WATCHER } from '../gitops/source-watcher.js';
import { specOf } from './applied-object.js';
import { clusterFluxInstanceSpec, placedObjects, type ClusterObjects } from './cluster-flux-instance.js';
import type { Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';
import { objectLabel } from './object-label.js';

/** One finding per Kustomization sourcing from an ExternalArtifact on a cluster whose FluxInstance lacks source-watcher. */
export function checkExternalArtifactProducer(input: ClusterObjects): Finding[] {
  const spec = clusterFluxInstanceSpec(input);
  if (spec === undefined) return [];
  const components = Array.isArray(spec.components) ? spec.components : [];
  if (components.includes(SOURCE_WATCHER)) return [];
  const findings: Finding[] = [];
  for (const { object, dir } of placedObjects(input)) {
    if (object.kind !== 'Kustomization' || typeof object.apiVersion !== 'string' || !object.apiVersion.startsWith('kustomize.toolkit.fluxcd.io/')) continue;
    const sourceRef = specOf(object).sourceRef;
    if (!isRecord(sourceRef) || sourceRef.kind !== 'ExternalArtifact') continue;
    findings.push({
      file: dir,
      object: objectLabel(object),
      message: `sources from ExternalArtifact ${String(sourceRef.name ?? '')}, which only source-watcher produces (it reconciles the ArtifactGenerator), but the cluster's FluxInstance components do not include source-watcher: the Kustomization is never Ready. Add source-watcher to spec.components (a render adds it when the tree needs it)`,
    });
  }
  return findings;
}
