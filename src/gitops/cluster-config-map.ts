/**
 * The cluster's `cluster-config` ConfigMap: the reference's, with the new
 * cluster's identity and attributes, which every layer substitutes from.
 */
import { parseDocument } from 'yaml';
import { CLUSTER_ATTRIBUTES, type ClusterSpec } from '../model/cluster-spec.js';
import { rewriteIdentity } from './cluster-identity.js';
import { ATTRIBUTE_CONFIG_KEYS, type ResolvedAttributes } from './layer-catalog.js';
import type { PlatformDescriptor } from './platform-descriptor.js';
import type { ReferenceEnvironment } from './reference-environment.js';
import { documentToYaml } from './yaml.js';

/**
 * The cluster-config key naming the kind of the platform repository's source,
 * for Kustomizations of the shared roots that read it themselves
 * (`kind: ${flux_source_kind:=GitRepository}`): set only when a FluxInstance
 * syncs from an OCI artifact, whose source is an OCIRepository.
 */
export const FLUX_SOURCE_KIND_KEY = 'flux_source_kind';

export function renderClusterConfig(
  reference: ReferenceEnvironment,
  cluster: ClusterSpec,
  attributes: ResolvedAttributes,
  descriptor: PlatformDescriptor,
  syncKind?: string,
): string {
  const doc = parseDocument(rewriteIdentity(documentToYaml(reference.configMap), reference.identity, cluster));
  doc.setIn(['data', 'cluster_name'], cluster.name);
  doc.setIn(['data', 'cluster_domain'], cluster.domain);
  doc.setIn(['data', 'cluster_region'], cluster.region);
  // The catalog attributes, for manifests that differ by them in values rather than layers.
  for (const name of CLUSTER_ATTRIBUTES) {
    const value = attributes[name];
    if (value !== undefined) doc.setIn(['data', ATTRIBUTE_CONFIG_KEYS[name]], value);
  }
  // What differs by attribute value in values rather than in layers (a storage class, a gateway class).
  for (const name of CLUSTER_ATTRIBUTES) {
    const value = attributes[name];
    const entries = value !== undefined ? descriptor.attributes?.[name]?.config?.[value] : undefined;
    for (const [key, text] of Object.entries(entries ?? {})) doc.setIn(['data', key], text);
  }
  if (syncKind !== undefined && syncKind !== 'GitRepository') doc.setIn(['data', FLUX_SOURCE_KIND_KEY], syncKind);
  else if (doc.hasIn(['data', FLUX_SOURCE_KIND_KEY])) doc.deleteIn(['data', FLUX_SOURCE_KIND_KEY]);
  // Flux re-reconciles every Kustomization substituting from a watched ConfigMap
  // as soon as it changes, instead of waiting out the interval.
  doc.setIn(['metadata', 'labels', 'reconcile.fluxcd.io/watch'], 'Enabled');
  return documentToYaml(doc);
}
