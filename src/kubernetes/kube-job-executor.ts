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
import { BatchV1Api, CoreV1Api, Log, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { NotFoundError, ValidationError } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import { parseDocument } from 'yaml';
import { inlineKubeconfigText, readKubeconfig } from '../model/kubeconfig-policy.js';
import { SECRET_FILES } from '../run-contract/runner-inputs.js';
import { outputSourceLine } from '../service/output-source.js';
import type { ExecutionState, RunExecutor } from '../service/run-executor.js';
import { jobNameOf, type RunSecrets, type RunRecord } from '../run/run-record.js';
import { interruptibleSleep } from '../interruptible-sleep.js';
import { codeOf, kubeApiFailureOf, kubeApiFailureSummary, unavailable } from './kube-api-error.js';
import { type JobShape, jobManifestOf, labelsOf, RUN_ID_LABEL, secretDataOf } from './kube-job-manifests.js';
import { byCreation, finishedStateOf, isFinished, runnerPhase } from './kube-job-state.js';
import { PodLogReader } from './kube-pod-logs.js';
import { RedirectRefusingKubeConfig } from './redirect-refusing-kube-config.js';

/** What KubeJobExecutor needs. */
export interface KubeJobExecutorDeps extends JobShape {
  /** Credentials of the cluster the service runs Jobs in (not the new cluster's). */
  readonly kubeConfig: KubeConfig;
  /** How often `logs({follow})` looks for a pod to start or for the Job to end. @default 2000 */
  readonly pollIntervalMs?: number;
  readonly logger?: Logger;
}

/** Whether `text` is one YAML mapping with `kind: Config`, as every kubeconfig is. */
function isKubeconfigDocument(text: string): boolean {
  try {
    const doc = parseDocument(text, { uniqueKeys: false });
    if (doc.errors.length > 0) return false;
    const contents: unknown = doc.toJS({ maxAliasCount: 100 });
    return typeof contents === 'object' && contents !== null && !Array.isArray(contents) && (contents as Record<string, unknown>)['kind'] === 'Config';
  } catch {
    // Too many aliases, or not YAML: not a kubeconfig.
    return false;
  }
}

/** Implements RunExecutor with Kubernetes Jobs. */
export class KubeJobExecutor implements RunExecutor {
  private readonly batch: BatchV1Api;
  private readonly core: CoreV1Api;
  private readonly podLogs: PodLogReader;
  private readonly namespace: string;
  private readonly deps: KubeJobExecutorDeps;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;

  constructor(deps: KubeJobExecutorDeps) {
    if (!deps.image) throw new ValidationError([{ field: 'SCAFFOLD_RUNNER_IMAGE', message: 'must be set to run scaffolds as Kubernetes Jobs' }]);
    if (!deps.namespace) throw new ValidationError([{ field: 'JOB_NAMESPACE', message: 'must not be empty' }]);
    this.deps = deps;
    this.namespace = deps.namespace;
    // Redirects are never followed: node-fetch would carry the token to another port of the host.
    const kubeConfig = RedirectRefusingKubeConfig.of(deps.kubeConfig);
    this.batch = kubeConfig.makeApiClient(BatchV1Api);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.logger = (deps.logger ?? silentLogger).child({ component: 'kube-job-executor', namespace: deps.namespace });
    this.podLogs = new PodLogReader(new Log(kubeConfig), this.core, deps.namespace, this.logger);
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
  async start(run: RunRecord, secrets: RunSecrets): Promise<{ readonly job: string }> {
    const name = jobNameOf(run.id);
    const log = this.logger.child({ run: run.id, job: name });
    const labels = labelsOf(run);
    const data = await this.secretData(secrets);
    const body = jobManifestOf(run, labels, new Set(Object.keys(data)), { ...this.deps, namespace: this.namespace }, secrets);

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
        await this.core.patchNamespacedSecret({ namespace: this.namespace, name, body: { data } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
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
        if (code === 422 || code === 400)
          throw new ValidationError(`the API server rejected Job ${name}: ${message ?? kubeApiFailureSummary(error)}`, { cause: error });
        throw unavailable(`cannot create Job ${this.namespace}/${name}`, error);
      }
    }

    const uid = job.metadata?.uid;
    if (uid) await this.ownSecret(name, uid, log);
    return { job: name };
  }

  /** Reads the Job and, once it has finished, the runner's result from its pod. */
  async inspect(run: RunRecord): Promise<ExecutionState> {
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
    return finishedStateOf(job, finished, pods);
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
  async *logs(run: RunRecord, options: { readonly follow: boolean; readonly signal?: AbortSignal }): AsyncIterable<string> {
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
        yield* this.podLogs.lines(podName, follow && phase === 'running', signal);
        read.add(podName);
        continue;
      }
      if (!follow || (await this.jobIsOver(name))) return;
      await interruptibleSleep(this.pollIntervalMs, signal);
    }
  }

  /** Deletes the Job (its pods go with it) and the Secret. Missing objects are fine. */
  async cancel(run: RunRecord): Promise<void> {
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

  // ---- helpers -----------------------------------------------------------------------------

  /** The Secret's data (base64), one key per credential file; a kubeconfig Secret reference is read and checked here. */
  private async secretData(secrets: RunSecrets): Promise<Record<string, string>> {
    const data = secretDataOf(secrets, this.deps.queueKey);
    const kubeconfig = secrets.kubeconfig;
    if (kubeconfig?.kind === 'secretRef') {
      const ref = `${kubeconfig.namespace}/${kubeconfig.name}`;
      // One answer for a missing Secret, a missing key and a value that is no kubeconfig: the caller
      // learns neither which keys the Secret has nor anything of what another key holds.
      const noKubeconfig = (cause?: unknown) =>
        new NotFoundError(`kubeconfig.secretRef: Secret ${ref} holds no kubeconfig under key "${kubeconfig.key}"`, cause === undefined ? undefined : { cause });
      let value: string | undefined;
      try {
        const source = await this.core.readNamespacedSecret({ namespace: kubeconfig.namespace, name: kubeconfig.name });
        value = source.data?.[kubeconfig.key];
      } catch (error) {
        if (codeOf(error) === 404) throw noKubeconfig(error);
        throw unavailable(`cannot read kubeconfig Secret ${ref}`, error);
      }
      if (!value) throw noKubeconfig();
      const text = Buffer.from(value, 'base64').toString('utf8');
      // The policy's messages name the document's fields: told only for a kubeconfig.
      if (!isKubeconfigDocument(text)) throw noKubeconfig();
      // Rebuilt from inline data only before any Job exists, and the rebuilt kubeconfig is what the
      // Job's Secret holds: nothing the policy did not construct itself travels on to the runner.
      const reading = readKubeconfig(text, 'kubeconfig.secretRef');
      if (!reading.ok) throw new ValidationError(reading.issues.map((issue) => ({ field: issue.field, message: `Secret ${ref}: ${issue.message}` })));
      data[SECRET_FILES.kubeconfig.key] = Buffer.from(inlineKubeconfigText(reading.kubeconfig), 'utf8').toString('base64');
    }
    return data;
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
  private async runnerAlive(run: RunRecord): Promise<boolean> {
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

  private async deleteIgnoringMissing(kind: string, remove: () => Promise<unknown>): Promise<void> {
    try {
      await remove();
    } catch (error) {
      if (codeOf(error) === 404) return;
      throw unavailable(`cannot delete ${kind}`, error);
    }
  }
}
