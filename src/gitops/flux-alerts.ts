/**
 * Failures as messages: a notification-controller Provider (Slack, Microsoft
 * Teams or a generic webhook, chosen per cluster) and an Alert on every
 * Kustomization and HelmRelease for `error` events, written to
 * `flux/flux-alerts.yaml` and applied by the root sync (Flux's own kinds exist
 * before it runs).
 *
 * The Provider reads its address from the Secret the platform's
 * `{ supplied: notification-address }` credential seals (key `address`, in
 * flux-system): the URL is in Git only as ciphertext. The Provider and the
 * Alert are written only once that credential is sealed (the second pass), so
 * a Provider never names a Secret the tree lacks.
 *
 * A re-render keeps the type the cluster was given, as it keeps the sealed
 * address: a fleet upgrade need not know either.
 */
import { ValidationError } from '../errors.js';
import { isRecord } from '../model/is-record.js';
import { FLUX_NAMESPACE, type CredentialSpec } from './credential-schema.js';
import type { PlatformDescriptor } from './platform-descriptor.js';
import { PLATFORM_DESCRIPTOR_PATH } from './platform-descriptor.js';
import {
  assertNotificationProvider,
  NOTIFICATION_ADDRESS_SUPPLIED,
  NOTIFICATION_FILE,
  type NotificationChoice,
  type NotificationProviderType,
} from './notification-schema.js';
import type { RenderPass } from './render-types.js';
import type { CredentialOutcome } from './sealed-credentials.js';
import { parseYamlDocuments, toYaml } from './yaml.js';

/** The Provider and Alert a render writes. */
export interface PlannedNotifications {
  readonly provider: NotificationProviderType;
  /** The name of the Provider and the Alert (flux-system). */
  readonly name: string;
  readonly yaml: string;
}

/** Inputs of {@link planNotifications}. */
export interface NotificationsInput {
  readonly descriptor: PlatformDescriptor;
  readonly pass: RenderPass;
  readonly clusterName: string;
  readonly choice: NotificationChoice;
  /** The current `flux/flux-alerts.yaml` of the cluster, if any: its Provider type is kept. */
  readonly existing: string | undefined;
  /** What the credential step did with each credential of this pass. */
  readonly outcomes: readonly CredentialOutcome[];
  /** Whether the render writes a FluxInstance (its components must include notification-controller). */
  readonly fluxInstance: boolean;
}

/** The platform's notification-address credential: the one with a `{ supplied: notification-address }` key. */
export function notificationCredentialOf(descriptor: Pick<PlatformDescriptor, 'credentials'>): CredentialSpec | undefined {
  return descriptor.credentials.find((c) => Object.values(c.keys).some((s) => 'supplied' in s && s.supplied === NOTIFICATION_ADDRESS_SUPPLIED));
}

/** The Provider type of an earlier render's flux-alerts.yaml. */
function existingProviderType(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const provider = parseYamlDocuments(text, NOTIFICATION_FILE).find((o) => isRecord(o) && o.kind === 'Provider');
    const type = isRecord(provider) && isRecord(provider.spec) ? provider.spec.type : undefined;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether this render writes a Provider and an Alert, and their YAML.
 * @returns undefined when the cluster gets none (no address supplied or sealed, or the first pass)
 * @throws ValidationError for a choice the platform cannot honour: notifications it does not declare,
 *   a type it does not offer, a type without an address (or the reverse), notifications it requires
 *   and were not given, a FluxInstance without notification-controller
 */
export function planNotifications(input: NotificationsInput): PlannedNotifications | undefined {
  const { descriptor, choice } = input;
  const spec = descriptor.notifications;
  const credential = notificationCredentialOf(descriptor);
  const asked = choice.provider !== undefined || choice.address !== undefined;
  if (spec === undefined || credential === undefined) {
    if (!asked) return undefined;
    throw new ValidationError([
      {
        field: choice.provider !== undefined ? 'notification-provider' : 'notification-address',
        message: `this platform declares no failure notifications (${PLATFORM_DESCRIPTOR_PATH}: a \`notifications\` section and a credential in ${FLUX_NAMESPACE} with \`address: { supplied: ${NOTIFICATION_ADDRESS_SUPPLIED} }\`), so a cluster cannot choose a Provider`,
      },
    ]);
  }
  const given = choice.provider === undefined ? undefined : assertNotificationProvider(choice.provider, 'notification-provider', spec.providers);
  const outcome = input.outcomes.find((o) => o.namespace === credential.namespace && o.name === credential.name);
  // The first pass seals nothing: the Provider comes with its address, in the second.
  if (outcome === undefined) return undefined;
  if (outcome.action === 'omitted') {
    if (given !== undefined) {
      throw new ValidationError([
        {
          field: 'notification-address',
          message: `the ${given} Provider needs its webhook address (--notification-address-file, or notifications.address): none was given and none is sealed for this cluster`,
        },
      ]);
    }
    if (spec.required && input.pass === 'all') {
      throw new ValidationError([
        {
          field: 'notification-address',
          message: `this platform requires failure notifications (${PLATFORM_DESCRIPTOR_PATH} notifications.required): give the Provider type and its webhook address (--notification-provider ${spec.providers.join('|')} --notification-address-file FILE, or notifications in the API)`,
        },
      ]);
    }
    return undefined;
  }
  const kept = existingProviderType(input.existing);
  const type = given ?? (kept === undefined ? undefined : assertNotificationProvider(kept, NOTIFICATION_FILE, spec.providers));
  if (type === undefined) {
    throw new ValidationError([
      {
        field: 'notification-provider',
        message: `a notification address is sealed for this cluster but no Provider type was given: name one (${spec.providers.join(', ')})`,
      },
    ]);
  }
  const components = descriptor.fluxInstance?.components;
  if (input.fluxInstance && components !== undefined && !components.includes('notification-controller')) {
    throw new ValidationError([
      {
        field: `${PLATFORM_DESCRIPTOR_PATH}.fluxInstance.components`,
        message:
          'lacks notification-controller, which alone sends the failure notifications this cluster asks for: add it, or render without a notification Provider',
      },
    ]);
  }
  return { provider: type, name: spec.name, yaml: renderNotifications(input.clusterName, type, spec.name, credential.name, spec.helmReleaseNamespaces) };
}

/** The Provider and the Alert, as one YAML stream. */
export function renderNotifications(
  clusterName: string,
  type: NotificationProviderType,
  name: string,
  secretName: string,
  helmReleaseNamespaces: readonly string[],
): string {
  const metadata = { name, namespace: FLUX_NAMESPACE, labels: { 'app.kubernetes.io/managed-by': 'gitops-scaffolder' } };
  const provider = {
    apiVersion: 'notification.toolkit.fluxcd.io/v1beta3',
    kind: 'Provider',
    metadata,
    // The address (webhook URL) is only in the sealed Secret, key `address`.
    spec: { type, secretRef: { name: secretName } },
  };
  const namespaces = [...new Set([FLUX_NAMESPACE, ...helmReleaseNamespaces])].sort();
  const alert = {
    apiVersion: 'notification.toolkit.fluxcd.io/v1beta3',
    kind: 'Alert',
    metadata,
    spec: {
      providerRef: { name },
      eventSeverity: 'error',
      // Which cluster failed, in every message.
      eventMetadata: { cluster: clusterName },
      eventSources: [
        // Every layer's Kustomization (and the root sync) lives in flux-system.
        { kind: 'Kustomization', name: '*' },
        // notification-controller matches a source's namespace exactly: one entry per namespace with HelmReleases.
        ...namespaces.map((namespace) => (namespace === FLUX_NAMESPACE ? { kind: 'HelmRelease', name: '*' } : { kind: 'HelmRelease', name: '*', namespace })),
      ],
    },
  };
  return `${toYaml(provider, `Failure notifications of cluster ${clusterName}: where they go (a ${type} webhook, its address sealed in Secret ${FLUX_NAMESPACE}/${secretName}). Generated by gitops-scaffolder.`)}---\n${toYaml(
    alert,
    'Every error event of a Kustomization or a HelmRelease becomes a message. Generated by gitops-scaffolder.',
  )}`;
}
