/**
 * The platform descriptor, `scaffold.yaml` at the root of the platform
 * repository: what the generator must create per cluster beyond the reference
 * environment's files — today, the credentials to generate and seal.
 */
import { z } from 'zod';
import { parseDocument } from 'yaml';
import { ValidationError } from '../errors.js';
import { clusterNameSchema, fieldIssuesOf } from '../model/cluster-spec.js';

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

/** One Secret to generate per cluster, sealed into `clusters/<name>/<layer>/sealed/`. */
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

export const platformDescriptorSchema = z
  .object({
    apiVersion: z.literal('gitops-scaffolder.io/v1alpha1'),
    kind: z.literal('Platform'),
    credentials: z.array(credentialSpecSchema).default([]),
  })
  .strict();

export type ValueSource = z.infer<typeof valueSourceSchema>;
export type CredentialSpec = z.infer<typeof credentialSpecSchema>;
export type PlatformDescriptor = z.infer<typeof platformDescriptorSchema>;

/** The repository-relative path of the descriptor. */
export const PLATFORM_DESCRIPTOR_PATH = 'scaffold.yaml';

/**
 * Parses and validates `scaffold.yaml`; a missing file means no credentials.
 * @throws ValidationError naming the bad field
 */
export function parsePlatformDescriptor(text: string | undefined): PlatformDescriptor {
  if (text === undefined) return { apiVersion: 'gitops-scaffolder.io/v1alpha1', kind: 'Platform', credentials: [] };
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    throw new ValidationError([{ field: PLATFORM_DESCRIPTOR_PATH, message: `invalid YAML: ${doc.errors[0]!.message.split('\n')[0]}` }]);
  }
  const result = platformDescriptorSchema.safeParse(doc.toJS());
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
  return result.data;
}
