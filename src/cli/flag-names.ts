/**
 * Errors in the words the user typed: the core names inputs by their spec
 * field (`cluster.name`, `repoDir`), a command line by its flag (`--cluster`,
 * `--repo`). Shared by generate-gitops-env and scaffold-runner.
 */
import { isAppError, ValidationError } from '../errors.js';

/** The flag of each spec field the CLIs take from a flag. */
export const FIELD_FLAGS: Readonly<Record<string, string>> = {
  'cluster.name': '--cluster',
  'cluster.domain': '--domain',
  'cluster.region': '--region',
  'cluster.role': '--role',
  'cluster.infra_provider': '--infra-provider',
  'cluster.dns_provider': '--dns-provider',
  'cluster.enable_layers': '--enable-layers',
  cluster: '--cluster',
  reference: '--reference',
  repoDir: '--repo',
  'registry-auth': '--registry-auth',
  'notification-provider': '--notification-provider',
  'notification-address': '--notification-address-file',
  'sync-url': '--sync-url',
  'sync-ref': '--sync-ref',
  cert: '--cert',
  tags: '--tag',
};

/** `error` with each field named by its flag where it has one; any other error as it is. */
export function inFlagTerms(error: unknown): unknown {
  if (!isAppError(error) || !(error instanceof ValidationError)) return error;
  if (!error.issues.some((issue) => FIELD_FLAGS[issue.field] !== undefined)) return error;
  return new ValidationError(
    error.issues.map(({ field, message }) => ({ field: FIELD_FLAGS[field] ?? field, message })),
    { cause: error },
  );
}
