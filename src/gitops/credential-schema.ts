/**
 * The `credentials` section of scaffold.yaml: the Secrets to generate and seal
 * for every cluster, and how each of their values is produced.
 */
import { z } from 'zod';
import { clusterNameSchema } from '../model/cluster-spec.js';

const secretKeySchema = z.string().regex(/^[-._a-zA-Z0-9]+$/, 'must be a valid Secret data key');

/** How one value of a credential is produced. */
export const valueSourceSchema = z.union([
  z.object({ generate: z.literal('password'), length: z.number().int().min(16).max(256).default(32) }).strict(),
  z.object({ generate: z.literal('alphanumeric'), length: z.number().int().min(16).max(256).default(32) }).strict(),
  // A registry's pull credentials: only the registry issues them, so they are
  // never generated; the caller supplies them (`--registry-auth`,
  // `registry_pull_secret`) or the credential is not written at all.
  z
    .object({
      supplied: z.literal('registry-auth'),
      /** The registry the images come from (what the supplied `auths` should cover). */
      registry: z.string().min(1),
    })
    .strict(),
  // A notification Provider's webhook address (notifications.ts): only the
  // chat or endpoint issues it; the caller supplies it (`--notification-address-file`,
  // `notifications.address`) or the credential is not written at all.
  z.object({ supplied: z.literal('notification-address') }).strict(),
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
 * Where a database keeps the passwords of a credential, so `rotate
 * --fresh-values` can change them there too: PostgreSQL and RabbitMQ read
 * their passwords from the Secret only when they first initialise, and nothing
 * updates them afterwards. `users` maps a Secret key to the role (PostgreSQL,
 * `ALTER ROLE`) or user (RabbitMQ, `rabbitmqctl change_password`) it is the
 * password of; the change runs in `pod`'s `container` over the local socket.
 */
export const passwordChangeSchema = z
  .object({
    engine: z.enum(['postgresql', 'rabbitmq']),
    pod: clusterNameSchema,
    container: clusterNameSchema,
    users: z.record(secretKeySchema, z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case role or user name')),
    /** PostgreSQL: the superuser psql connects as over the local socket (and its database). @default postgres */
    connectAs: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/)
      .optional(),
    /** An image with sh and kubectl that runs the change. */
    image: z.string().min(1).default('alpine/k8s:1.32.4'),
  })
  .strict();

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
    /** Where a database keeps these passwords (`rotate --fresh-values` changes them there). */
    passwordChange: passwordChangeSchema.optional(),
  })
  .strict();

export type ValueSource = z.infer<typeof valueSourceSchema>;
export type CredentialSpec = z.infer<typeof credentialSpecSchema>;
export type PasswordChange = z.infer<typeof passwordChangeSchema>;
