/**
 * The cluster model: who the new cluster is. Everything else in the tree is
 * derived from these values and the reference environment: name, domain and
 * region (its identity) and, optionally, the attributes a platform's layer
 * catalog selects layers by (role, infrastructure provider, DNS provider).
 *
 * Validation happens here, at the edge of the core, so a bad name can never
 * reach a file path, a Kubernetes object name or a git ref.
 */
import { z } from 'zod';
import { ValidationError, type FieldIssue } from '../errors.js';

// DNS-1123 label: what Kubernetes accepts for namespaces and most names, and
// by construction free of '/', '..', spaces and upper case, so it is also a
// safe single path segment.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_NAME_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// Cloud regions across providers: eu-west-1, us-central1, fr-par, ap-southeast-2.
const REGION = /^[a-z]{2,}(-[a-z0-9]+)+$/;

/** A DNS-1123 label, at most 63 characters. */
export const clusterNameSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters (a DNS-1123 label)')
  .regex(DNS_LABEL, 'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit');

/** A fully qualified DNS name with at least two labels, at most 253 characters. */
export const domainSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(253, 'must be at most 253 characters')
  .refine((value) => {
    const labels = value.split('.');
    return labels.length >= 2 && labels.every((l) => l.length <= 63 && DNS_NAME_LABEL.test(l)) && !/^\d+$/.test(labels.at(-1) ?? '');
  }, 'must be a lower-case DNS name such as eu-prod-1.example.net (labels of letters, digits and "-", no trailing dot)');

/** A cloud region identifier such as `eu-west-1` or `us-central1`. */
export const regionSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(32, 'must be at most 32 characters')
  .regex(REGION, 'must look like a cloud region such as eu-west-1 or us-central1 (lower-case letters and digits in "-"-separated parts)');

/**
 * A value of a cluster attribute (`role`, `infra_provider`, `dns_provider`):
 * a DNS-1123 label such as `env`, `proxmox` or `route53`. Which values exist
 * is the platform's business (its layer catalog in scaffold.yaml); they are
 * checked against it at render time.
 */
export const clusterAttributeSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters')
  .regex(DNS_LABEL, 'must be a lower-case label (letters, digits and "-", starting and ending with a letter or digit), such as env, proxmox or route53');

/** The attributes a platform's layer catalog selects layers by, in their field names. */
export const CLUSTER_ATTRIBUTES = ['role', 'infra_provider', 'dns_provider'] as const;

/** One of {@link CLUSTER_ATTRIBUTES}. */
export type ClusterAttribute = (typeof CLUSTER_ATTRIBUTES)[number];

/** The identity of a cluster, as callers give it, with the optional catalog attributes. */
export const clusterSpecSchema = z
  .object({
    name: clusterNameSchema,
    domain: domainSchema,
    region: regionSchema,
    /** The cluster's role, e.g. `tooling` or `env` (selects role layers). */
    role: clusterAttributeSchema.optional(),
    /** Where it runs, e.g. `proxmox`, `aws`, `gcp` (selects the vendor layer, self-hosted data). */
    infra_provider: clusterAttributeSchema.optional(),
    /** Who serves its DNS zone, e.g. `route53`, `cloudflare` (selects the dns/<provider> layer). */
    dns_provider: clusterAttributeSchema.optional(),
    /**
     * The optional layers this cluster resumes (scaffold.yaml `optional: true`,
     * `previews`): every other optional layer ships with `spec.suspend: true`.
     * Left out, the list the cluster was rendered with before is kept.
     */
    enable_layers: z
      .array(clusterNameSchema)
      .max(64, 'must list at most 64 layers')
      .refine((names) => new Set(names).size === names.length, 'must not list a layer twice')
      .optional(),
  })
  .strict();

/**
 * A cluster: name, domain and region, and optionally the attributes a layer
 * catalog selects by. A platform without a catalog takes none of them.
 */
export type ClusterSpec = z.infer<typeof clusterSpecSchema>;

/** Turns zod issues into our field issues, prefixing each path with `prefix`. */
export function fieldIssuesOf(error: z.ZodError, prefix = ''): FieldIssue[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const field = [prefix, path].filter(Boolean).join('.');
    if (issue.code === 'unrecognized_keys') {
      return { field: field || prefix, message: `unknown field(s): ${issue.keys.join(', ')}` };
    }
    return { field, message: issue.message };
  });
}

/**
 * Validates a cluster identity.
 *
 * @param prefix - field-path prefix used in error messages, e.g. `cluster`
 * @throws ValidationError naming every bad field
 */
export function parseClusterSpec(input: unknown, prefix = 'cluster'): ClusterSpec {
  const result = clusterSpecSchema.safeParse(input);
  if (!result.success) throw new ValidationError(fieldIssuesOf(result.error, prefix));
  return result.data;
}

/** Validates the name of a reference environment (also a directory under clusters/). */
export function parseReferenceName(input: unknown, field = 'reference'): string {
  const result = clusterNameSchema.safeParse(input);
  if (!result.success) throw new ValidationError(fieldIssuesOf(result.error, field));
  return result.data;
}
