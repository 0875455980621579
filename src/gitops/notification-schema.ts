/**
 * The `notifications` section of scaffold.yaml, and the per-cluster choice a
 * caller makes (which Provider type, which address): Flux's failures reported
 * as messages by notification-controller (a Provider and an Alert on every
 * Kustomization and HelmRelease for `error` events), the address sealed like
 * every credential.
 *
 * The address (a webhook URL) is a credential: its key is `address`, the key
 * notification-controller reads from a Provider's `secretRef`, and its value
 * is only ever the caller's (`{ supplied: notification-address }`), never
 * generated and never written in plain text.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { clusterNameSchema } from '../model/cluster-spec.js';

/**
 * The Provider types a cluster may choose, as notification-controller spells
 * them (`notification.toolkit.fluxcd.io/v1beta3` Provider `spec.type`): a
 * Slack incoming webhook, a Microsoft Teams workflow webhook, or any HTTPS
 * endpoint that takes Flux's event JSON.
 */
export const NOTIFICATION_PROVIDERS = ['slack', 'msteams', 'generic'] as const;

export type NotificationProviderType = (typeof NOTIFICATION_PROVIDERS)[number];

/** The Secret key notification-controller reads the webhook address from. */
export const NOTIFICATION_ADDRESS_KEY = 'address';

/** The supplied-value kind of the address credential (`keys.address: { supplied: notification-address }`). */
export const NOTIFICATION_ADDRESS_SUPPLIED = 'notification-address';

/** The generated file holding the Provider and the Alert, relative to the cluster directory (applied by the root sync). */
export const NOTIFICATION_FILE = 'flux/flux-alerts.yaml';

/** The `notifications` section of scaffold.yaml. */
export const notificationsSpecSchema = z
  .object({
    /** The Provider types this platform lets a cluster choose. @default slack, msteams, generic */
    providers: z
      .array(z.enum(NOTIFICATION_PROVIDERS))
      .min(1)
      .default([...NOTIFICATION_PROVIDERS]),
    /** Refuse to render a cluster (its second pass) without a notification address. @default false */
    required: z.boolean({ error: 'must be true or false' }).default(false),
    /** The name of the Provider and the Alert in flux-system. @default flux-failures */
    name: clusterNameSchema.default('flux-failures'),
    /**
     * The namespaces whose HelmReleases the Alert watches: notification-controller
     * matches an event source's namespace exactly, so every namespace holding a
     * HelmRelease must be listed. Kustomizations are Flux's own, in flux-system.
     */
    helmReleaseNamespaces: z.array(clusterNameSchema).default([]),
  })
  .strict();

export type NotificationsSpec = z.infer<typeof notificationsSpecSchema>;

/** What a caller asks of one cluster's notifications (CLI flags, API body, runner env). */
export interface NotificationChoice {
  /** One of {@link NOTIFICATION_PROVIDERS}; unvalidated until {@link assertNotificationProvider}. */
  readonly provider?: string;
  /** The webhook URL, a credential: sealed, never echoed. */
  readonly address?: string;
}

/**
 * Checks a Provider type the caller chose.
 * @throws ValidationError naming the types there are
 */
export function assertNotificationProvider(
  value: string,
  field = 'notifications.provider',
  allowed: readonly string[] = NOTIFICATION_PROVIDERS,
): NotificationProviderType {
  if (!(allowed as readonly string[]).includes(value)) {
    // The type is not a secret: echoing it helps the typo.
    throw new ValidationError([
      { field, message: `${JSON.stringify(value)} is not a notification provider this platform offers (one of ${allowed.join(', ')})` },
    ]);
  }
  return value as NotificationProviderType;
}

/**
 * Checks a caller-supplied webhook address without ever echoing it (a
 * Slack or Teams webhook URL is itself the credential): an absolute `https://`
 * URL with a host and no user info, on one line. A trailing newline (a file
 * written by `echo`) is dropped.
 * @returns the address to seal
 * @throws ValidationError saying what is wrong, never what was given
 */
export function assertNotificationAddress(text: string, field = 'notifications.address'): string {
  const address = text.replace(/\r?\n$/, '');
  const refuse = (message: string): ValidationError => new ValidationError([{ field, message }]);
  if (address.trim() === '') throw refuse('is empty (expected the webhook URL, https://…)');
  if (address.length > 2048) throw refuse('must be at most 2048 characters');
  if (/\s/.test(address)) throw refuse('must be one URL, without spaces or line breaks');
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw refuse('is not a URL (expected the webhook URL, https://…)');
  }
  if (url.protocol !== 'https:') throw refuse('must be an https:// URL: the webhook address is a credential and travels only encrypted');
  if (url.hostname === '') throw refuse('must name a host');
  if (url.username !== '' || url.password !== '') throw refuse('must not carry user info (user:password@)');
  return address;
}
