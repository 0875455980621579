/**
 * Flux objects labelled for a shard nobody runs. With sharding, the Flux
 * Operator starts the main source-, kustomize- and helm-controller with
 * `--watch-label-selector=!<key>` and each shard's with `<key>=<shard>`: an
 * object carrying the key is skipped by the main controllers, and if its value
 * is no shard of the FluxInstance no controller picks it up either. It is never
 * reconciled and reports nothing — no error, no event, just a stale status.
 * Without `spec.sharding` the operator sets no selector, but an object labelled
 * for a shard still says it expects one that does not exist, and turning
 * sharding on later would strand it; so it is a finding too.
 *
 * Only the kinds of the controllers the operator shards count: source-,
 * kustomize- and helm-controller, the image automation pair, and from Flux 2.9
 * source-watcher (flux-operator v0.58.1 internal/builder/templates.go);
 * notification-controller is never sharded. A tree without a FluxInstance
 * (flux bootstrap, whose shards are patches verify cannot see) is not judged.
 */
import { DEFAULT_SHARDING_KEY } from '../gitops/flux-sharding.js';
import { isRecord } from '../model/is-record.js';
import { groupOf, metadataOf } from './applied-object.js';
import { clusterFluxInstanceSpec, placedObjects, type ClusterObjects } from './cluster-flux-instance.js';
import type { Finding } from './finding.js';
import { objectLabel } from './object-label.js';

/** The API groups of the controllers the operator shards (source-watcher's ArtifactGenerator is source.extensions). */
const SHARDED_GROUPS = new Set([
  'source.toolkit.fluxcd.io',
  'kustomize.toolkit.fluxcd.io',
  'helm.toolkit.fluxcd.io',
  'image.toolkit.fluxcd.io',
  'source.extensions.fluxcd.io',
]);

/** One finding per sharded-kind object whose shard label names no shard of the cluster's FluxInstance. */
export function checkShardLabels(input: ClusterObjects): Finding[] {
  const spec = clusterFluxInstanceSpec(input);
  if (spec === undefined) return [];
  const sharding = isRecord(spec.sharding) ? spec.sharding : undefined;
  const key = typeof sharding?.key === 'string' && sharding.key !== '' ? sharding.key : DEFAULT_SHARDING_KEY;
  const shards = new Set(Array.isArray(sharding?.shards) ? sharding.shards.filter((s): s is string => typeof s === 'string') : []);
  const findings: Finding[] = [];
  for (const { object, dir } of placedObjects(input)) {
    if (!SHARDED_GROUPS.has(groupOf(object.apiVersion))) continue;
    const labels = metadataOf(object).labels;
    if (!isRecord(labels) || !(key in labels)) continue;
    const value = labels[key];
    if (typeof value === 'string' && (shards.has(value) || value.includes('${'))) continue;
    findings.push({
      file: dir,
      object: objectLabel(object),
      message:
        shards.size === 0
          ? `is labelled ${key}=${String(value)}, but the cluster's FluxInstance has no spec.sharding: no shard controller exists for it, and with sharding on the main controllers would skip it, so nobody would reconcile it. Drop the label, or add the shard (fluxInstance.sharding in scaffold.yaml)`
          : `is labelled ${key}=${String(value)}, which is no shard of the cluster's FluxInstance (${[...shards].join(', ')}): the main controllers skip every object carrying ${key} and no shard takes this one, so it is never reconciled. Label it with one of the shards, or drop the label`,
    });
  }
  return findings;
}
