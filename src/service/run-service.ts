/**
 * The use cases of the HTTP service: start, read, follow, cancel and retry
 * scaffold runs, and preview one (dry run). Edges (HTTP, CLI) call this; it
 * talks only to ports (RunStore, RunExecutor, ScaffoldPreviewer).
 *
 * Secrets in a request go to the executor (or previewer) and nowhere else:
 * not a run's row, not a log line, not an error message. (The local executor
 * keeps a waiting run's secrets in its durable queue, AES-256-GCM encrypted,
 * until the run is claimed or cancelled: src/db/queued-secrets-cipher.ts.)
 *
 * Checking a request is the RequestResolver's, reading logs the RunLogReader's;
 * this file is the run lifecycle: start, cancel, and the fence a retry must pass.
 */
import { randomUUID } from 'node:crypto';
import { AppError, ConflictError, NotFoundError, UnavailableError, ValidationError, failureOf, messageOf, type FieldIssue } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import type { DeliverySettings } from '../run/delivery.js';
import type { ClusterSpec } from '../model/cluster-spec.js';
import { type FleetAction, type RunAction, runActionOf } from '../model/run-action.js';
import { fleetRunSecrets, type FleetRunSecrets } from '../delivery/fleet-run-secrets.js';
import type { Caller } from './authenticator.js';
import { kubeconfigIssues } from '../model/kubeconfig-policy.js';
import { repositoryKeyOf } from './cluster-key.js';
import { RequestResolver, type RequestResolverDeps } from './request-resolver.js';
import { RunLogReader, type LogReadOptions } from './run-log-reader.js';
import type { LogLine, RunFilter, RunPage, RunStore } from './run-store.js';
import type { RunStep } from './run-steps.js';
import type { ExecutionState, RunExecutor } from './run-executor.js';
import type { ScaffoldPreviewer } from '../run/scaffold-previewer.js';
import type { DryRunResult, RetryRequest, RunTracker, ScaffoldRequest } from './scaffold-request.js';
import { ACTIVE_STATUSES, clustersOf, isFinal, jobNameOf, type RunSecrets, type RunRecord } from '../run/run-record.js';
import { batchIssues } from '../run/batch-issues.js';

// Importers keep this module path for the request shapes, the branch rule and the URL policy.
export { branchSchema } from '../model/branch-name.js';
export { CALLER_URL_POLICY } from './request-resolver.js';
export type { LogReadOptions } from './run-log-reader.js';
export type { DefaultRepository, DryRunResult, RetryRequest, RunTracker, ScaffoldRequest } from './scaffold-request.js';

/** What the service needs. */
export interface RunServiceDeps extends RequestResolverDeps {
  readonly store: RunStore;
  readonly executor: RunExecutor;
  readonly previewer: ScaffoldPreviewer;
  /** Run ids; the job is `scaffold-<id>`, so ids must keep that a DNS-1123 label. @default crypto.randomUUID */
  readonly idGenerator?: () => string;
  /** Told about each started run. @default none (the monitor's periodic reconcile still picks runs up) */
  readonly tracker?: RunTracker;
  /** How often a followed log re-reads the store. @default 500 */
  readonly logPollMs?: number;
  /** What an upgrade or removal run is given to reach the forge (the service's own credentials). @default push only */
  readonly fleetRunSecrets?: FleetRunSecrets;
}

/**
 * An upgrade or a removal, as the rollout or the removal route starts it: the
 * cluster as the repository's registry records it (checked there: generated,
 * not the reference), where, and how its commit is delivered.
 */
export interface FleetRunRequest {
  readonly action: FleetAction;
  readonly cluster: ClusterSpec;
  readonly repositoryUrl: string;
  readonly branch: string;
  /** Absent: pushed. */
  readonly delivery?: DeliverySettings;
  /**
   * A removal that deletes the data too: the cluster's kubeconfig (the run
   * waits for its Flux to apply the lift of the prune protection) and how long.
   */
  readonly deleteData?: { readonly kubeconfig: NonNullable<RunSecrets['kubeconfig']>; readonly timeoutSeconds: number };
  /**
   * An upgrade only, pushed: further clusters (names) the same run upgrades
   * after `cluster`, each verified and committed on its own, all landed in one push (a rollout's batch).
   */
  readonly batch?: readonly string[];
}

/** The run lifecycle use cases. */
export class RunService {
  readonly #store: RunStore;
  readonly #executor: RunExecutor;
  readonly #previewer: ScaffoldPreviewer;
  readonly #reference: string;
  readonly #logger: Logger;
  readonly #clock: () => Date;
  readonly #idGenerator: () => string;
  readonly #tracker: RunTracker | undefined;
  readonly #resolver: RequestResolver;
  readonly #logs: RunLogReader;
  readonly #fleetRunSecrets: FleetRunSecrets;

  constructor(deps: RunServiceDeps) {
    this.#store = deps.store;
    this.#executor = deps.executor;
    this.#previewer = deps.previewer;
    this.#reference = deps.reference;
    this.#logger = deps.logger ?? silentLogger;
    this.#clock = deps.clock ?? (() => new Date());
    this.#idGenerator = deps.idGenerator ?? randomUUID;
    this.#tracker = deps.tracker;
    this.#resolver = new RequestResolver(deps);
    this.#logs = new RunLogReader(deps.store, deps.logPollMs ?? 500);
    // Without forge credentials a fleet run can only push.
    this.#fleetRunSecrets = deps.fleetRunSecrets ?? fleetRunSecrets({});
  }

  /**
   * Checks that upgrade and removal runs can deliver as `settings` ask, before anything starts.
   * @throws ValidationError / UnavailableError as {@link startFleetRun} would
   */
  checkFleetDelivery(settings: DeliverySettings | undefined, repositoryUrl: string): void {
    this.#fleetRunSecrets(settings, repositoryUrl);
  }

  /**
   * Starts an upgrade or a removal of one cluster as a run. It carries the
   * service's own forge credentials (pull_request delivery), never a caller's.
   * @throws ValidationError / UnavailableError when the delivery cannot be made with them
   * @throws ConflictError when the cluster (in that repository and branch) already has an active run
   */
  async startFleetRun(request: FleetRunRequest, caller: Caller): Promise<RunRecord> {
    const { deleteData, ...fleetRun } = request;
    if (deleteData !== undefined) {
      if (request.action !== 'remove') throw new ValidationError([{ field: 'delete_data', message: 'only a removal deletes data' }]);
      // The lift is pushed, then applied by the cluster's Flux, before the removal: no request a person merges in between.
      if (request.delivery !== undefined && request.delivery.mode !== 'push') {
        throw new ValidationError([
          {
            field: 'delivery.mode',
            message:
              "delete_data is pushed: the lift of the prune protection must land and be applied by the cluster's Flux before the removal lands, which the run cannot wait for through pull requests",
          },
        ]);
      }
      // The same kubeconfig policy as a scaffold's (a Secret reference is checked where it is read).
      if (deleteData.kubeconfig.kind === 'inline') {
        const issues = kubeconfigIssues(deleteData.kubeconfig.value, 'kubeconfig');
        if (issues.length > 0) throw new ValidationError(issues);
      }
    }
    if (request.batch !== undefined && request.batch.length > 0) await this.#checkBatch(request);
    const secrets: RunSecrets = {
      ...this.#fleetRunSecrets(request.delivery, request.repositoryUrl),
      ...(deleteData !== undefined ? { kubeconfig: deleteData.kubeconfig, deleteData: { timeoutSeconds: deleteData.timeoutSeconds } } : {}),
    };
    return this.#startRun({ ...fleetRun, reference: this.#reference, secrets, caller, attempt: 1 });
  }

  /**
   * Validates the request, stores a pending run and starts it. When validation
   * fails nothing is stored and nothing is started.
   *
   * @throws ValidationError naming every bad field
   * @throws ConflictError when the cluster (in that repository and branch) already has an active run
   * @throws UnavailableError when the default repository or the executor cannot be reached (the run is then recorded as failed)
   */
  async create(request: ScaffoldRequest, caller: Caller): Promise<RunRecord> {
    const { cluster, repositoryUrl, branch, delivery } = await this.#resolver.resolve(request);
    return this.#startRun({
      cluster,
      repositoryUrl,
      branch,
      reference: this.#reference,
      secrets: request.secrets,
      caller,
      attempt: 1,
      ...(delivery ? { delivery } : {}),
    });
  }

  /**
   * Computes what a run would write, storing and pushing nothing.
   * @throws ValidationError, UnavailableError
   */
  async dryRun(request: ScaffoldRequest, signal?: AbortSignal): Promise<DryRunResult> {
    const { cluster, repositoryUrl, branch } = await this.#resolver.resolve(request, signal);
    const preview = await this.#previewer.preview({
      cluster,
      repositoryUrl,
      branch,
      reference: this.#reference,
      secrets: request.secrets,
      ...(signal === undefined ? {} : { signal }),
    });
    return { repositoryUrl, branch, reference: this.#reference, preview };
  }

  /** @throws NotFoundError */
  async get(id: string): Promise<RunRecord> {
    const run = await this.#store.get(id);
    if (run === undefined) throw new NotFoundError(`no scaffold run with id ${id}`);
    return run;
  }

  /** Runs, newest first. A repository URL is matched in the form runs are stored in (`cluster-key.ts`). */
  async list(filter: RunFilter): Promise<RunPage> {
    return this.#store.list(filter.repositoryUrl === undefined ? filter : { ...filter, repositoryUrl: repositoryKeyOf(filter.repositoryUrl) });
  }

  /**
   * The one active-run rule, in the store's scope: a cluster is its name in
   * one branch of one repository, so only a pending or running run of the
   * same (repository, branch, name) refuses an upgrade, a removal or a run.
   * The store's unique index enforces the same key when a run is created;
   * this answers first, before anything is planned, naming the run.
   *
   * @param then - what the message tells the caller to do once the run has ended: `upgrade`, `remove`
   * @throws ConflictError naming the first active run of one of `clusters`
   */
  async refuseActiveRuns(repository: { readonly repositoryUrl: string; readonly branch: string }, clusters: readonly string[], then: string): Promise<void> {
    const wanted = new Set(clusters);
    if (wanted.size === 0) return;
    // One cluster: the store filters by it.
    const only = wanted.size === 1 ? { cluster: clusters[0] as string } : {};
    const scope = { repositoryUrl: repositoryKeyOf(repository.repositoryUrl), branch: repository.branch, ...only };
    for (const status of ACTIVE_STATUSES) {
      let cursor: string | undefined;
      do {
        const page = await this.#store.list({ ...scope, status, limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
        const active = page.runs.find((r) => wanted.has(r.cluster.name));
        if (active !== undefined)
          throw new ConflictError(
            `cluster ${active.cluster.name} has an active run (${active.id}, ${active.status}) on branch ${active.branch}: ${then} it once that run has ended`,
          );
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    }
  }

  /**
   * Opens a run's stored log. The run is looked up first, so an unknown id fails
   * before anything is streamed. With `follow`, the iterable polls the store until
   * the run is final (the run monitor writes every line before it records the
   * final status, so nothing is cut off) or `signal` aborts.
   *
   * @throws NotFoundError
   */
  async openLogs(id: string, options: LogReadOptions = {}): Promise<AsyncIterable<LogLine>> {
    await this.get(id);
    return this.#logs.read(id, options);
  }

  /** The run's steps, folded incrementally from its log (see {@link RunLogReader.steps}). */
  async steps(run: RunRecord): Promise<RunStep[]> {
    return this.#logs.steps(run);
  }

  /**
   * Cancels an active run: records `cancelled`, then stops its process. The
   * status is written first so that the monitor, seeing the process die, cannot
   * record it as `failed` instead.
   *
   * @throws NotFoundError
   * @throws ConflictError when the run is already final
   */
  async cancel(id: string, caller: Caller): Promise<RunRecord> {
    const run = await this.get(id);
    if (isFinal(run.status)) throw new ConflictError(`scaffold run ${id} is already ${run.status}`);
    const cancelled = await this.#store.update(
      id,
      { status: 'cancelled', message: `cancelled by ${caller.identity}`, finishedAt: this.#clock() },
      ACTIVE_STATUSES,
    );
    if (cancelled === undefined) {
      const now = await this.get(id);
      throw new ConflictError(`scaffold run ${id} is already ${now.status}`);
    }
    try {
      await this.#executor.cancel(cancelled);
    } catch (error) {
      // The row already says cancelled; a process that outlives this call is
      // stopped by the executor's own cleanup (Job TTL / process exit).
      this.#logger.warn({ run: id, err: messageOf(error) }, 'could not stop the run process');
    }
    this.#logger.info({ run: id, cluster: run.cluster.name, by: caller.identity }, 'scaffold run cancelled');
    return cancelled;
  }

  /**
   * Retries a failed or cancelled run as a NEW run (new id, new job) with the
   * same cluster, repository, branch and reference, and `attempt` one more than
   * the retried run's. Final runs never change again, and each attempt keeps
   * its own log. Secrets are not stored, so the retry request must carry them
   * again (same rules as a new request).
   *
   * @throws NotFoundError
   * @throws ConflictError when the run is active or succeeded, or the cluster has another active run
   * @throws ValidationError when the secrets break the request rules
   */
  async retry(id: string, request: RetryRequest, caller: Caller): Promise<RunRecord> {
    const previous = await this.get(id);
    if (!isFinal(previous.status)) throw new ConflictError(`scaffold run ${id} is still ${previous.status}; cancel it before retrying`);
    if (previous.status === 'succeeded') throw new ConflictError(`scaffold run ${id} succeeded; start a new scaffold to run it again`);
    await this.#assertStopped(previous);
    // An action that does not take its caller's secrets runs with the service's own forge credentials, on a retry too.
    const callerSecrets = runActionOf(previous.action).inputs.callerSecrets;
    if (!callerSecrets && Object.values(request.secrets).some((value) => value !== undefined)) {
      throw new ValidationError([{ field: 'secrets', message: "a retry of an upgrade or removal run takes no credentials: it uses the service's own" }]);
    }
    const secrets = callerSecrets ? this.#retrySecrets(previous, request) : this.#fleetRunSecrets(previous.delivery, previous.repositoryUrl);
    return this.#startRun({
      action: previous.action,
      cluster: previous.cluster,
      repositoryUrl: previous.repositoryUrl,
      branch: previous.branch,
      reference: previous.reference,
      secrets,
      caller,
      attempt: previous.attempt + 1,
      retryOf: previous.id,
      ...(previous.delivery ? { delivery: previous.delivery } : {}),
      ...(previous.batch ? { batch: previous.batch } : {}),
    });
  }

  /**
   * A batch is an upgrade that is pushed, of at most `MAX_BATCH_CLUSTERS`
   * distinct clusters whose result fits (batch-issues.ts), none of which has an active run: the store's
   * one-active-run rule holds the run's own cluster, this the others.
   * @throws ValidationError; ConflictError naming a batch cluster's active run
   */
  async #checkBatch(request: FleetRunRequest): Promise<void> {
    const batch = request.batch ?? [];
    const issues: FieldIssue[] = [];
    if (request.action !== 'upgrade') issues.push({ field: 'batch', message: 'only an upgrade run upgrades a batch of clusters' });
    if (request.delivery !== undefined && request.delivery.mode !== 'push')
      issues.push({ field: 'delivery.mode', message: 'a batch is pushed: its clusters land together in one push' });
    issues.push(...batchIssues(request.cluster.name, batch));
    if (issues.length > 0) throw new ValidationError(issues);
    const repository = repositoryKeyOf(request.repositoryUrl);
    const wanted = new Set(batch);
    for (const active of await this.#store.listActive()) {
      if (active.repositoryUrl !== repository || active.branch !== request.branch) continue;
      const busy = clustersOf(active).find((name) => wanted.has(name));
      if (busy !== undefined)
        throw new ConflictError(`cluster ${busy} already has an active run on branch ${request.branch} of this repository (${active.id})`);
    }
  }

  /** A scaffold's retry carries its secrets again, under the same rules as a new request. */
  #retrySecrets(previous: RunRecord, request: RetryRequest): RunSecrets {
    const issues: FieldIssue[] = [];
    this.#resolver.checkInputs(previous.cluster, request.secrets, issues);
    if (issues.length > 0) throw new ValidationError(issues);
    return request.secrets;
  }

  /**
   * A retry never runs beside an earlier attempt that may still push: the
   * executor must show its process gone (the local runner's lease lapsed or
   * released, the Kubernetes Job and its pods gone or finished).
   * @throws ConflictError while the runner is still active
   * @throws UnavailableError when the executor cannot tell
   */
  async #assertStopped(run: RunRecord): Promise<void> {
    let state: ExecutionState['state'];
    try {
      state = (await this.#executor.inspect(run)).state;
    } catch (error) {
      throw new UnavailableError(`cannot tell whether scaffold run ${run.id} still runs; retry later`, { cause: error });
    }
    if (state === 'pending' || state === 'running') {
      throw new ConflictError(`scaffold run ${run.id} is ${run.status}, but its runner is still active and may still push; retry once it has stopped`);
    }
  }

  /**
   * The repository and branch a request naming `repository` (or not) would use:
   * the default repository when no URL is given, `main` when no branch is.
   * @throws ValidationError when the URL or branch is malformed, or no URL is given and there is no default repository
   * @throws UnavailableError when the default repository cannot be prepared
   */
  async repositoryOf(repository: { readonly url?: string; readonly branch?: string } = {}): Promise<{ repositoryUrl: string; branch: string }> {
    return this.#resolver.repositoryOf(repository);
  }

  async #startRun(input: {
    action?: RunAction;
    cluster: ClusterSpec;
    repositoryUrl: string;
    branch: string;
    reference: string;
    secrets: RunSecrets;
    caller: Caller;
    attempt: number;
    retryOf?: string;
    delivery?: DeliverySettings;
    batch?: readonly string[];
  }): Promise<RunRecord> {
    const id = this.#idGenerator();
    const action = input.action ?? 'scaffold';
    let run = await this.#store.create({
      id,
      action,
      cluster: input.cluster,
      // The form the store's one-active-run index and every lookup compare.
      repositoryUrl: repositoryKeyOf(input.repositoryUrl),
      branch: input.branch,
      reference: input.reference,
      job: jobNameOf(id),
      createdBy: input.caller.identity,
      // An upgrade keeps every sealed credential and a removal deletes files: neither seals.
      sealing: !runActionOf(action).seals ? 'none' : input.secrets.certificate === undefined ? 'kubeconfig' : 'certificate',
      // A rotation is a scaffold run with rotation options (per attempt): recorded so the run list can say so.
      ...(input.secrets.rotateCredentials !== undefined ? { rotation: input.secrets.rotateValues ?? 'same' } : {}),
      ...(input.delivery ? { delivery: input.delivery } : {}),
      ...(input.batch !== undefined && input.batch.length > 0 ? { batch: input.batch } : {}),
    });
    if (input.attempt !== 1 || input.retryOf !== undefined) {
      run =
        (await this.#store.update(
          id,
          { attempt: input.attempt, ...(input.retryOf === undefined ? {} : { message: `retry of scaffold run ${input.retryOf}` }) },
          ['pending'],
        )) ?? run;
    }
    let job: string;
    try {
      ({ job } = await this.#executor.start(run, input.secrets));
    } catch (error) {
      // Keep the row (the audit trail of what was asked) but release the
      // cluster: a run that never started must not block the next one.
      const reason = error instanceof AppError ? error.message : 'the executor failed';
      // What the caller is answered with is what the run keeps as its failure.
      const thrown = error instanceof AppError ? error : new UnavailableError('could not start the run', { cause: error });
      await this.#store.update(
        id,
        { status: 'failed', message: `could not start the run: ${reason}`, failure: failureOf(thrown), finishedAt: this.#clock() },
        ACTIVE_STATUSES,
      );
      this.#logger.error({ run: id, cluster: run.cluster.name, err: messageOf(error) }, 'scaffold run could not be started');
      throw thrown;
    }
    if (job !== run.job) run = (await this.#store.update(id, { job }, ACTIVE_STATUSES)) ?? run;
    this.#logger.info(
      {
        run: id,
        action,
        cluster: run.cluster.name,
        by: input.caller.identity,
        attempt: run.attempt,
        ...(input.retryOf === undefined ? {} : { retryOf: input.retryOf }),
      },
      `${action} run started`,
    );
    this.#tracker?.track(run);
    return run;
  }
}
