/**
 * The `attributes`, `layerDefaults` and `layers` sections of scaffold.yaml: the
 * layer catalog, each layer a Kustomize root with its Flux Kustomization
 * settings and a condition on the cluster's attributes. Shapes only; the
 * cross-checks (references, cycles, placeholders) are in layer-catalog-issues.
 */
import { z } from 'zod';
import { clusterAttributeSchema, clusterNameSchema } from '../model/cluster-spec.js';
import { FLUX_NAMESPACE } from './credential-schema.js';
import { groupKindSchema } from './platform-prerequisites.js';

/** A Flux duration, as the CRDs' pattern has it: `30s`, `5m`, `1h30m`. */
export const durationSchema = z.string({ error: 'must be a string' }).regex(/^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/, 'must be a duration such as 30s, 5m or 1h30m');

const attributeValuesSchema = z
  .array(clusterAttributeSchema)
  .min(1, 'must list at least one value')
  .refine((values) => new Set(values).size === values.length, 'must not list a value twice');

/** A cluster-config data key. */
const configKeySchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a substitution variable name (letters, digits and "_")');

/**
 * The values the catalog knows for one cluster attribute, the default for
 * clusters that give none, and per value the cluster-config entries that
 * bridge the difference (spec 001's provider model: `${storage_class}` is
 * `gp3` on aws and `openebs-hostpath` on proxmox).
 */
const attributeSchema = z
  .object({
    values: attributeValuesSchema,
    default: clusterAttributeSchema.optional(),
    config: z.record(clusterAttributeSchema, z.record(configKeySchema, z.string({ error: 'must be a string (ConfigMap data)' }))).optional(),
  })
  .strict();

/**
 * What one infrastructure provider brings before Flux runs. `cni: bootstrap`
 * means the cluster is created without one and the bootstrap layer installs
 * it: Flux's own controllers (and the Flux Operator) are Pods that need a CNI,
 * so such a row cannot be rendered with a FluxInstance. `crds` are the CRDs
 * the platform installs and upgrades itself (GKE's Gateway API): the tree must
 * not apply its own, older copies over them, and verify counts them as there.
 */
export const infraPlatformSchema = z
  .object({
    cni: z.enum(['cluster', 'bootstrap'], { error: 'must be cluster (there before Flux) or bootstrap (installed by the bootstrap layer)' }).default('cluster'),
    crds: z.array(groupKindSchema).default([]),
  })
  .strict();

/** The infrastructure providers, which of them are self-hosted (the cluster runs its own data services), and what each brings. */
const infraProviderAttributeSchema = attributeSchema
  .extend({
    selfHosted: z.array(clusterAttributeSchema).default([]),
    platform: z.record(clusterAttributeSchema, infraPlatformSchema).default({}),
  })
  .strict();

/** The cluster attributes the catalog selects layers by. */
export const clusterAttributesSchema = z
  .object({
    role: attributeSchema.optional(),
    infra_provider: infraProviderAttributeSchema.optional(),
    dns_provider: attributeSchema.optional(),
  })
  .strict();

/** When a layer is deployed: every attribute given must match (a list: one of its values). */
export const layerConditionSchema = z
  .object({
    role: attributeValuesSchema.optional(),
    infra_provider: attributeValuesSchema.optional(),
    dns_provider: attributeValuesSchema.optional(),
    /** Whether the infrastructure provider is one of `attributes.infra_provider.selfHosted`. */
    self_hosted: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .strict();

/** A Flux `healthChecks` entry: an object that must be Ready. */
const healthCheckSchema = z
  .object({
    apiVersion: z.string().min(1).optional(),
    kind: z.string().min(1),
    name: z.string().min(1),
    namespace: z.string().min(1).optional(),
  })
  .strict();

/** A Flux `healthCheckExprs` entry: CEL expressions deciding readiness of a kind. */
const healthCheckExprSchema = z
  .object({
    apiVersion: z.string().min(1),
    kind: z.string().min(1),
    current: z.string().min(1),
    inProgress: z.string().min(1).optional(),
    failed: z.string().min(1).optional(),
  })
  .strict();

/** A `postBuild.substituteFrom` source: the cluster-config ConfigMap, or a Secret the descriptor seals (cluster-secrets). */
const substitutionSourceSchema = z
  .object({
    kind: z.enum(['ConfigMap', 'Secret'], { error: 'must be ConfigMap or Secret' }),
    name: clusterNameSchema,
    optional: z.boolean().optional(),
  })
  .strict();

/** A Flux source a layer's Kustomization reads from. */
const sourceRefSchema = z
  .object({
    kind: z.enum(['GitRepository', 'OCIRepository', 'Bucket', 'ExternalArtifact'], {
      error: 'must be GitRepository, OCIRepository, Bucket or ExternalArtifact',
    }),
    name: clusterNameSchema,
    namespace: clusterNameSchema.optional(),
  })
  .strict();

/** Settings every catalog layer gets unless it sets its own. */
export const layerDefaultsSchema = z
  .object({
    interval: durationSchema.default('10m'),
    retryInterval: durationSchema.default('1m'),
    timeout: durationSchema.default('5m'),
    sourceRef: sourceRefSchema.default({ kind: 'GitRepository', name: FLUX_NAMESPACE, namespace: FLUX_NAMESPACE }),
    substituteFrom: z.array(substitutionSourceSchema).default([{ kind: 'ConfigMap', name: 'cluster-config' }]),
  })
  .strict();

/**
 * One layer of the catalog: a Kustomize root and the Flux Kustomization that
 * applies it. `path` is a directory of the repository shared by every cluster
 * (`{role}`, `{infra_provider}` and `{dns_provider}` are replaced by the
 * cluster's values, e.g. `dns/{dns_provider}`); `overlay` instead names a
 * directory of the reference environment that each cluster gets its own copy
 * of, as `clusters/<name>/<overlay>/`.
 */
export const layerSpecSchema = z
  .object({
    name: clusterNameSchema,
    /** One line, written as the comment of the generated Kustomization. */
    description: z.string().max(300).optional(),
    path: z.string({ error: 'must be a string' }).min(1).optional(),
    overlay: clusterNameSchema.optional(),
    dependsOn: z.array(clusterNameSchema).default([]),
    healthChecks: z.array(healthCheckSchema).optional(),
    healthCheckExprs: z.array(healthCheckExprSchema).optional(),
    wait: z.boolean({ error: 'must be true or false' }).optional(),
    interval: durationSchema.optional(),
    retryInterval: durationSchema.optional(),
    timeout: durationSchema.optional(),
    prune: z.boolean({ error: 'must be true or false' }).optional(),
    substituteFrom: z.array(substitutionSourceSchema).optional(),
    when: layerConditionSchema.optional(),
    /**
     * Opt-in: rendered with `spec.suspend: true` and resumed per cluster
     * (cluster `enable_layers`). Only optional layers may depend on it: a
     * Kustomization depending on a suspended one never becomes Ready.
     */
    optional: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .strict();

export type ClusterAttributes = z.infer<typeof clusterAttributesSchema>;
export type InfraPlatform = z.infer<typeof infraPlatformSchema>;
export type LayerCondition = z.infer<typeof layerConditionSchema>;
export type LayerDefaults = z.infer<typeof layerDefaultsSchema>;
export type LayerSpec = z.infer<typeof layerSpecSchema>;
export type SubstitutionSource = LayerDefaults['substituteFrom'][number];
