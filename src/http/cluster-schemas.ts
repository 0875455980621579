/**
 * Wire shapes of the fleet endpoints (`/api/v1/clusters`), also their part of
 * the OpenAPI document. The view itself is built in `fleet/cluster-view.ts`,
 * shared with `generate-gitops-env clusters -o json`.
 */
import { z } from 'zod';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { branchSchema } from '../service/scaffold-service.js';
import { RUN_STATUSES, repositoryUrlSchema } from './wire-schemas.js';

const repositoryQuery = {
  repository_url: repositoryUrlSchema.optional().describe("Like a request's repository.url. Default: the service's default repository."),
  branch: branchSchema.optional().describe('Default: main.'),
};

export const clustersQuerySchema = z
  .object({
    ...repositoryQuery,
    format: z
      .enum(['fleet', 'resourceset'])
      .optional()
      .describe('`resourceset`: the Flux Operator ResourceSetInputProvider ExternalService shape, `{"inputs": [{"id": …}]}`, generated clusters only. Default: `fleet`.'),
  })
  .strict();
export const clusterQuerySchema = z.object(repositoryQuery).strict();
export const clusterParamsSchema = z.object({ name: clusterNameSchema });
export const removeClusterQuerySchema = z
  .object({
    ...repositoryQuery,
    confirm: z.string({ error: 'must be the name of the cluster to remove' }).describe('Must repeat the cluster name: a DELETE is never sent by accident.'),
  })
  .strict();

export const clusterViewSchema = z.object({
  name: z.string(),
  kind: z.enum(['generated', 'reference', 'unmanaged']).describe('`unmanaged`: a directory under clusters/ without provenance.yaml.'),
  gitops_path: z.string(),
  domain: z.string().optional(),
  region: z.string().optional(),
  role: z.string().optional(),
  infra_provider: z.string().optional(),
  dns_provider: z.string().optional(),
  status: z.enum(['up_to_date', 'behind', 'unknown', 'not_applicable']),
  up_to_date: z.boolean().optional(),
  behind: z.object({ rendered_from: z.string().describe('The platform commit the cluster was rendered from.'), current: z.string() }).optional(),
  provenance: z
    .object({
      generator_version: z.string(),
      reference: z.string(),
      platform_commit: z.string(),
      pass: z.enum(['infrastructure', 'all']),
      files: z.number().int().optional().describe('How many files the generator wrote.'),
    })
    .optional(),
  last_run: z
    .object({ id: z.string(), status: z.enum(RUN_STATUSES), created_at: z.string(), finished_at: z.string().optional(), commit: z.string().optional() })
    .optional()
    .describe('The newest run this service started for the cluster in this repository.'),
});

export const fleetSchema = z.union([
  z.object({
    repository: z.object({ url: z.string().describe('Without credentials.'), branch: z.string() }),
    commit: z.string().describe('The branch head the fleet was read at.'),
    platform_commit: z.string().nullable().describe('The newest commit that touched the platform: what `up_to_date` compares with.'),
    clusters: z.array(clusterViewSchema),
  }),
  z.object({ inputs: z.array(z.record(z.string(), z.union([z.string(), z.boolean()]))) }).describe('format=resourceset'),
]);

export const removalSchema = z.object({
  cluster: z.string(),
  commit: z.string().describe('The commit that removed the files (pushed to the branch).'),
  removed: z.array(z.string()),
  kept: z.array(z.string()).describe('Files under the cluster path the generator did not write; left in place.'),
  flux_bootstrap: z.boolean().describe('Whether a flux-system/ written by flux bootstrap is among the kept files.'),
});
