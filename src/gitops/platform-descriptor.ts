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
 * - `previews` (optional): an environment per labelled pull/merge request
 *   (previews-schema.ts), on the clusters that enable the layer `previews`.
 *
 * Everything is checked here, once, so a render never starts on a catalog
 * whose references dangle or whose dependsOn has a cycle.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import type { FieldIssue } from '../errors.js';
import { fieldIssuesOf } from '../model/cluster-spec.js';
import { parseStrictYaml } from '../model/strict-yaml.js';
import { ParseMemo } from './parse-memo.js';
import { credentialSpecSchema, FLUX_CREDENTIAL_LAYER, FLUX_NAMESPACE } from './credential-schema.js';
import { fluxInstanceSpecSchema } from './flux-instance-schema.js';
import { notificationIssues } from './notification-issues.js';
import { notificationsSpecSchema } from './notification-schema.js';
import { layerCatalogIssues } from './layer-catalog-issues.js';
import { clusterAttributesSchema, layerDefaultsSchema, layerSpecSchema } from './layer-catalog-schema.js';
import { platformPrerequisitesShape } from './platform-prerequisites.js';
import { previewsSpecSchema } from './previews-schema.js';

// Each section's schema lives with its concept; importers keep this one module path.
export * from './credential-schema.js';
export * from './flux-instance-schema.js';
export * from './layer-catalog-schema.js';
export * from './previews-schema.js';

export const platformDescriptorSchema = z
  .object({
    apiVersion: z.literal('gitops-scaffolder.io/v1alpha1'),
    kind: z.literal('Platform'),
    credentials: z.array(credentialSpecSchema).default([]),
    attributes: clusterAttributesSchema.optional(),
    layerDefaults: layerDefaultsSchema.prefault({}),
    layers: z.array(layerSpecSchema).optional(),
    fluxInstance: fluxInstanceSpecSchema.optional(),
    previews: previewsSpecSchema.optional(),
    /** Failure notifications (a Provider and an Alert per cluster), when a cluster supplies an address. */
    notifications: notificationsSpecSchema.optional(),
    ...platformPrerequisitesShape,
  })
  .strict();

export type PlatformDescriptor = z.infer<typeof platformDescriptorSchema>;

/** The repository-relative path of the descriptor. */
export const PLATFORM_DESCRIPTOR_PATH = 'scaffold.yaml';

/**
 * Parses and validates `scaffold.yaml`; a missing file means no credentials.
 * @throws ValidationError naming the bad field
 */
export function parsePlatformDescriptor(text: string | undefined): PlatformDescriptor {
  if (text === undefined) return platformDescriptorSchema.parse({ apiVersion: 'gitops-scaffolder.io/v1alpha1', kind: 'Platform' });
  return DESCRIPTORS.get(text, descriptorOf);
}

/**
 * scaffold.yaml's text → its descriptor, frozen: each cluster of a batch reads
 * it for its render, its plan and its verify, and validating it is not free.
 */
const DESCRIPTORS = new ParseMemo<PlatformDescriptor>(1024 * 1024);

function descriptorOf(text: string): PlatformDescriptor {
  // The target repository's text, read as plain data only (no aliases, anchors, merge keys or custom
  // tags: strict-yaml.ts); the schema then builds the descriptor the render uses from it.
  const parsed = parseStrictYaml(text, PLATFORM_DESCRIPTOR_PATH);
  if (!parsed.ok) throw new ValidationError(parsed.issues);
  const result = platformDescriptorSchema.safeParse(parsed.value);
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
      if (!targetSource || !('generate' in targetSource)) {
        throw new ValidationError([
          {
            field: `${PLATFORM_DESCRIPTOR_PATH}.credentials.${c.namespace}/${c.name}.${key}`,
            message: `sameAs ${source.sameAs} must name a generated key of another credential`,
          },
        ]);
      }
    }
  }
  const catalog = layerCatalogIssues(result.data).map((issue) => ({ ...issue, field: `${PLATFORM_DESCRIPTOR_PATH}.${issue.field}` }));
  const issues = [...credentialIssues(result.data), ...catalog, ...notificationIssues(result.data)];
  if (issues.length > 0) throw new ValidationError(issues);
  return result.data;
}

/** Rules of a credential that hold across its fields, beyond its own schema. */
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
