/**
 * The Kubernetes objects of one run, as data: the labels, the Secret's data
 * and the hardened Job that runs scaffold-runner with the Secret mounted as
 * files. No credential ever appears in the Job spec or its environment: the
 * runner gets file paths (`run-contract/runner-inputs.ts`).
 */
import type { V1Job, V1ResourceRequirements } from '@kubernetes/client-node';
import { parseRepositoryUrl } from '../model/repository-url.js';
import { RUNNER_ENV, runEnvOf, runOptionsEnvOf, SECRET_FILES, secretFileEnvOf } from '../run-contract/runner-inputs.js';
import { jobNameOf, type RunSecrets, type RunRecord } from '../run/run-record.js';
import { jobDeadlineSeconds } from './job-deadline.js';
import { EXIT_BAD_INPUT } from '../exit-codes.js';
import { DEFAULT_RUNNER_MEMORY_LIMIT, DEFAULT_RUNNER_SCRATCH_SIZE_LIMIT, DEFAULT_RUNNER_TMP_SIZE_LIMIT } from '../service/service-config.js';

/** Labels on the Job, its pods and its Secret. */
export const NAME_LABEL = 'app.kubernetes.io/name';
export const RUN_ID_LABEL = 'gitops-scaffolder.io/run-id';
export const CLUSTER_LABEL = 'gitops-scaffolder.io/cluster';
/** The runner's container in the Job's pods. */
export const CONTAINER = 'runner';
/** Where the Secret is mounted; the runner reads its credentials from files here. */
const RUNNER_SECRETS_DIR = '/var/run/scaffold/secrets';
/** The working copy's files and verify's scratch copy of the tree (`--scratch-dir`); the history stays on /tmp. */
const RUNNER_SCRATCH_DIR = '/var/run/scaffold/scratch';
// A distroless "nonroot" user; fsGroup makes the 0400 Secret files group-readable
// by it (the kubelet turns 0400 into 0440 with the fsGroup as owner group).
const RUNNER_UID = 65532;

/** The runner container's resources; its memory limit also holds the in-memory scratch volume. */
function runnerResources(memoryLimit: string): V1ResourceRequirements {
  return { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1', memory: memoryLimit } };
}

/** How the Job is shaped (part of the executor's deps). */
export interface JobShape {
  /** JOB_NAMESPACE: where Jobs and their Secrets are created. */
  readonly namespace: string;
  /** SCAFFOLD_RUNNER_IMAGE. */
  readonly image: string;
  /** The runner pod's ServiceAccount. @default the namespace's `default` */
  readonly serviceAccountName?: string;
  /** Pull secrets for a private runner image. @default none */
  readonly imagePullSecrets?: readonly string[];
  /**
   * The runner container's memory limit (a Kubernetes quantity); the scratch
   * volume counts against it. Requests are 100m CPU and 256Mi, the CPU limit 1.
   * @default DEFAULT_RUNNER_MEMORY_LIMIT
   */
  readonly memoryLimit?: string;
  /**
   * `sizeLimit` of the runner's /tmp emptyDir (a Kubernetes quantity). Past it the
   * kubelet evicts the pod. @default DEFAULT_RUNNER_TMP_SIZE_LIMIT
   */
  readonly tmpSizeLimit?: string;
  /**
   * `sizeLimit` of the runner's in-memory scratch volume (a Kubernetes quantity),
   * which counts against its memory limit. Past it the kubelet evicts the pod.
   * @default DEFAULT_RUNNER_SCRATCH_SIZE_LIMIT
   */
  readonly scratchSizeLimit?: string;
  /** The landing queue's key (`git/queue-auth.ts`), the file `queue-key` of every run's Secret. */
  readonly queueKey?: string;
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** The labels of a run's objects. */
export function labelsOf(run: RunRecord): Record<string, string> {
  return { [NAME_LABEL]: 'scaffold-runner', [RUN_ID_LABEL]: run.id, [CLUSTER_LABEL]: run.cluster.name };
}

/**
 * The Secret's data (base64), one key per credential file, for the secrets
 * given as values. A kubeconfig Secret reference is resolved by the executor,
 * which reads it, and added under {@link SECRET_FILES}.kubeconfig.
 */
export function secretDataOf(secrets: RunSecrets, queueKey?: string): Record<string, string> {
  const data: Record<string, string> = {};
  if (queueKey !== undefined) data[SECRET_FILES.queueKey.key] = b64(queueKey);
  if (secrets.repositoryCredentials) {
    data[SECRET_FILES.gitToken.key] = b64(secrets.repositoryCredentials.token);
    if (secrets.repositoryCredentials.username) data[SECRET_FILES.gitUsername.key] = b64(secrets.repositoryCredentials.username);
  }
  if (secrets.kubeconfig?.kind === 'inline') data[SECRET_FILES.kubeconfig.key] = b64(secrets.kubeconfig.value);
  if (secrets.certificate) data[SECRET_FILES.certificate.key] = b64(secrets.certificate);
  if (secrets.registryDockerconfigjson) data[SECRET_FILES.registryAuth.key] = b64(secrets.registryDockerconfigjson);
  if (secrets.notifications) data[SECRET_FILES.notificationAddress.key] = b64(secrets.notifications.address);
  if (secrets.githubApp) {
    data[SECRET_FILES.githubAppId.key] = b64(secrets.githubApp.appId);
    data[SECRET_FILES.githubAppInstallationId.key] = b64(secrets.githubApp.installationId);
    data[SECRET_FILES.githubAppPrivateKey.key] = b64(secrets.githubApp.privateKey);
  }
  return data;
}

/**
 * The runner Job of `run`, mounting the Secret whose keys are `files`, with
 * this attempt's options (`secrets`' waits and rotation, never its credentials,
 * which are the Secret's).
 * @throws ValidationError when the repository URL carries a credential
 */
export function jobManifestOf(run: RunRecord, labels: Record<string, string>, files: ReadonlySet<string>, shape: JobShape, secrets: RunSecrets = {}): V1Job {
  const name = jobNameOf(run.id);
  const deadline = jobDeadlineSeconds(run, secrets);
  // A credential in the URL would land in the Job spec in plaintext. Read by the one policy the runner's
  // git edge applies (model/repository-url.ts): no user info but an ssh login name, in every form git
  // reads (a password, a token as the user, user:password@host:path).
  parseRepositoryUrl(run.repositoryUrl, 'repository.url');
  const env = Object.entries({
    ...runEnvOf(run),
    // The root filesystem is read-only: git and friends write their config under HOME.
    HOME: '/tmp',
    [RUNNER_ENV.scratchDir]: RUNNER_SCRATCH_DIR,
    ...secretFileEnvOf(RUNNER_SECRETS_DIR, files),
    // Per-attempt options (--wait-ready, --rotate-only): not stored with the run.
    ...runOptionsEnvOf(secrets),
  }).map(([variable, value]) => ({ name: variable, value }));

  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: shape.namespace,
      labels,
      annotations: { 'gitops-scaffolder.io/created-by': run.createdBy },
    },
    spec: {
      // Retries after a failed pod: the runner converges on a rerun, so retrying is safe.
      backoffLimit: 2,
      // A pod evicted or preempted (a node drain) is retried without spending a retry; a run refused for
      // its input (exit 2) fails at once, where two more pods would be refused the same way.
      podFailurePolicy: {
        rules: [
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
          { action: 'FailJob', onExitCodes: { containerName: CONTAINER, operator: 'In', values: [EXIT_BAD_INPUT] } },
        ],
      },
      // The run's work and the waits it was asked for; none for a run waiting on a review.
      ...(deadline !== undefined ? { activeDeadlineSeconds: deadline } : {}),
      // A day for the service to read the outcome (the runner's termination message) before the Job goes.
      ttlSecondsAfterFinished: 86_400,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          ...(shape.serviceAccountName ? { serviceAccountName: shape.serviceAccountName } : {}),
          // The runner talks to the NEW cluster with the kubeconfig it is given, never to this one.
          automountServiceAccountToken: false,
          ...(shape.imagePullSecrets?.length ? { imagePullSecrets: shape.imagePullSecrets.map((n) => ({ name: n })) } : {}),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUNNER_UID,
            runAsGroup: RUNNER_UID,
            fsGroup: RUNNER_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: CONTAINER,
              image: shape.image,
              env,
              volumeMounts: [
                { name: 'secrets', mountPath: RUNNER_SECRETS_DIR, readOnly: true },
                { name: 'tmp', mountPath: '/tmp' },
                { name: 'scratch', mountPath: RUNNER_SCRATCH_DIR },
              ],
              // The result JSON goes here; if the runner dies first, the log tail stands in.
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'FallbackToLogsOnError',
              resources: runnerResources(shape.memoryLimit ?? DEFAULT_RUNNER_MEMORY_LIMIT),
              securityContext: {
                runAsNonRoot: true,
                runAsUser: RUNNER_UID,
                readOnlyRootFilesystem: true,
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
                seccompProfile: { type: 'RuntimeDefault' },
              },
            },
          ],
          volumes: [
            { name: 'secrets', secret: { secretName: name, defaultMode: 0o400 } },
            // The clone and the generated tree live here (the root filesystem is read-only).
            // Bounded: a hostile or runaway repository is evicted, not the node's disk filled.
            { name: 'tmp', emptyDir: { sizeLimit: shape.tmpSizeLimit ?? DEFAULT_RUNNER_TMP_SIZE_LIMIT } },
            // verify's copy of the tree for kustomize, made and removed twice a run: in
            // memory it costs no disk file creations (counted in the container's memory limit).
            { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: shape.scratchSizeLimit ?? DEFAULT_RUNNER_SCRATCH_SIZE_LIMIT } },
          ],
        },
      },
    },
  };
}
