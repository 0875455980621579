/**
 * Wire shapes of the fleet endpoints (`/api/v1/clusters`), also their part of
 * the OpenAPI document. The view itself is built in `fleet/cluster-view.ts`,
 * shared with `generate-gitops-env clusters -o json`.
 */
import { RUN_PASSES } from '../model/run-action.js';
import { CLUSTER_STATES } from '../fleet/cluster-state.js';
import { z } from 'zod';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { branchSchema } from '../service/run-service.js';
import { deliveryViewSchema } from './fleet-delivery-wire.js';
import { RUN_STATUSES, acceptedSchema, dnsLabel, dnsSubdomain, repositoryUrlSchema, sealingSchema, trueFalse } from './wire-schemas.js';

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
      .describe(
        '`resourceset`: the Flux Operator ResourceSetInputProvider ExternalService shape, `{"inputs": [{"id": …}]}`, generated clusters only. Default: `fleet`.',
      ),
  })
  .strict();
export const clusterQuerySchema = z.object(repositoryQuery).strict();
export const clusterParamsSchema = z.object({ name: clusterNameSchema });
export const removeClusterQuerySchema = z
  .object({
    ...repositoryQuery,
    confirm: z
      .string({ error: 'must be the name of the cluster to remove' })
      .optional()
      .describe('Must repeat the cluster name: a DELETE is never sent by accident. Not needed with `dry_run=true`, which removes nothing.'),
    dry_run: trueFalse
      .optional()
      .describe(
        '`true`: answer 200 with the files the removal would delete and keep, as the branch holds them now; no run starts and nothing is written (what the dashboard lists before its confirmation).',
      ),
  })
  .strict();

const sealedSecretViewSchema = z.object({
  path: z.string().describe('The file it is in, from the repository root.'),
  namespace: z.string(),
  name: z.string(),
  sealed_with: z.string().optional().describe('The `gitops-scaffolder.io/sealed-with` annotation: `sha256:<hex>` of the certificate it was sealed with.'),
});

export const sealingViewSchema = z
  .object({
    controller_certificate: z
      .object({ fingerprint: z.string().describe('`sha256:<hex>` of the DER certificate, as the annotation records it.'), not_after: z.string() })
      .nullable()
      .describe("The certificate the cluster's Sealed Secrets controller serves now; null when it was not read (see `reason`)."),
    reason: z.string().optional().describe('Why controller_certificate is null.'),
    sealed_secrets: z.number().int().describe('How many SealedSecrets the cluster directory holds.'),
    stale: z
      .array(sealedSecretViewSchema)
      .describe(
        'Sealed with another (older) key than the one the controller serves now. Not undecryptable: the controller keeps its older keys, so the cluster reads them while it holds theirs; `rotate` has the controller re-encrypt them with its newest key, values unchanged. Empty when controller_certificate is null.',
      ),
    unknown: z.array(sealedSecretViewSchema).describe('Without the sealed-with annotation (sealed by hand or by an older generator).'),
    current_count: z.number().int().nullable().describe('How many are sealed with the current certificate; null when controller_certificate is null.'),
  })
  .describe("The cluster's SealedSecrets compared with the certificate its controller serves now.");

export const sealingCheckRequestSchema = z
  .object({
    repository: z
      .object({
        url: repositoryUrlSchema.optional().describe("Default: the service's default repository."),
        branch: branchSchema.optional().describe('Default: main.'),
      })
      .strict()
      .optional(),
    kubeconfig: z
      .object({ inline: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(1_048_576, 'must be at most 1 MiB') })
      .strict()
      .optional()
      .describe(
        "The cluster's kubeconfig text (inline data only: no exec, no file paths): the service reads the controller's certificate through the API server's service proxy, for this request only.",
      ),
    sealing: sealingSchema.optional(),
    controller: z
      .object({ namespace: dnsLabel, name: dnsSubdomain })
      .strict()
      .optional()
      .describe('The Sealed Secrets controller (Service) to ask. Default: kube-system/sealed-secrets-controller.'),
  })
  .strict()
  .superRefine((value, ctx) => {
    if ((value.kubeconfig === undefined) === (value.sealing === undefined))
      ctx.addIssue({ code: 'custom', message: 'give exactly one of kubeconfig.inline or sealing.certificate' });
  })
  .describe(
    "One of kubeconfig (the certificate is fetched from the cluster's controller) or sealing.certificate (the one it serves now, e.g. from `kubeseal --fetch-cert`).",
  );

export const clusterViewSchema = z.object({
  name: z.string(),
  kind: z.enum(['generated', 'reference', 'unmanaged']).describe('`unmanaged`: a directory under clusters/ without provenance.yaml.'),
  gitops_path: z.string(),
  domain: z.string().optional(),
  region: z.string().optional(),
  role: z.string().optional(),
  infra_provider: z.string().optional(),
  dns_provider: z.string().optional(),
  enabled_layers: z
    .array(z.string())
    .readonly()
    .optional()
    .describe('The opt-in layers the cluster resumed (`enable_layers`); its other opt-in layers ship suspended.'),
  previews: z
    .boolean()
    .optional()
    .describe('Generated clusters only: whether it renders an environment per labelled pull/merge request (it enabled the `previews` layer).'),
  status: z
    .enum(['up_to_date', 'behind', 'unknown', 'not_applicable'])
    .describe('Freshness only (the platform commit it was rendered from); kept for compatibility. See `state`.'),
  state: z
    .enum(CLUSTER_STATES)
    .optional()
    .describe(
      'Generated clusters only, in order of precedence: `removing` (a removal run is pending or running), `incomplete` (provenance.yaml records only the infrastructure pass: no sealed credentials, no database, no apps), `failed` (complete, but the last run failed or was cancelled), `behind`, `up_to_date`, `complete` (whether it is behind is not known).',
    ),
  up_to_date: z.boolean().optional(),
  behind: z.object({ rendered_from: z.string().describe('The platform commit the cluster was rendered from.'), current: z.string() }).optional(),
  provenance: z
    .object({
      generator_version: z.string(),
      reference: z.string(),
      platform_commit: z.string(),
      pass: z.enum(RUN_PASSES),
      files: z.number().int().optional().describe('How many files the generator wrote.'),
    })
    .optional(),
  last_run: z
    .object({ id: z.string(), status: z.enum(RUN_STATUSES), created_at: z.string(), finished_at: z.string().optional(), commit: z.string().optional() })
    .optional()
    .describe('The newest run this service started for the cluster in this repository.'),
  sealing: sealingViewSchema
    .optional()
    .describe('Generated clusters only. On GET the controller is not asked (controller_certificate is null); POST …/sealing-check compares.'),
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

export const removalPreviewSchema = z.object({
  dry_run: z.literal(true),
  cluster: z.string(),
  removed: z.array(z.string()).describe('The files a removal would delete, as the branch holds them now.'),
  kept: z.array(z.string()).describe('Files under the cluster path the generator did not write; a removal leaves them in place.'),
  flux_bootstrap: z.boolean().describe('Whether a flux-system/ written by flux bootstrap is among the kept files.'),
});

export const removalSchema = z.object({
  run: acceptedSchema.describe('The removal run (action `remove`): follow it under /api/v1/scaffolds/{id} for its steps, log, commit and pull request.'),
  cluster: z.string(),
  removed: z.array(z.string()).describe('The files the run removes, as the branch holds them now.'),
  kept: z.array(z.string()).describe('Files under the cluster path the generator did not write; left in place.'),
  flux_bootstrap: z.boolean().describe('Whether a flux-system/ written by flux bootstrap is among the kept files.'),
  delete_data: z
    .boolean()
    .describe(
      "Whether the run deletes the data too: it lands the lift of the prune protection first (pass `lift-protection`) and the removal once the cluster's Flux applied it.",
    ),
  delivery: deliveryViewSchema.describe('How the run delivers the removal.'),
});
