/**
 * The rules of scaffold.yaml's `notifications` that hold across sections: the
 * address it seals must be a credential notification-controller can read.
 */
import type { FieldIssue } from '../errors.js';
import { FLUX_CREDENTIAL_LAYER, FLUX_NAMESPACE, type CredentialSpec } from './credential-schema.js';
import { NOTIFICATION_ADDRESS_KEY, NOTIFICATION_ADDRESS_SUPPLIED, type NotificationsSpec } from './notification-schema.js';

const DESCRIPTOR = 'scaffold.yaml';

/** Issues of the notification-address credential and the `notifications` section, with fields named in scaffold.yaml. */
export function notificationIssues(descriptor: {
  readonly credentials: readonly CredentialSpec[];
  readonly notifications?: NotificationsSpec | undefined;
}): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const holders = descriptor.credentials.filter((c) => Object.values(c.keys).some((s) => 'supplied' in s && s.supplied === NOTIFICATION_ADDRESS_SUPPLIED));
  for (const c of holders) {
    const field = `${DESCRIPTOR}.credentials.${c.namespace}/${c.name}`;
    const keys = Object.entries(c.keys);
    // The Provider's secretRef is looked up in its own namespace, and the controller reads the key `address`.
    if (c.namespace !== FLUX_NAMESPACE)
      issues.push({
        field: `${field}.namespace`,
        message: `holds the notification address, which the Provider in ${FLUX_NAMESPACE} reads: it must be in ${FLUX_NAMESPACE}`,
      });
    if (keys.length !== 1 || keys[0]![0] !== NOTIFICATION_ADDRESS_KEY) {
      issues.push({
        field: `${field}.keys`,
        message: `holds the notification address: its one key must be ${NOTIFICATION_ADDRESS_KEY} (the key notification-controller reads)`,
      });
    }
    // The root sync runs before the Sealed Secrets controller: a SealedSecret there fails its dry run.
    if (c.layer === FLUX_CREDENTIAL_LAYER) {
      issues.push({
        field: `${field}.layer`,
        message:
          'a SealedSecret in the root sync fails its dry run before the Sealed Secrets CRD exists: seal the address into a layer that comes after the Sealed Secrets controller',
      });
    }
  }
  if (holders.length > 1)
    issues.push({
      field: `${DESCRIPTOR}.credentials`,
      message: `${holders.map((c) => `${c.namespace}/${c.name}`).join(', ')} all hold the notification address: keep one`,
    });
  if (descriptor.notifications !== undefined && holders.length === 0) {
    issues.push({
      field: `${DESCRIPTOR}.notifications`,
      message: `needs a credential for the webhook address: one in ${FLUX_NAMESPACE} with keys \`${NOTIFICATION_ADDRESS_KEY}: { supplied: ${NOTIFICATION_ADDRESS_SUPPLIED} }\``,
    });
  }
  return issues;
}
