/**
 * Flux sharding as spec 004 runs it ("How Flux itself is tuned"): one extra
 * shard, `apps`, keyed on `sharding.fluxcd.io/key`. The Flux Operator turns a
 * FluxInstance's `spec.sharding` into one more source-, kustomize- and
 * helm-controller per shard (and source-watcher from Flux 2.9), each watching
 * only the objects labelled with its name, and gives the main controllers a
 * selector that excludes every object carrying the key (flux-operator v0.58.1,
 * internal/builder/templates.go). The FluxInstance's patches (the tuning) reach
 * the shard controllers too: kustomize matches a target by the name an object
 * had before the shard's nameSuffix. So a label is a promise: an object labelled for a shard the
 * cluster does not run is reconciled by nobody, silently (verify's
 * shard-labels check). `flux bootstrap` has no sharding to configure, so
 * sharding needs the Flux Operator.
 *
 * What goes to a shard is a layer: its generated Flux Kustomization carries
 * the label, so the shard's kustomize-controller applies it. The objects the
 * layer applies (its HelmReleases, their sources) keep their own labels: they
 * stay on the main controllers unless the layer's manifests label them too.
 */
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { ValidationError, type FieldIssue } from '../errors.js';
import { documentToYaml } from './yaml.js';

/** The label key the operator shards on when the FluxInstance names none (the CRD's default). */
export const DEFAULT_SHARDING_KEY = 'sharding.fluxcd.io/key';

/** A shard name becomes part of the controllers' Deployment names and a label value: a DNS label. */
const shardNameSchema = z
  .string({ error: 'must be a string' })
  .regex(/^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/, 'must be a lowercase DNS label of at most 40 characters (it names the shard controllers)');

/** scaffold.yaml `fluxInstance.sharding`: absent, no sharding (the default). */
export const fluxShardingSchema = z
  .object({
    /** The label key; a qualified label name. */
    key: z
      .string({ error: 'must be a string' })
      .regex(/^([a-z0-9]([a-z0-9.-]*[a-z0-9])?\/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/, 'must be a label key such as sharding.fluxcd.io/key')
      .default(DEFAULT_SHARDING_KEY),
    /** The extra shards; the main controllers keep everything unlabelled. */
    shards: z.array(shardNameSchema, { error: 'must be a list of shard names' }).min(1, 'must name at least one shard'),
    /**
     * Which layer goes to which shard, by layer name. Unset: each shard takes
     * the layer named like it (`apps` in the default platform).
     */
    layers: z.record(z.string().min(1), shardNameSchema, { error: 'must map layer names to shard names' }).optional(),
  })
  .strict()
  .superRefine((sharding, context) => {
    const seen = new Set<string>();
    sharding.shards.forEach((shard, index) => {
      if (seen.has(shard)) context.addIssue({ code: 'custom', path: ['shards', index], message: `${JSON.stringify(shard)} is listed twice` });
      seen.add(shard);
    });
    for (const [layer, shard] of Object.entries(sharding.layers ?? {})) {
      if (!seen.has(shard)) {
        context.addIssue({
          code: 'custom',
          path: ['layers', layer],
          message: `${JSON.stringify(shard)} is not one of shards (${sharding.shards.join(', ')}): nobody would reconcile the layer`,
        });
      }
    }
  });

export type FluxSharding = z.infer<typeof fluxShardingSchema>;

/** The shard a layer goes to, or undefined for the main controllers. */
export function shardOfLayer(sharding: FluxSharding, layer: string): string | undefined {
  if (sharding.layers !== undefined) return sharding.layers[layer];
  return sharding.shards.includes(layer) ? layer : undefined;
}

/**
 * The layer assignment checked against the platform's layers.
 * @param platformLayers - every layer of the platform (those this cluster gets and those it skips)
 * @throws ValidationError naming `fluxInstance.sharding.layers.<name>` for a layer the platform does not have, or `fluxInstance.sharding.shards` for a shard no layer goes to
 */
export function assertShardLayers(sharding: FluxSharding, platformLayers: readonly string[]): void {
  const issues: FieldIssue[] = [];
  const known = new Set(platformLayers);
  for (const layer of Object.keys(sharding.layers ?? {})) {
    if (!known.has(layer)) {
      issues.push({ field: `fluxInstance.sharding.layers.${layer}`, message: `is not a layer of this platform (its layers: ${platformLayers.join(', ')})` });
    }
  }
  for (const shard of sharding.shards) {
    if (platformLayers.some((layer) => shardOfLayer(sharding, layer) === shard)) continue;
    issues.push({
      field: 'fluxInstance.sharding.shards',
      message: `no layer goes to shard ${JSON.stringify(shard)}: its controllers would run with nothing to reconcile. Name its layers in fluxInstance.sharding.layers (layer: shard)`,
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

/** A layer's Flux Kustomization labelled for its shard; comments and field order kept. */
export function labelForShard(yaml: string, key: string, shard: string): string {
  const doc = parseDocument(yaml);
  doc.setIn(['metadata', 'labels', key], shard);
  return documentToYaml(doc);
}
