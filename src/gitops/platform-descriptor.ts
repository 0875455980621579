/**
 * The platform descriptor, `scaffold.yaml` at the root of the platform
 * repository: what the generator must create per cluster beyond the reference
 * environment's files.
 *
 * - `credentials`: the Secrets to generate and seal for every cluster.
 * - `attributes` + `layers` (optional): the layer catalog. Each layer is a
 *   Kustomize root with its Flux Kustomization settings and a condition on the
 *   cluster's attributes (role, infrastructure provider, DNS provider,
 *   self-hosted); the generator selects the layers a cluster gets from it and
 *   wires their dependsOn. Without `layers`, the layers are the reference
 *   environment's Flux Kustomizations (`clusters/<reference>/flux/`).
 * - `fluxInstance` (optional): a FluxInstance for the Flux Operator instead of
 *   `flux bootstrap`.
 *
 * Everything is checked here, once, so a render never starts on a catalog
 * whose references dangle or whose dependsOn has a cycle.
 */
import { z } from 'zod';
import { parseDocument } from 'yaml';
import { ValidationError } from '../errors.js';
import type { FieldIssue } from '../errors.js';
import { CLUSTER_ATTRIBUTES, clusterAttributeSchema, clusterNameSchema, fieldIssuesOf, type ClusterAttribute } from '../model/cluster-spec.js';
import { assertRepoPath } from './file-tree.js';
import { platformPrerequisitesShape } from './platform-prerequisites.js';
import { sealedSourceOrderIssues, unsealedSecretIssues } from './sealed-source-order.js';
import { plainValueOf } from './yaml.js';

const secretKeySchema = z.string().regex(/^[-._a-zA-Z0-9]+$/, 'must be a valid Secret data key');

/** How one value of a credential is produced. */
export const valueSourceSchema = z.union([
  z.object({ generate: z.literal('password'), length: z.number().int().min(16).max(256).default(32) }).strict(),
  z.object({ generate: z.literal('alphanumeric'), length: z.number().int().min(16).max(256).default(32) }).strict(),
  z
    .object({
      generate: z.literal('dockerconfigjson'),
      registry: z.string().min(1),
      username: z.string().min(1),
      length: z.number().int().min(16).max(256).default(32),
    })
    .strict(),
  z
    .object({
      sameAs: z.string().regex(/^[-a-z0-9]+\/[-a-z0-9]+\/[-._a-zA-Z0-9]+$/, 'must be namespace/name/key of another credential'),
    })
    .strict(),
]);

/**
 * The pseudo-layer of credentials that belong to Flux itself, sealed into
 * `clusters/<name>/flux/sealed/` and applied by the cluster's root sync: the
 * cluster's substitution Secret (`cluster-secrets`) is one.
 */
export const FLUX_CREDENTIAL_LAYER = 'flux';

/** The namespace of Flux's own objects (cluster-config, cluster-secrets, the Kustomizations). */
export const FLUX_NAMESPACE = 'flux-system';

/**
 * One Secret to generate per cluster, sealed into `clusters/<name>/<layer>/sealed/`
 * (`layer` is an overlay directory, or `flux` for a Secret of Flux itself, in
 * flux-system, such as the `cluster-secrets` substitution Secret).
 */
export const credentialSpecSchema = z
  .object({
    name: clusterNameSchema,
    namespace: clusterNameSchema,
    layer: clusterNameSchema,
    type: z.string().min(1).default('Opaque'),
    keys: z.record(secretKeySchema, valueSourceSchema).refine((k) => Object.keys(k).length > 0, 'must list at least one key'),
    /** The credential is replaced by a caller-supplied value when one is given. */
    suppliedBy: z.literal('registry-auth').optional(),
  })
  .strict();

/** A Flux duration, as the CRDs' pattern has it: `30s`, `5m`, `1h30m`. */
const durationSchema = z.string({ error: 'must be a string' }).regex(/^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/, 'must be a duration such as 30s, 5m or 1h30m');

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

/** The infrastructure providers, and which of them are self-hosted (the cluster runs its own data services). */
const infraProviderAttributeSchema = attributeSchema
  .extend({ selfHosted: z.array(clusterAttributeSchema).default([]) })
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
    kind: z.enum(['GitRepository', 'OCIRepository', 'Bucket', 'ExternalArtifact'], { error: 'must be GitRepository, OCIRepository, Bucket or ExternalArtifact' }),
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
  })
  .strict();

/** The Flux components a FluxInstance may install. */
export const FLUX_COMPONENTS = [
  'source-controller',
  'kustomize-controller',
  'helm-controller',
  'notification-controller',
  'image-reflector-controller',
  'image-automation-controller',
  'source-watcher',
] as const;

/** Where a cluster's Flux syncs from: a Git repository over https or ssh, or an OCI repository. */
export const syncUrlSchema = z
  .string({ error: 'must be a string' })
  .max(2048, 'must be at most 2048 characters')
  .refine((url) => /^(https?|ssh|oci):\/\/[^\s/]+/.test(url), 'must be an https://, http://, ssh:// or oci:// URL')
  .refine((url) => !/^[a-z]+:\/\/[^/@]*:[^/@]*@/.test(url) && !/^https?:\/\/[^/]*@/.test(url), 'must not carry credentials (give Flux a secret instead)');

/** The FluxInstance (fluxcd.controlplane.io/v1) to generate: Flux managed by the Flux Operator. */
export const fluxInstanceSpecSchema = z
  .object({
    /** Every cluster gets one (`render --flux-instance` asks for it per cluster). */
    enabled: z.boolean({ error: 'must be true or false' }).default(false),
    distribution: z
      .object({
        version: z.string().min(1).default('2.x'),
        registry: z.string().min(1).default('ghcr.io/fluxcd'),
        artifact: z.string().regex(/^oci:\/\//, 'must be an oci:// URL').optional(),
      })
      .strict()
      .prefault({}),
    components: z
      .array(z.enum(FLUX_COMPONENTS))
      .min(1)
      .default(['source-controller', 'kustomize-controller', 'helm-controller', 'notification-controller']),
    cluster: z
      .object({
        type: z.enum(['kubernetes', 'openshift', 'aws', 'azure', 'gcp']).optional(),
        size: z.enum(['small', 'medium', 'large']).optional(),
        networkPolicy: z.boolean().optional(),
        multitenant: z.boolean().optional(),
        domain: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    sync: z
      .object({
        url: syncUrlSchema.optional(),
        /** `refs/heads/<branch>` for Git (default `refs/heads/main`), a tag for OCI (default `latest`). */
        ref: z.string().min(1).max(255).optional(),
        interval: durationSchema.optional(),
        /** The Secret in flux-system with the credentials to pull the source (ssh key, token). */
        pullSecret: clusterNameSchema.optional(),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export const platformDescriptorSchema = z
  .object({
    apiVersion: z.literal('gitops-scaffolder.io/v1alpha1'),
    kind: z.literal('Platform'),
    credentials: z.array(credentialSpecSchema).default([]),
    attributes: clusterAttributesSchema.optional(),
    layerDefaults: layerDefaultsSchema.prefault({}),
    layers: z.array(layerSpecSchema).optional(),
    fluxInstance: fluxInstanceSpecSchema.optional(),
    ...platformPrerequisitesShape,
  })
  .strict();

export type ValueSource = z.infer<typeof valueSourceSchema>;
export type CredentialSpec = z.infer<typeof credentialSpecSchema>;
export type PlatformDescriptor = z.infer<typeof platformDescriptorSchema>;
export type ClusterAttributes = z.infer<typeof clusterAttributesSchema>;
export type LayerCondition = z.infer<typeof layerConditionSchema>;
export type LayerDefaults = z.infer<typeof layerDefaultsSchema>;
export type LayerSpec = z.infer<typeof layerSpecSchema>;
export type FluxInstanceSpec = z.infer<typeof fluxInstanceSpecSchema>;
export type SubstitutionSource = LayerDefaults['substituteFrom'][number];

/** The repository-relative path of the descriptor. */
export const PLATFORM_DESCRIPTOR_PATH = 'scaffold.yaml';

/**
 * Parses and validates `scaffold.yaml`; a missing file means no credentials.
 * @throws ValidationError naming the bad field
 */
export function parsePlatformDescriptor(text: string | undefined): PlatformDescriptor {
  if (text === undefined) return platformDescriptorSchema.parse({ apiVersion: 'gitops-scaffolder.io/v1alpha1', kind: 'Platform' });
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    throw new ValidationError([{ field: PLATFORM_DESCRIPTOR_PATH, message: `invalid YAML: ${doc.errors[0]!.message.split('\n')[0]}` }]);
  }
  const result = platformDescriptorSchema.safeParse(plainValueOf(doc, PLATFORM_DESCRIPTOR_PATH));
  if (!result.success) throw new ValidationError(fieldIssuesOf(result.error, PLATFORM_DESCRIPTOR_PATH));
  const seen = new Set<string>();
  for (const c of result.data.credentials) {
    const key = `${c.namespace}/${c.name}`;
    if (seen.has(key)) throw new ValidationError([{ field: PLATFORM_DESCRIPTOR_PATH, message: `credential ${key} is listed twice` }]);
    seen.add(key);
  }
  for (const c of result.data.credentials) {
    for (const [key, source] of Object.entries(c.keys)) {
      if (!('sameAs' in source)) continue;
      const [ns, name, otherKey] = source.sameAs.split('/');
      const target = result.data.credentials.find((o) => o.namespace === ns && o.name === name);
      const targetSource = target?.keys[otherKey!];
      if (!targetSource || 'sameAs' in targetSource) {
        throw new ValidationError([
          { field: `${PLATFORM_DESCRIPTOR_PATH}.credentials.${c.namespace}/${c.name}.${key}`, message: `sameAs ${source.sameAs} must name a generated key of another credential` },
        ]);
      }
    }
  }
  const issues = [...credentialIssues(result.data), ...catalogIssues(result.data)];
  if (issues.length > 0) throw new ValidationError(issues);
  return result.data;
}

/** Names a layer cannot have: they are the files and objects of flux/ the generator writes itself. */
const RESERVED_LAYER_NAMES = new Set(['flux-system', 'cluster-config', 'flux-instance', 'kustomization', 'sealed']);

/** The placeholders a layer path may use. */
const PLACEHOLDER = /\{([^{}]*)\}/g;

function credentialIssues(descriptor: PlatformDescriptor): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const c of descriptor.credentials) {
    if (c.layer === FLUX_CREDENTIAL_LAYER && c.namespace !== FLUX_NAMESPACE) {
      issues.push({
        field: `${PLATFORM_DESCRIPTOR_PATH}.credentials.${c.namespace}/${c.name}.layer`,
        message: `layer ${FLUX_CREDENTIAL_LAYER} holds Flux's own Secrets, applied by the root sync before any namespace of the layers exists: the namespace must be ${FLUX_NAMESPACE}`,
      });
    }
  }
  return issues;
}

/** Cross-checks of the catalog: names, references, conditions, placeholders, cycles. */
function catalogIssues(descriptor: PlatformDescriptor): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const at = (field: string, message: string) => issues.push({ field: `${PLATFORM_DESCRIPTOR_PATH}.${field}`, message });
  const attributes = descriptor.attributes ?? {};

  for (const name of CLUSTER_ATTRIBUTES) {
    const attribute = attributes[name];
    if (!attribute) continue;
    if (attribute.default !== undefined && !attribute.values.includes(attribute.default)) {
      at(`attributes.${name}.default`, `${JSON.stringify(attribute.default)} is not one of the values (${attribute.values.join(', ')})`);
    }
  }
  const configKeys = new Map<string, string>();
  const reservedKeys = new Set(['cluster_name', 'cluster_domain', 'cluster_region', 'cluster_role', 'infra_provider', 'dns_provider']);
  for (const name of CLUSTER_ATTRIBUTES) {
    for (const [value, entries] of Object.entries(attributes[name]?.config ?? {})) {
      if (!attributes[name]!.values.includes(value)) at(`attributes.${name}.config.${value}`, `${JSON.stringify(value)} is not one of the values (${attributes[name]!.values.join(', ')})`);
      for (const key of Object.keys(entries)) {
        if (reservedKeys.has(key)) at(`attributes.${name}.config.${value}.${key}`, 'is set by the generator itself (identity and attributes)');
        const owner = configKeys.get(key);
        if (owner !== undefined && owner !== name) at(`attributes.${name}.config.${value}.${key}`, `is also set by attributes.${owner}.config: one attribute owns each key`);
        configKeys.set(key, name);
      }
    }
  }
  for (const value of attributes.infra_provider?.selfHosted ?? []) {
    if (!attributes.infra_provider!.values.includes(value)) {
      at('attributes.infra_provider.selfHosted', `${JSON.stringify(value)} is not one of the values (${attributes.infra_provider!.values.join(', ')})`);
    }
  }

  const layers = descriptor.layers;
  if (layers === undefined) return issues;
  if (layers.length === 0) at('layers', 'must list at least one layer (or be left out: the layers are then the reference environment\'s)');
  // Flux reads substituteFrom Secrets in its own namespace, sealed in flux/ or in a layer's overlay.
  const sealedInFlux = new Set(descriptor.credentials.filter((c) => c.namespace === FLUX_NAMESPACE).map((c) => c.name));
  const names = new Set<string>();
  const overlays = new Set<string>();
  for (const layer of layers) {
    const field = `layers.${layer.name}`;
    if (names.has(layer.name)) at(field, 'is listed twice');
    names.add(layer.name);
    if (RESERVED_LAYER_NAMES.has(layer.name)) at(`${field}.name`, `${JSON.stringify(layer.name)} is reserved for what the generator writes into flux/ itself`);
    if ((layer.path === undefined) === (layer.overlay === undefined)) {
      at(field, 'must set exactly one of path (a Kustomize root of the repository) and overlay (a directory of the reference environment)');
    }
    if (layer.overlay !== undefined) {
      if (layer.overlay === FLUX_CREDENTIAL_LAYER) at(`${field}.overlay`, 'flux/ is generated, it cannot be an overlay');
      if (overlays.has(layer.overlay)) at(`${field}.overlay`, `${layer.overlay} is the overlay of another layer too`);
      overlays.add(layer.overlay);
    }
    if (layer.path !== undefined) {
      for (const message of pathTemplateIssues(layer.path, attributes)) at(`${field}.path`, message);
    }
    if (layer.wait === false && !(layer.healthChecks?.length ?? 0)) {
      at(`${field}.wait`, 'false without healthChecks: "applied" would not mean "ready" before dependents start');
    }
    for (const [key, values] of Object.entries(layer.when ?? {}) as [keyof LayerCondition, unknown][]) {
      if (key === 'self_hosted') {
        if (!attributes.infra_provider) at(`${field}.when.self_hosted`, 'needs attributes.infra_provider (self-hosted is a property of the infrastructure provider)');
        continue;
      }
      const attribute = attributes[key as ClusterAttribute];
      if (!attribute) {
        at(`${field}.when.${key}`, `attributes.${key} is not declared, so no cluster has one`);
        continue;
      }
      for (const value of values as string[]) {
        if (!attribute.values.includes(value)) at(`${field}.when.${key}`, `${JSON.stringify(value)} is not one of attributes.${key}.values (${attribute.values.join(', ')})`);
      }
    }
    unsealedSecretIssues(layer.substituteFrom ?? [], sealedInFlux, `${field}.substituteFrom`, at);
  }
  unsealedSecretIssues(descriptor.layerDefaults.substituteFrom, sealedInFlux, 'layerDefaults.substituteFrom', at);
  for (const layer of layers) {
    for (const dep of layer.dependsOn) {
      if (dep === layer.name) at(`layers.${layer.name}.dependsOn`, 'a layer cannot depend on itself');
      else if (!names.has(dep)) at(`layers.${layer.name}.dependsOn`, `${JSON.stringify(dep)} is not a layer of the catalog`);
    }
  }
  const cycle = findCatalogCycle(layers);
  if (cycle) at('layers', `dependsOn has a cycle: ${cycle.join(' -> ')}`);
  else for (const issue of sealedSourceOrderIssues(descriptor, layers)) at(issue.field, issue.message);
  for (const c of descriptor.credentials) {
    if (c.layer !== FLUX_CREDENTIAL_LAYER && !overlays.has(c.layer)) {
      at(
        `credentials.${c.namespace}/${c.name}.layer`,
        `${JSON.stringify(c.layer)} is neither the overlay of a catalog layer (${[...overlays].sort().join(', ') || 'there are none'}) nor ${FLUX_CREDENTIAL_LAYER}: a shared Kustomize root has no per-cluster directory to seal into`,
      );
    }
  }
  return issues;
}

/** Problems of a layer path template; checked with every value of every placeholder it uses. */
function pathTemplateIssues(template: string, attributes: ClusterAttributes): string[] {
  const issues: string[] = [];
  const used = new Set<ClusterAttribute>();
  for (const [, name] of template.matchAll(PLACEHOLDER)) {
    if (!(CLUSTER_ATTRIBUTES as readonly string[]).includes(name!)) {
      issues.push(`{${name}} is not a placeholder: use {${CLUSTER_ATTRIBUTES.join('}, {')}}`);
    } else if (!attributes[name as ClusterAttribute]) {
      issues.push(`{${name}} needs attributes.${name}`);
    } else {
      used.add(name as ClusterAttribute);
    }
  }
  if (issues.length > 0) return issues;
  const samples = [...used].map((name) => attributes[name]!.values.map((value) => [name, value] as const));
  let expansions: string[] = [template.replace(/^(\.\/)+/, '')];
  for (const values of samples) expansions = expansions.flatMap((path) => values.map(([name, value]) => path.replaceAll(`{${name}}`, value)));
  for (const path of expansions) {
    try {
      assertRepoPath(path, 'path');
    } catch (error) {
      if (error instanceof ValidationError) return [error.issues[0]!.message];
      throw error;
    }
    if (/[{}]/.test(path)) return [`${JSON.stringify(template)} has an unbalanced brace`];
    if (path === '.' || path === 'clusters' || path.startsWith('clusters/')) {
      return [`${JSON.stringify(path)} must be a shared Kustomize root outside clusters/ (a per-cluster directory is an overlay)`];
    }
  }
  return issues;
}

/** A dependsOn cycle of the catalog, as names from its first layer back to it, or undefined. */
function findCatalogCycle(layers: readonly LayerSpec[]): string[] | undefined {
  const byName = new Map(layers.map((l) => [l.name, l]));
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]): string[] | undefined => {
    if (state.get(name) === 'done') return undefined;
    if (state.get(name) === 'visiting') return [...path.slice(path.indexOf(name)), name];
    state.set(name, 'visiting');
    for (const dep of byName.get(name)?.dependsOn ?? []) {
      if (!byName.has(dep) || dep === name) continue;
      const cycle = visit(dep, [...path, name]);
      if (cycle) return cycle;
    }
    state.set(name, 'done');
    return undefined;
  };
  for (const layer of layers) {
    const cycle = visit(layer.name, []);
    if (cycle) return cycle;
  }
  return undefined;
}
