/**
 * The `fluxInstance` section of scaffold.yaml: a FluxInstance for the Flux
 * Operator to manage Flux with, instead of `flux bootstrap`.
 */
import { z } from 'zod';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { fluxNetworkPolicySchema } from './flux-network-policy.js';
import { fluxShardingSchema } from './flux-sharding.js';
import { fluxTuningSchema } from './flux-tuning.js';
import { durationSchema } from './layer-catalog-schema.js';

/**
 * The operator's chart versions a cluster follows: from the chart a cluster is
 * bootstrapped with (0.49.0, controlplaneio-fluxcd/charts) up to, not
 * including, 1.0.0, where a major may change the API it serves.
 */
export const OPERATOR_CHART_RANGE = '>=0.49.0 <1.0.0';

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
        artifact: z
          .string()
          .regex(/^oci:\/\//, 'must be an oci:// URL')
          .optional(),
      })
      .strict()
      .prefault({}),
    components: z.array(z.enum(FLUX_COMPONENTS)).min(1).default(['source-controller', 'kustomize-controller', 'helm-controller', 'notification-controller']),
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
    /**
     * The Flux Operator upgrades itself from Git (flux-operator-release.ts): a
     * HelmRelease of its chart from an OCIRepository with this semver range,
     * verified with cosign. The version installed at bootstrap is the floor.
     */
    operator: z
      .object({
        upgrade: z.boolean({ error: 'must be true or false' }).default(true),
        version: z.string().min(1).max(128).default(OPERATOR_CHART_RANGE),
      })
      .strict()
      .prefault({}),
    /** Controller settings patched into the operator's manifests (flux-tuning.ts); on by default. */
    tuning: fluxTuningSchema.prefault({}),
    /** Extra controller shards and the layers they reconcile (flux-sharding.ts); absent: no sharding. */
    sharding: fluxShardingSchema.optional(),
    /** Patches of the operator-generated NetworkPolicies (flux-network-policy.ts); off by default. */
    networkPolicy: fluxNetworkPolicySchema.prefault({}),
    sync: z
      .object({
        url: syncUrlSchema.optional(),
        /** `refs/heads/<branch>` for Git (default `refs/heads/main`), a tag for OCI (default `latest`). */
        ref: z.string().min(1).max(255).optional(),
        interval: durationSchema.optional(),
        /** The Secret in flux-system with the credentials to pull the source (ssh key, token, GitHub App). */
        pullSecret: clusterNameSchema.optional(),
        /**
         * `github`: Flux pulls as a GitHub App (short-lived installation tokens
         * instead of a long-lived token; spec 004), whose ID, installation ID and
         * private key are in the pull Secret. Git over https only.
         */
        provider: z.enum(['generic', 'github'], { error: 'must be generic or github' }).optional(),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((spec, context) => {
    // flux bootstrap installs one set of controllers: sharding is the operator's.
    if (spec.sharding !== undefined && !spec.enabled) {
      context.addIssue({
        code: 'custom',
        path: ['sharding'],
        message:
          'sharding needs the Flux Operator (fluxInstance.enabled: true): flux bootstrap installs no shard controllers, so every layer labelled for a shard would be reconciled by nobody',
      });
    }
  });

export type FluxInstanceSpec = z.infer<typeof fluxInstanceSpecSchema>;
