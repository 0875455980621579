/**
 * The `previews` section of scaffold.yaml: environments per pull/merge request
 * (spec 004), run by the Flux Operator. A ResourceSetInputProvider lists the
 * open requests carrying a label, at most `limit` of them, and a ResourceSet
 * renders per request a Namespace `preview-pr-<id>`, a GitRepository pinned to
 * the request's commit and a Kustomization applying `path` of that commit into
 * the namespace, under a ServiceAccount allowed exactly those three kinds.
 *
 * The platform offers previews here; a cluster opts in by enabling the layer
 * `previews` (cluster `enable_layers`), which ships suspended otherwise.
 */
import { z } from 'zod';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { durationSchema } from './layer-catalog-schema.js';

/** The name of the generated layer (its Flux Kustomization, its directory under the cluster). */
export const PREVIEWS_LAYER = 'previews';

/** The forges whose requests the Flux Operator can list, with the input provider type of each. */
export const PREVIEW_PROVIDER_TYPES = { github: 'GitHubPullRequest', gitlab: 'GitLabMergeRequest' } as const;

/** A forge previews can follow. */
export type PreviewForge = keyof typeof PREVIEW_PROVIDER_TYPES;

/** A forge label: what GitHub and GitLab accept, without the characters a regular expression or YAML would misread. */
const labelSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(50, 'must be at most 50 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._:/-]*$/, 'must be a label name: letters, digits, " ", ".", "_", ":", "/" and "-"');

export const previewsSpecSchema = z
  .object({
    /** Whether the platform offers previews at all; each cluster still opts in (`enable_layers: [previews]`). */
    enabled: z.boolean({ error: 'must be true or false' }).default(false),
    /** The forge the requests are on; default: recognised from the repository URL's host. */
    forge: z
      .enum(['github', 'gitlab'], { error: 'must be github or gitlab (the Flux Operator lists GitHub pull requests and GitLab merge requests)' })
      .optional(),
    /** The repository whose requests are previewed (https); default: the FluxInstance's sync URL. */
    url: z
      .string({ error: 'must be a string' })
      .regex(/^https:\/\/[^\s/]+\/\S+$/, "must be the repository's https:// address")
      .optional(),
    /** Only requests with this label get a preview. */
    label: labelSchema.default('preview'),
    /** At most this many previews at a time (the provider's `filter.limit`). */
    limit: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(100, 'must be at most 100').default(5),
    /**
     * Secret in flux-system holding `username` and `password` (a forge token
     * allowed to read the requests), created with the cluster like the sync's
     * pull Secret: never in Git.
     */
    secretRef: clusterNameSchema.default('preview-forge-token'),
    /** The Kustomize root of each request's tree applied into its namespace, e.g. `base/apps`. */
    path: z.string({ error: 'must be a string' }).min(1, 'must not be empty').default('base/apps'),
    interval: durationSchema.default('10m'),
    timeout: durationSchema.default('5m'),
  })
  .strict();

export type PreviewsSpec = z.infer<typeof previewsSpecSchema>;
