/**
 * The runner's inputs: the `SCAFFOLD_*` environment the executors hand to
 * scaffold-runner. One definition for the three parties: the local executor
 * (secrets as values in the child's environment), the Kubernetes executor
 * (secrets as files of a mounted Secret, named by the `*_FILE` variables) and
 * the runner, whose flags read the same names.
 */
import { z } from 'zod';
import { deliveryEnv } from '../delivery/delivery-settings.js';
import { RUN_ACTIONS } from '../model/run-action.js';
import type { RunSecrets, RunRecord } from '../run/run-record.js';

/** Every variable of the contract, by meaning. */
export const RUNNER_ENV = {
  id: 'SCAFFOLD_ID',
  /** The run's attempt (absent: 1); the landing queue's MACs cover it. */
  attempt: 'SCAFFOLD_ATTEMPT',
  /** scaffold (default), upgrade or remove (`model/run-action.ts`). */
  action: 'SCAFFOLD_ACTION',
  repoUrl: 'SCAFFOLD_REPO_URL',
  branch: 'SCAFFOLD_BRANCH',
  cluster: 'SCAFFOLD_CLUSTER',
  /** A batch upgrade run: the further clusters it upgrades, comma-separated. */
  batch: 'SCAFFOLD_BATCH',
  domain: 'SCAFFOLD_DOMAIN',
  region: 'SCAFFOLD_REGION',
  reference: 'SCAFFOLD_REFERENCE',
  role: 'SCAFFOLD_ROLE',
  infraProvider: 'SCAFFOLD_INFRA_PROVIDER',
  dnsProvider: 'SCAFFOLD_DNS_PROVIDER',
  /** Where the result JSON goes (local executor); a Job uses its termination-message path. */
  resultFile: 'SCAFFOLD_RESULT_FILE',
  /** The run's owner lease (`run-lease.ts`). */
  leaseFile: 'SCAFFOLD_LEASE_FILE',
  /** Where the working copy goes; the executor removes it after the run. */
  workDir: 'SCAFFOLD_WORK_DIR',
  /** Where verify copies the tree for kustomize (a runner Job: a memory-backed volume). */
  scratchDir: 'SCAFFOLD_SCRATCH_DIR',
  // Per-attempt options (not stored with the run; a retry sends them again).
  waitReady: 'SCAFFOLD_WAIT_READY',
  readyTimeout: 'SCAFFOLD_READY_TIMEOUT',
  rotateCredentials: 'SCAFFOLD_ROTATE_CREDENTIALS',
  rotateOnly: 'SCAFFOLD_ROTATE_ONLY',
  rotateValues: 'SCAFFOLD_ROTATE_VALUES',
  /** With a rotation: also write the Jobs that set the fresh values where the databases keep them. */
  freshValues: 'SCAFFOLD_FRESH_VALUES',
  /** A removal: delete the data too (lift the prune protection, wait for Flux to apply it, then remove). */
  deleteData: 'SCAFFOLD_DELETE_DATA',
  liftTimeout: 'SCAFFOLD_LIFT_TIMEOUT',
  // Runner settings an operator may set (the local executor's extraEnv, a Job's spec).
  sealedSecretsNamespace: 'SCAFFOLD_SEALED_SECRETS_NAMESPACE',
  sealedSecretsName: 'SCAFFOLD_SEALED_SECRETS_NAME',
  controllerTimeout: 'SCAFFOLD_CONTROLLER_TIMEOUT',
  logLevel: 'SCAFFOLD_LOG_LEVEL',
  // Secrets as values (local executor); an ssh key and known_hosts also as *_FILE.
  gitSshKey: 'SCAFFOLD_GIT_SSH_KEY',
  gitKnownHosts: 'SCAFFOLD_GIT_KNOWN_HOSTS',
  gitUsername: 'SCAFFOLD_GIT_USERNAME',
  gitToken: 'SCAFFOLD_GIT_TOKEN',
  certificatePem: 'SCAFFOLD_CERT_PEM',
  kubeconfigData: 'SCAFFOLD_KUBECONFIG_DATA',
  registryAuth: 'SCAFFOLD_REGISTRY_AUTH',
  /** The notification Provider's webhook address (a credential); also as *_FILE. */
  notificationAddress: 'SCAFFOLD_NOTIFICATION_ADDRESS',
  /** Its Provider type (slack, msteams, generic): no secret, a per-attempt option. */
  notificationProvider: 'SCAFFOLD_NOTIFICATION_PROVIDER',
  // A GitHub App (pull_request delivery on GitHub); the runner reads each from NAME or the file NAME_FILE.
  githubAppId: 'SCAFFOLD_GITHUB_APP_ID',
  githubAppInstallationId: 'SCAFFOLD_GITHUB_APP_INSTALLATION_ID',
  githubAppPrivateKey: 'SCAFFOLD_GITHUB_APP_PRIVATE_KEY',
  /** The landing queue's key, shared by the service and its runners (`git/queue-auth.ts`); also as *_FILE. */
  queueKey: 'SCAFFOLD_QUEUE_KEY',
  // Secrets as files (Kubernetes executor).
  gitUsernameFile: 'SCAFFOLD_GIT_USERNAME_FILE',
  gitTokenFile: 'SCAFFOLD_GIT_TOKEN_FILE',
  kubeconfigFile: 'SCAFFOLD_KUBECONFIG',
  certificateFile: 'SCAFFOLD_CERT',
  registryAuthFile: 'SCAFFOLD_REGISTRY_AUTH_FILE',
  notificationAddressFile: 'SCAFFOLD_NOTIFICATION_ADDRESS_FILE',
  githubAppIdFile: 'SCAFFOLD_GITHUB_APP_ID_FILE',
  githubAppInstallationIdFile: 'SCAFFOLD_GITHUB_APP_INSTALLATION_ID_FILE',
  githubAppPrivateKeyFile: 'SCAFFOLD_GITHUB_APP_PRIVATE_KEY_FILE',
  queueKeyFile: 'SCAFFOLD_QUEUE_KEY_FILE',
} as const;

/** What every runner environment holds about its run (no secret), as the runner reads it. */
export const runnerRunEnvSchema = z.object({
  [RUNNER_ENV.id]: z.string().min(1),
  [RUNNER_ENV.attempt]: z
    .string()
    .regex(/^[1-9][0-9]{0,5}$/)
    .optional(),
  [RUNNER_ENV.action]: z.enum(RUN_ACTIONS).optional(),
  [RUNNER_ENV.repoUrl]: z.string().min(1),
  [RUNNER_ENV.branch]: z.string().min(1),
  [RUNNER_ENV.cluster]: z.string().min(1),
  [RUNNER_ENV.batch]: z.string().optional(),
  [RUNNER_ENV.domain]: z.string().min(1),
  [RUNNER_ENV.region]: z.string().min(1),
  [RUNNER_ENV.reference]: z.string().min(1),
  [RUNNER_ENV.role]: z.string().optional(),
  [RUNNER_ENV.infraProvider]: z.string().optional(),
  [RUNNER_ENV.dnsProvider]: z.string().optional(),
});

/** The run's own variables: what to scaffold, and where. Holds no credential. */
export function runEnvOf(
  run: Pick<RunRecord, 'id' | 'action' | 'repositoryUrl' | 'branch' | 'cluster' | 'reference' | 'delivery' | 'batch'> & { readonly attempt?: number },
): Record<string, string> {
  return {
    [RUNNER_ENV.id]: run.id,
    ...(run.attempt !== undefined && run.attempt > 1 ? { [RUNNER_ENV.attempt]: String(run.attempt) } : {}),
    ...(run.action !== 'scaffold' ? { [RUNNER_ENV.action]: run.action } : {}),
    [RUNNER_ENV.repoUrl]: run.repositoryUrl,
    [RUNNER_ENV.branch]: run.branch,
    [RUNNER_ENV.cluster]: run.cluster.name,
    ...(run.batch !== undefined && run.batch.length > 0 ? { [RUNNER_ENV.batch]: run.batch.join(',') } : {}),
    [RUNNER_ENV.domain]: run.cluster.domain,
    [RUNNER_ENV.region]: run.cluster.region,
    [RUNNER_ENV.reference]: run.reference,
    ...(run.cluster.role !== undefined ? { [RUNNER_ENV.role]: run.cluster.role } : {}),
    ...(run.cluster.infra_provider !== undefined ? { [RUNNER_ENV.infraProvider]: run.cluster.infra_provider } : {}),
    ...(run.cluster.dns_provider !== undefined ? { [RUNNER_ENV.dnsProvider]: run.cluster.dns_provider } : {}),
    ...deliveryEnv(run.delivery),
  };
}

/** A run's secrets as values in the runner's environment (the local executor: never argv, never a file). */
export function secretEnvOf(secrets: RunSecrets): Record<string, string> {
  const env: Record<string, string> = {};
  if (secrets.repositoryCredentials !== undefined) {
    env[RUNNER_ENV.gitToken] = secrets.repositoryCredentials.token;
    if (secrets.repositoryCredentials.username !== undefined) env[RUNNER_ENV.gitUsername] = secrets.repositoryCredentials.username;
  }
  if (secrets.certificate !== undefined) env[RUNNER_ENV.certificatePem] = secrets.certificate;
  if (secrets.kubeconfig?.kind === 'inline') env[RUNNER_ENV.kubeconfigData] = secrets.kubeconfig.value;
  if (secrets.registryDockerconfigjson !== undefined) env[RUNNER_ENV.registryAuth] = secrets.registryDockerconfigjson;
  if (secrets.notifications !== undefined) env[RUNNER_ENV.notificationAddress] = secrets.notifications.address;
  if (secrets.githubApp !== undefined) {
    env[RUNNER_ENV.githubAppId] = secrets.githubApp.appId;
    env[RUNNER_ENV.githubAppInstallationId] = secrets.githubApp.installationId;
    env[RUNNER_ENV.githubAppPrivateKey] = secrets.githubApp.privateKey;
  }
  return env;
}

/** The landing queue's key as a value in the runner's environment (the local executor). */
export function queueKeyEnvOf(queueKey: string): Record<string, string> {
  return { [RUNNER_ENV.queueKey]: queueKey };
}

/**
 * The runner's environment for the per-attempt options (`--wait-ready
 * --ready-timeout`, `--rotate-credentials` / `--rotate-only`, `--fresh-values`,
 * `--delete-data --lift-timeout`), the same for every executor.
 */
export function runOptionsEnvOf(secrets: RunSecrets): Record<string, string> {
  const rotate = secrets.rotateCredentials;
  return {
    ...(secrets.waitForReady === undefined ? {} : { [RUNNER_ENV.waitReady]: 'true', [RUNNER_ENV.readyTimeout]: `${secrets.waitForReady.timeoutSeconds}s` }),
    ...(rotate === true ? { [RUNNER_ENV.rotateCredentials]: 'true' } : rotate === undefined ? {} : { [RUNNER_ENV.rotateOnly]: rotate.join(',') }),
    // Always said: the runner's own default is --rotate-credentials' historical one (fresh).
    ...(rotate === undefined ? {} : { [RUNNER_ENV.rotateValues]: secrets.rotateValues ?? 'same' }),
    ...(secrets.freshValues === true ? { [RUNNER_ENV.freshValues]: 'true' } : {}),
    ...(secrets.deleteData === undefined ? {} : { [RUNNER_ENV.deleteData]: 'true', [RUNNER_ENV.liftTimeout]: `${secrets.deleteData.timeoutSeconds}s` }),
    // The type only: its address travels as a secret (a value locally, a file of the run's Secret in Kubernetes).
    ...(secrets.notifications === undefined ? {} : { [RUNNER_ENV.notificationProvider]: secrets.notifications.provider }),
  };
}

/** The secret files of a run (Kubernetes: keys of the mounted Secret) and the variable that names each. */
export const SECRET_FILES = {
  gitUsername: { key: 'git-username', variable: RUNNER_ENV.gitUsernameFile },
  gitToken: { key: 'git-token', variable: RUNNER_ENV.gitTokenFile },
  kubeconfig: { key: 'kubeconfig', variable: RUNNER_ENV.kubeconfigFile },
  certificate: { key: 'cert.pem', variable: RUNNER_ENV.certificateFile },
  registryAuth: { key: 'registry-auth.json', variable: RUNNER_ENV.registryAuthFile },
  notificationAddress: { key: 'notification-address', variable: RUNNER_ENV.notificationAddressFile },
  // The App's id and installation id are no secret, but travel with its key so the three never disagree.
  githubAppId: { key: 'github-app-id', variable: RUNNER_ENV.githubAppIdFile },
  githubAppInstallationId: { key: 'github-app-installation-id', variable: RUNNER_ENV.githubAppInstallationIdFile },
  githubAppPrivateKey: { key: 'github-app-private-key.pem', variable: RUNNER_ENV.githubAppPrivateKeyFile },
  // The service's, not the caller's: the same for every run of the service.
  queueKey: { key: 'queue-key', variable: RUNNER_ENV.queueKeyFile },
} as const;

/** The variables naming the secret files present in `keys`, each file below `dir`. */
export function secretFileEnvOf(dir: string, keys: ReadonlySet<string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { key, variable } of Object.values(SECRET_FILES)) if (keys.has(key)) env[variable] = `${dir}/${key}`;
  return env;
}
