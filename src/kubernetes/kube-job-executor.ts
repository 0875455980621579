/**
 * Runs scaffold-runner as a Kubernetes Job (production mode of the executor port).
 *
 * One run is two objects named `scaffold-<id>` in JOB_NAMESPACE: a Secret with
 * the run's credentials, mounted read-only as files, and the Job. The Secret is
 * made a dependent of the Job (ownerReferences), so the garbage collector removes
 * it with the Job, whether the Job is deleted by `cancel()` or by its TTL. No
 * credential ever appears in the Job spec or its environment: the runner gets
 * file paths.
 *
 * The runner reports its result JSON in the container's termination message
 * (`terminationMessagePath`), which the kubelet copies into the pod status, so
 * the result outlives the container and needs no volume or extra API.
 */
import { PassThrough, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import {
  BatchV1Api,
  CoreV1Api,
  Log,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1EnvVar,
  type V1Job,
  type V1Pod,
  type V1ResourceRequirements,
} from '@kubernetes/client-node';
import { z } from 'zod';
import { NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import { kubeconfigIssues } from '../model/kubeconfig-policy.js';
import { outputSourceLine } from '../service/output-source.js';
import type { ExecutionState, ScaffoldExecutor } from '../service/scaffold-executor.js';
import { runOptionsEnvOf } from '../run-contract/runner-inputs.js';
import { jobNameOf, type RunResult, type RunSecrets, type ScaffoldRun } from '../service/scaffold-run.js';
import { interruptibleSleep } from '../interruptible-sleep.js';
import { kubeApiFailureOf, kubeApiFailureSummary } from './kube-api-error.js';
import { deliveryEnv } from '../delivery/delivery-settings.js';

/** What KubeJobExecutor needs. */
export interface KubeJobExecutorDeps {
  /** Credentials of the cluster the service runs Jobs in (not the new cluster's). */
  readonly kubeConfig: KubeConfig;
  /** JOB_NAMESPACE: where Jobs and their Secrets are created. */
  readonly namespace: string;
  /** SCAFFOLD_RUNNER_IMAGE. */
  readonly image: string;
  /** The runner pod's ServiceAccount. @default the namespace's `default` */
  readonly serviceAccountName?: string;
  /** Pull secrets for a private runner image. @default none */
  readonly imagePullSecrets?: readonly string[];
  /** @default 1800 */
  readonly activeDeadlineSeconds?: number;
  /** Retries after a failed pod; the runner converges on re-run, so retrying is safe. @default 2 */
  readonly backoffLimit?: number;
  /** @default 86400 */
  readonly ttlSecondsAfterFinished?: number;
  /** @default requests 100m CPU / 256Mi, limits 1 CPU / 1Gi */
  readonly resources?: V1ResourceRequirements;
  /** How often `logs({follow})` looks for a pod to start or for the Job to end. @default 2000 */
  readonly pollIntervalMs?: number;
  readonly logger?: Logger;
}

/** Labels on the Job, its pods and its Secret. */
const NAME_LABEL = 'app.kubernetes.io/name';
const RUN_ID_LABEL = 'gitops-scaffolder.io/run-id';
const CLUSTER_LABEL = 'gitops-scaffolder.io/cluster';
const CONTAINER = 'runner';
/** Where the Secret is mounted; the runner reads its credentials from files here. */
const RUNNER_SECRETS_DIR = '/var/run/scaffold/secrets';
const FILES = {
  gitUsername: 'git-username',
  gitToken: 'git-token',
  kubeconfig: 'kubeconfig',
  certificate: 'cert.pem',
  registryAuth: 'registry-auth.json',
} as const;
// A distroless "nonroot" user; fsGroup makes the 0400 Secret files group-readable
// by it (the kubelet turns 0400 into 0440 with the fsGroup as owner group).
const RUNNER_UID = 65532;

const DEFAULT_RESOURCES: V1ResourceRequirements = {
  requests: { cpu: '100m', memory: '256Mi' },
  limits: { cpu: '1', memory: '1Gi' },
};

/** The result JSON the runner writes to its termination-message path. */
const runResultSchema = z.object({
  status: z.enum(['succeeded', 'failed']),
  message: z.string().default(''),
  gitops_path: z.string().optional(),
  commits: z.array(z.object({ pass: z.enum(['infrastructure', 'all']), sha: z.string() })).optional(),
  step: z.number().int().min(0).optional(),
});

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

const codeOf = (error: unknown): number | undefined => kubeApiFailureOf(error).code;

function unavailable(what: string, error: unknown): UnavailableError {
  return new UnavailableError(`${what}: ${kubeApiFailureSummary(error)}`, { cause: error });
}

/** Lines of a text stream, without their newline. */
async function* linesOf(stream: Readable): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of stream) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      yield pending.slice(0, newline).replace(/\r$/, '');
      pending = pending.slice(newline + 1);
    }
  }
  pending += decoder.end();
  if (pending !== '') yield pending;
}

// `timestamps=true` prefixes each line with RFC3339Nano and a space.
const TIMESTAMPED = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) ([\s\S]*)$/;

/** An RFC3339(Nano) time as epoch nanoseconds. */
function nanosOf(time: string): bigint {
  const m = /^(.*?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(time);
  const seconds = m ? Date.parse(`${m[1] ?? ''}${m[3] ?? ''}`) : NaN;
  if (!m || Number.isNaN(seconds)) return -1n;
  return BigInt(seconds) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0') || '0');
}

function byCreation(a: V1Pod, b: V1Pod): number {
  const ta = a.metadata?.creationTimestamp?.getTime() ?? 0;
  const tb = b.metadata?.creationTimestamp?.getTime() ?? 0;
  return ta - tb || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
}

type ContainerPhase = 'waiting' | 'running' | 'terminated';

function runnerPhase(pod: V1Pod): ContainerPhase {
  const state = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.state;
  if (state?.terminated) return 'terminated';
  if (state?.running) return 'running';
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return 'terminated';
  return 'waiting';
}

function isFinished(job: V1Job): 'Complete' | 'Failed' | undefined {
  const conditions = job.status?.conditions ?? [];
  if (conditions.some((c) => c.type === 'Failed' && c.status === 'True')) return 'Failed';
  if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) return 'Complete';
  return undefined;
}

/** The runner's result, when the termination message is one. */
function parseResult(message: string | undefined): RunResult | undefined {
  if (!message) return undefined;
  try {
    const parsed = runResultSchema.safeParse(JSON.parse(message.trim()));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Under FallbackToLogsOnError a runner that died before writing its result
 * leaves the tail of its log (JSON events) as the termination message: take
 * the last event's message and step from it.
 */
function lastEvent(message: string | undefined): { message?: string; step?: number } {
  for (const line of (message ?? '').split('\n').reverse()) {
    try {
      const event = JSON.parse(line) as Record<string, unknown>;
      const text = typeof event['msg'] === 'string' ? event['msg'] : typeof event['message'] === 'string' ? event['message'] : undefined;
      const step = typeof event['step'] === 'number' ? event['step'] : undefined;
      if (text !== undefined || step !== undefined) return { ...(text ? { message: text } : {}), ...(step !== undefined ? { step } : {}) };
    } catch {
      // not a JSON event line
    }
  }
  return {};
}

/** Implements ScaffoldExecutor with Kubernetes Jobs. */
export class KubeJobExecutor implements ScaffoldExecutor {
  private readonly batch: BatchV1Api;
  private readonly core: CoreV1Api;
  private readonly podLog: Log;
  private readonly namespace: string;
  private readonly deps: KubeJobExecutorDeps;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;

  constructor(deps: KubeJobExecutorDeps) {
    if (!deps.image) throw new ValidationError([{ field: 'SCAFFOLD_RUNNER_IMAGE', message: 'must be set to run scaffolds as Kubernetes Jobs' }]);
    if (!deps.namespace) throw new ValidationError([{ field: 'JOB_NAMESPACE', message: 'must not be empty' }]);
    this.deps = deps;
    this.namespace = deps.namespace;
    this.batch = deps.kubeConfig.makeApiClient(BatchV1Api);
    this.core = deps.kubeConfig.makeApiClient(CoreV1Api);
    this.podLog = new Log(deps.kubeConfig);
    this.logger = (deps.logger ?? silentLogger).child({ component: 'kube-job-executor', namespace: deps.namespace });
    this.pollIntervalMs = deps.pollIntervalMs ?? 2000;
  }

  /**
   * Creates the Secret, then the Job, then makes the Job own the Secret.
   * Starting a run whose Job exists returns that Job's name.
   *
   * @throws ValidationError when the repository URL carries credentials or a kubeconfig Secret lacks its key
   * @throws NotFoundError when the referenced kubeconfig Secret does not exist
   * @throws UnavailableError when the Kubernetes API cannot be reached or refuses
   */
  async start(run: ScaffoldRun, secrets: RunSecrets): Promise<{ readonly job: string }> {
    const name = jobNameOf(run.id);
    const log = this.logger.child({ run: run.id, job: name });
    const labels = this.labelsOf(run);
    const data = await this.secretData(secrets);
    const body = this.jobOf(run, labels, new Set(Object.keys(data)), runOptionsEnvOf(secrets));

    let secretCreated = false;
    try {
      await this.core.createNamespacedSecret({
        namespace: this.namespace,
        body: { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name, namespace: this.namespace, labels }, data },
      });
      secretCreated = true;
    } catch (error) {
      if (codeOf(error) !== 409) throw unavailable(`cannot create Secret ${this.namespace}/${name}`, error);
      // A previous start got this far: bring the values up to date (the Job may not exist yet).
      try {
        await this.core.patchNamespacedSecret(
          { namespace: this.namespace, name, body: { data } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      } catch (patchError) {
        throw unavailable(`cannot update Secret ${this.namespace}/${name}`, patchError);
      }
    }

    let job: V1Job;
    try {
      job = await this.batch.createNamespacedJob({ namespace: this.namespace, body });
      log.info({ image: this.deps.image }, 'created the runner Job');
    } catch (error) {
      if (codeOf(error) === 409) {
        try {
          job = await this.batch.readNamespacedJob({ namespace: this.namespace, name });
        } catch (readError) {
          throw unavailable(`Job ${this.namespace}/${name} exists but cannot be read`, readError);
        }
        log.info({}, 'the runner Job already exists');
      } else {
        // Do not leave credentials behind for a Job that will never run.
        if (secretCreated) await this.deleteIgnoringMissing('Secret', () => this.core.deleteNamespacedSecret({ namespace: this.namespace, name }));
        const { code, message } = kubeApiFailureOf(error);
        if (code === 422 || code === 400) throw new ValidationError(`the API server rejected Job ${name}: ${message ?? kubeApiFailureSummary(error)}`, { cause: error });
        throw unavailable(`cannot create Job ${this.namespace}/${name}`, error);
      }
    }

    const uid = job.metadata?.uid;
    if (uid) await this.ownSecret(name, uid, log);
    return { job: name };
  }

  /** Reads the Job and, once it has finished, the runner's result from its pod. */
  async inspect(run: ScaffoldRun): Promise<ExecutionState> {
    const name = jobNameOf(run.id);
    let job: V1Job;
    try {
      job = await this.batch.readNamespacedJob({ namespace: this.namespace, name });
    } catch (error) {
      // The Job is the fence, and its pods outlive it while they terminate (or when it was deleted orphaning them):
      // a runner container still alive may still push.
      if (codeOf(error) === 404) return (await this.runnerAlive(run)) ? { state: 'running' } : { state: 'missing' };
      throw unavailable(`cannot read Job ${this.namespace}/${name}`, error);
    }
    const finished = isFinished(job);
    if (!finished) {
      if ((job.status?.ready ?? 0) > 0) return { state: 'running' };
      if ((job.status?.active ?? 0) === 0) return { state: 'pending' };
      // `active` counts pending pods too; `ready` is missing on older clusters.
      const pods = await this.listPods(name);
      return pods.some((p) => runnerPhase(p) === 'running') ? { state: 'running' } : { state: 'pending' };
    }

    const pods = await this.listPods(name);
    const terminated = pods
      .map((p) => p.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.state?.terminated)
      .filter((t) => t !== undefined)
      .at(-1);
    const reported = parseResult(terminated?.message);
    if (finished === 'Complete') {
      if (reported?.status === 'succeeded') return { state: 'succeeded', result: reported };
      if (reported) return { state: 'failed', result: reported };
      return { state: 'failed', result: { status: 'failed', message: 'the runner exited successfully but wrote no result' } };
    }
    if (reported?.status === 'failed') return { state: 'failed', result: reported };
    const condition = job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
    const cause = [condition?.reason, condition?.message].filter(Boolean).join(': ') || 'the Job failed';
    const event = lastEvent(terminated?.message);
    return {
      state: 'failed',
      result: {
        ...(reported ?? {}),
        status: 'failed',
        message: event.message ? `${cause}; last event: ${event.message}` : cause,
        ...(event.step !== undefined && reported?.step === undefined ? { step: event.step } : {}),
      },
    };
  }

  /**
   * The runner's log lines, pod by pod in creation order (a retried Job has
   * several), each pod's preceded by its source line (`pod/<pod name>`, see
   * `service/output-source.ts`), so a reader can tell the tries apart and count
   * what it has of each even when an earlier pod is gone. With `follow`, waits
   * for pods to start, streams each until its container exits (resuming after
   * a dropped connection), and ends when the Job has finished and every pod has
   * been read. A Job that no longer exists yields nothing.
   */
  async *logs(run: ScaffoldRun, options: { readonly follow: boolean; readonly signal?: AbortSignal }): AsyncIterable<string> {
    const { follow, signal } = options;
    const name = jobNameOf(run.id);
    const read = new Set<string>();
    while (!signal?.aborted) {
      const pods = await this.listPods(name);
      const next = pods.find((p) => !read.has(p.metadata?.name ?? ''));
      if (next) {
        const podName = next.metadata?.name ?? '';
        const phase = runnerPhase(next);
        if (phase === 'waiting') {
          if (!follow || (await this.jobIsOver(name))) {
            read.add(podName);
          } else {
            await interruptibleSleep(this.pollIntervalMs, signal);
          }
          continue;
        }
        // The message is for people; only `source` is relied on.
        const retry = pods.indexOf(next) > 0 ? ', a retry of the runner' : '';
        yield outputSourceLine({ source: `pod/${podName}`, msg: `runner output from pod ${podName}${retry}` });
        yield* this.podLines(podName, follow && phase === 'running', signal);
        read.add(podName);
        continue;
      }
      if (!follow || (await this.jobIsOver(name))) return;
      await interruptibleSleep(this.pollIntervalMs, signal);
    }
  }

  /** Deletes the Job (its pods go with it) and the Secret. Missing objects are fine. */
  async cancel(run: ScaffoldRun): Promise<void> {
    const name = jobNameOf(run.id);
    await this.deleteIgnoringMissing('Job', () =>
      // Background: without it batch/v1 orphans the pods, and a cancelled runner would keep pushing.
      this.batch.deleteNamespacedJob({ namespace: this.namespace, name, propagationPolicy: 'Background' }),
    );
    // Normally garbage-collected with the Job; deleted here too so cancel never depends on the owner reference.
    await this.deleteIgnoringMissing('Secret', () => this.core.deleteNamespacedSecret({ namespace: this.namespace, name }));
    this.logger.info({ run: run.id, job: name }, 'cancelled the runner Job');
  }

  // ---- helpers -----------------------------------------------------------------------------

  private labelsOf(run: ScaffoldRun): Record<string, string> {
    return { [NAME_LABEL]: 'scaffold-runner', [RUN_ID_LABEL]: run.id, [CLUSTER_LABEL]: run.cluster.name };
  }

  /** The Secret's data (base64), one key per credential file. */
  private async secretData(secrets: RunSecrets): Promise<Record<string, string>> {
    const data: Record<string, string> = {};
    if (secrets.repositoryCredentials) {
      data[FILES.gitToken] = b64(secrets.repositoryCredentials.token);
      if (secrets.repositoryCredentials.username) data[FILES.gitUsername] = b64(secrets.repositoryCredentials.username);
    }
    const kubeconfig = secrets.kubeconfig;
    if (kubeconfig?.kind === 'inline') {
      data[FILES.kubeconfig] = b64(kubeconfig.value);
    } else if (kubeconfig?.kind === 'secretRef') {
      const ref = `${kubeconfig.namespace}/${kubeconfig.name}`;
      let value: string | undefined;
      try {
        const source = await this.core.readNamespacedSecret({ namespace: kubeconfig.namespace, name: kubeconfig.name });
        value = source.data?.[kubeconfig.key];
      } catch (error) {
        if (codeOf(error) === 404) throw new NotFoundError(`kubeconfig Secret ${ref} not found`, { cause: error });
        throw unavailable(`cannot read kubeconfig Secret ${ref}`, error);
      }
      if (!value) {
        throw new ValidationError([{ field: 'kubeconfig.secretRef.key', message: `Secret ${ref} has no key "${kubeconfig.key}"` }]);
      }
      // Decoded only to hold it to the inline-data policy before any Job exists; copied as is.
      const refused = kubeconfigIssues(Buffer.from(value, 'base64').toString('utf8'), 'kubeconfig.secretRef');
      if (refused.length > 0) throw new ValidationError(refused.map((issue) => ({ field: issue.field, message: `Secret ${ref}: ${issue.message}` })));
      data[FILES.kubeconfig] = value;
    }
    if (secrets.certificate) data[FILES.certificate] = b64(secrets.certificate);
    if (secrets.registryDockerconfigjson) data[FILES.registryAuth] = b64(secrets.registryDockerconfigjson);
    return data;
  }

  private jobOf(run: ScaffoldRun, labels: Record<string, string>, files: ReadonlySet<string>, extraEnv: Readonly<Record<string, string>> = {}): V1Job {
    const name = jobNameOf(run.id);
    assertNoCredentialsInUrl(run.repositoryUrl);
    const file = (key: string): string => `${RUNNER_SECRETS_DIR}/${key}`;
    const env: V1EnvVar[] = [
      { name: 'SCAFFOLD_ID', value: run.id },
      { name: 'SCAFFOLD_REPO_URL', value: run.repositoryUrl },
      { name: 'SCAFFOLD_BRANCH', value: run.branch },
      { name: 'SCAFFOLD_CLUSTER', value: run.cluster.name },
      { name: 'SCAFFOLD_DOMAIN', value: run.cluster.domain },
      { name: 'SCAFFOLD_REGION', value: run.cluster.region },
      { name: 'SCAFFOLD_REFERENCE', value: run.reference },
      ...(run.cluster.role !== undefined ? [{ name: 'SCAFFOLD_ROLE', value: run.cluster.role }] : []),
      ...(run.cluster.infra_provider !== undefined ? [{ name: 'SCAFFOLD_INFRA_PROVIDER', value: run.cluster.infra_provider }] : []),
      ...(run.cluster.dns_provider !== undefined ? [{ name: 'SCAFFOLD_DNS_PROVIDER', value: run.cluster.dns_provider }] : []),
      ...Object.entries(deliveryEnv(run.delivery)).map(([name, value]) => ({ name, value })),
      // The root filesystem is read-only: git and friends write their config under HOME.
      { name: 'HOME', value: '/tmp' },
    ];
    const fileEnv: [string, string][] = [
      ['SCAFFOLD_GIT_USERNAME_FILE', FILES.gitUsername],
      ['SCAFFOLD_GIT_TOKEN_FILE', FILES.gitToken],
      ['SCAFFOLD_KUBECONFIG', FILES.kubeconfig],
      ['SCAFFOLD_CERT', FILES.certificate],
      ['SCAFFOLD_REGISTRY_AUTH_FILE', FILES.registryAuth],
    ];
    for (const [variable, key] of fileEnv) if (files.has(key)) env.push({ name: variable, value: file(key) });
    for (const [name, value] of Object.entries(extraEnv)) env.push({ name, value });

    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace: this.namespace,
        labels,
        annotations: { 'gitops-scaffolder.io/created-by': run.createdBy },
      },
      spec: {
        backoffLimit: this.deps.backoffLimit ?? 2,
        activeDeadlineSeconds: this.deps.activeDeadlineSeconds ?? 1800,
        ttlSecondsAfterFinished: this.deps.ttlSecondsAfterFinished ?? 86_400,
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: 'Never',
            ...(this.deps.serviceAccountName ? { serviceAccountName: this.deps.serviceAccountName } : {}),
            // The runner talks to the NEW cluster with the kubeconfig it is given, never to this one.
            automountServiceAccountToken: false,
            ...(this.deps.imagePullSecrets?.length ? { imagePullSecrets: this.deps.imagePullSecrets.map((n) => ({ name: n })) } : {}),
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
                image: this.deps.image,
                env,
                volumeMounts: [
                  { name: 'secrets', mountPath: RUNNER_SECRETS_DIR, readOnly: true },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
                // The result JSON goes here; if the runner dies first, the log tail stands in.
                terminationMessagePath: '/dev/termination-log',
                terminationMessagePolicy: 'FallbackToLogsOnError',
                resources: this.deps.resources ?? DEFAULT_RESOURCES,
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
              { name: 'tmp', emptyDir: {} },
            ],
          },
        },
      },
    };
  }

  /**
   * Makes the Job the Secret's owner. blockOwnerDeletion is left unset: setting
   * it needs permission to update the Job's finalizers, and nothing here needs
   * the Job's deletion to wait for the Secret's.
   */
  private async ownSecret(name: string, uid: string, log: Logger): Promise<void> {
    try {
      await this.core.patchNamespacedSecret(
        {
          namespace: this.namespace,
          name,
          body: { metadata: { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid }] } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    } catch (error) {
      // The Job is running; failing start() now would hide that. The Secret is still
      // removed by cancel(), and a repeated start() sets the reference again.
      log.warn({ error: kubeApiFailureSummary(error) }, 'could not make the Job own its Secret');
    }
  }

  /** Whether any pod of the run (found by its run-id label, whatever became of its Job) has a runner that has not terminated. */
  private async runnerAlive(run: ScaffoldRun): Promise<boolean> {
    try {
      const list = await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: `${RUN_ID_LABEL}=${run.id}` });
      return list.items.some((pod) => runnerPhase(pod) !== 'terminated');
    } catch (error) {
      throw unavailable(`cannot list the pods of run ${run.id}`, error);
    }
  }

  private async listPods(job: string): Promise<V1Pod[]> {
    try {
      const list = await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: `job-name=${job}` });
      return [...list.items].sort(byCreation);
    } catch (error) {
      throw unavailable(`cannot list the pods of Job ${this.namespace}/${job}`, error);
    }
  }

  /** True when the Job has finished or no longer exists. */
  private async jobIsOver(name: string): Promise<boolean> {
    try {
      return isFinished(await this.batch.readNamespacedJob({ namespace: this.namespace, name })) !== undefined;
    } catch (error) {
      if (codeOf(error) === 404) return true;
      throw unavailable(`cannot read Job ${this.namespace}/${name}`, error);
    }
  }

  /**
   * One pod's log lines through client-node's Log (`follow` streams). Lines are
   * requested with timestamps so that, when a follow connection drops while the
   * container still runs, reading resumes at `sinceTime` without repeating lines.
   */
  private async *podLines(pod: string, follow: boolean, signal: AbortSignal | undefined): AsyncGenerator<string> {
    let last: string | undefined;
    for (;;) {
      const stream = new PassThrough();
      // A write racing an abort must not surface as an unhandled 'error' event.
      stream.on('error', () => {});
      let request: AbortController | undefined;
      const onAbort = (): void => {
        request?.abort();
        stream.end();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        try {
          request = await this.podLog.log(this.namespace, pod, CONTAINER, stream, {
            follow,
            timestamps: true,
            // sinceTime has whole-second precision; lines up to `last` are skipped below.
            ...(last ? { sinceTime: last.replace(/\.\d+/, '') } : {}),
          });
        } catch (error) {
          const code = codeOf(error);
          // 400: the container is not running (yet or any more); 404: the pod is gone.
          if (code === 400 || code === 404) return;
          throw unavailable(`cannot read the log of pod ${this.namespace}/${pod}`, error);
        }
        if (signal?.aborted) return;
        const since = last ? nanosOf(last) : -1n;
        for await (const raw of linesOf(stream)) {
          const m = TIMESTAMPED.exec(raw);
          if (!m) {
            yield raw;
            continue;
          }
          const [, time = '', line = ''] = m;
          if (nanosOf(time) <= since) continue;
          last = time;
          yield line;
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
        request?.abort();
      }
      if (!follow || signal?.aborted) return;
      // The stream ended: either the container exited or the connection dropped.
      let current: V1Pod;
      try {
        current = await this.core.readNamespacedPod({ namespace: this.namespace, name: pod });
      } catch (error) {
        if (codeOf(error) === 404) return;
        throw unavailable(`cannot read pod ${this.namespace}/${pod}`, error);
      }
      if (runnerPhase(current) !== 'running') return;
      this.logger.debug({ pod }, 'log stream ended while the runner still runs; resuming');
    }
  }

  private async deleteIgnoringMissing(kind: string, remove: () => Promise<unknown>): Promise<void> {
    try {
      await remove();
    } catch (error) {
      if (codeOf(error) === 404) return;
      throw unavailable(`cannot delete ${kind}`, error);
    }
  }
}

/** A repository URL with a password in it would put a credential into the Job spec. */
function assertNoCredentialsInUrl(repositoryUrl: string): void {
  let url: URL | undefined;
  try {
    url = new URL(repositoryUrl);
  } catch {
    return; // scp-like git URLs (git@host:path) carry no password
  }
  if (url.password) {
    throw new ValidationError([{ field: 'repository.url', message: 'must not contain credentials; pass them in repository.credentials' }]);
  }
}
