/**
 * The use cases of the HTTP service: start, read, follow, cancel and retry
 * scaffold runs, and preview one (dry run). Edges (HTTP, CLI) call this; it
 * talks only to ports (RunStore, ScaffoldExecutor, ScaffoldPreviewer).
 *
 * Secrets in a request go to the executor (or previewer) and nowhere else:
 * not the store, not a log line, not an error message.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { AppError, ConflictError, NotFoundError, UnavailableError, ValidationError, type FieldIssue } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import { checkRepositoryUrl, type RepositoryUrlPolicy } from '../model/repository-url.js';
import type { DeliverySettings } from '../delivery/delivery.js';
import { parseDeliverySettings, repositoryPathOf, type RawDeliverySettings } from '../delivery/delivery-settings.js';
import { fieldIssuesOf, type ClusterSpec } from '../model/cluster-spec.js';
import { API_FIELDS, catalogIssues, runInputIssues } from '../model/run-inputs.js';
import type { CatalogSource } from './catalog-source.js';
import type { Caller } from './authenticator.js';
import type { LogLine, RunFilter, RunPage, RunStore } from './run-store.js';
import { runStepsOf, type RunStep } from './run-steps.js';
import type { ExecutionState, ScaffoldExecutor } from './scaffold-executor.js';
import type { ScaffoldPreview, ScaffoldPreviewer } from './scaffold-previewer.js';
import { ACTIVE_STATUSES, isFinal, jobNameOf, type RunSecrets, type ScaffoldRun } from './scaffold-run.js';

/**
 * A branch name git accepts (`git check-ref-format --branch`): components
 * separated by "/", no "..", no "@{", none of space ~ ^ : ? * [ \ or control
 * characters, no component starting with "." or ending with ".lock", not
 * starting with "-" (git would read it as an option).
 */
export const branchSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .superRefine((value, ctx) => {
    const fail = (message: string): void => {
      ctx.addIssue({ code: 'custom', message });
    };
    // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
    if (/[\x00-\x20~^:?*[\\\x7f]/.test(value)) return fail('must not contain spaces, control characters or any of ~ ^ : ? * [ \\');
    if (value.includes('..')) return fail('must not contain ".."');
    if (value.includes('@{') || value === '@') return fail('must not contain "@{" or be "@"');
    if (value.startsWith('-')) return fail('must not start with "-"');
    if (value.startsWith('/') || value.endsWith('/') || value.includes('//')) return fail('must not start or end with "/" or contain "//"');
    if (value.endsWith('.')) return fail('must not end with "."');
    for (const component of value.split('/')) {
      if (component.startsWith('.')) return fail('no "/"-separated part may start with "."');
      if (component.endsWith('.lock')) return fail('no "/"-separated part may end with ".lock"');
    }
  });

/** Where runs push when a request names no repository. */
export interface DefaultRepository {
  /**
   * Makes sure the default repository exists (embedded mode seeds a local bare
   * repository with the reference platform on first use) and returns its URL.
   * @throws UnavailableError when it cannot be prepared
   */
  ensure(): Promise<string>;
}

/** Told about every run the service starts, so its progress is followed at once (the run monitor). */
export interface RunTracker {
  track(run: ScaffoldRun): void;
}

/** A request to scaffold a cluster, as the service sees it (the HTTP edge maps its wire shape to this). */
export interface ScaffoldRequest {
  readonly cluster: ClusterSpec;
  /** Absent: the default repository, branch `main`. */
  readonly repository?: { readonly url?: string; readonly branch?: string };
  /** Absent: push straight to the branch. */
  readonly delivery?: RawDeliverySettings;
  readonly secrets: RunSecrets;
}

/**
 * A retry carries the secrets again: the service never stores them, so it
 * cannot replay the original ones. Cluster, repository, branch and reference
 * are taken from the run being retried.
 */
export interface RetryRequest {
  readonly secrets: RunSecrets;
}

/** A dry run's outcome, with the inputs it resolved. */
export interface DryRunResult {
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly reference: string;
  readonly preview: ScaffoldPreview;
}

/** What the service needs. */
export interface ScaffoldServiceDeps {
  readonly store: RunStore;
  readonly executor: ScaffoldExecutor;
  readonly previewer: ScaffoldPreviewer;
  /** Absent: requests must name `repository.url`. */
  readonly defaultRepository?: DefaultRepository;
  /** The reference environment new clusters are generated from, e.g. `development`. */
  readonly reference: string;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /** Run ids; the job is `scaffold-<id>`, so ids must keep that a DNS-1123 label. @default crypto.randomUUID */
  readonly idGenerator?: () => string;
  /** Told about each started run. @default none (the monitor's periodic reconcile still picks runs up) */
  readonly tracker?: RunTracker;
  /**
   * Whether `kubeconfig.secretRef` can be honoured: only a Kubernetes executor can
   * mount a Secret; the local executor needs `kubeconfig.inline`.
   * @default true
   */
  readonly kubeconfigSecretRefs?: boolean;
  /** How often a followed log re-reads the store. @default 500 */
  readonly logPollMs?: number;
  /**
   * What a request's `repository.url` may reach. The default repository is
   * always allowed. @default {@link CALLER_URL_POLICY}
   */
  readonly repositoryPolicy?: RepositoryUrlPolicy;
  /**
   * The target platform's layer catalog, so role and providers are checked
   * before a run starts. @default none: they are checked when the run renders
   */
  readonly catalogSource?: CatalogSource;
}

/**
 * What a caller may name as `repository.url` unless configured otherwise:
 * https:// and ssh:// anywhere, http:// and git:// to loopback (test servers),
 * no scp-style addresses and no local repository but the default one.
 */
export const CALLER_URL_POLICY: RepositoryUrlPolicy = { scp: false, plainTransports: 'loopback', localRepositories: [] };

/** How long a request waits for the catalog before it is checked at render time instead. */
const CATALOG_WAIT_MS = 10_000;

/** Options for reading a run's logs. */
export interface LogReadOptions {
  /** Keep yielding new lines until the run is final. @default false */
  readonly follow?: boolean;
  /** Start after this line number. @default 0 */
  readonly afterSeq?: number;
  readonly signal?: AbortSignal;
}

const LOG_PAGE = 500;
const DEFAULT_BRANCH = 'main';
/** Runs whose step events {@link ScaffoldService.steps} keeps between calls. */
const TIMELINES = 1000;

/** What {@link ScaffoldService.steps} has read of a run's log: its step events, up to line `seq`. */
interface Timeline {
  seq: number;
  readonly events: { readonly time: Date; readonly line: string }[];
}

/** The run lifecycle use cases. */
export class ScaffoldService {
  readonly #store: RunStore;
  readonly #executor: ScaffoldExecutor;
  readonly #previewer: ScaffoldPreviewer;
  readonly #defaultRepository: DefaultRepository | undefined;
  readonly #reference: string;
  readonly #logger: Logger;
  readonly #clock: () => Date;
  readonly #idGenerator: () => string;
  readonly #tracker: RunTracker | undefined;
  readonly #kubeconfigSecretRefs: boolean;
  readonly #logPollMs: number;
  readonly #repositoryPolicy: RepositoryUrlPolicy;
  readonly #catalogSource: CatalogSource | undefined;
  /** Least recently used first. */
  readonly #timelines = new Map<string, Timeline>();

  constructor(deps: ScaffoldServiceDeps) {
    this.#store = deps.store;
    this.#executor = deps.executor;
    this.#previewer = deps.previewer;
    this.#defaultRepository = deps.defaultRepository;
    this.#reference = deps.reference;
    this.#logger = deps.logger ?? silentLogger;
    this.#clock = deps.clock ?? (() => new Date());
    this.#idGenerator = deps.idGenerator ?? randomUUID;
    this.#tracker = deps.tracker;
    this.#kubeconfigSecretRefs = deps.kubeconfigSecretRefs ?? true;
    this.#logPollMs = deps.logPollMs ?? 500;
    this.#repositoryPolicy = deps.repositoryPolicy ?? CALLER_URL_POLICY;
    this.#catalogSource = deps.catalogSource;
  }

  /**
   * Validates the request, stores a pending run and starts it. When validation
   * fails nothing is stored and nothing is started.
   *
   * @throws ValidationError naming every bad field
   * @throws ConflictError when the cluster already has an active run
   * @throws UnavailableError when the default repository or the executor cannot be reached (the run is then recorded as failed)
   */
  async create(request: ScaffoldRequest, caller: Caller): Promise<ScaffoldRun> {
    const { cluster, repositoryUrl, branch, delivery } = await this.#resolve(request);
    return this.#startRun({ cluster, repositoryUrl, branch, reference: this.#reference, secrets: request.secrets, caller, attempt: 1, ...(delivery ? { delivery } : {}) });
  }

  /**
   * Computes what a run would write, storing and pushing nothing.
   * @throws ValidationError, UnavailableError
   */
  async dryRun(request: ScaffoldRequest, signal?: AbortSignal): Promise<DryRunResult> {
    const { cluster, repositoryUrl, branch } = await this.#resolve(request, signal);
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
  async get(id: string): Promise<ScaffoldRun> {
    const run = await this.#store.get(id);
    if (run === undefined) throw new NotFoundError(`no scaffold run with id ${id}`);
    return run;
  }

  /** Runs, newest first. */
  async list(filter: RunFilter): Promise<RunPage> {
    return this.#store.list(filter);
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
    return this.#readLogs(id, options);
  }

  /**
   * The run's seven steps, folded from the step events of its log (see
   * `runStepsOf`). Incremental: the step events read so far are kept for the
   * last {@link TIMELINES} runs asked about, and only lines after the last one
   * read are fetched, so a poll that finds nothing new reads nothing (with a
   * `CachedRunStore`, which knows where a log ends, not even a query). Asking
   * for the steps of a run this way costs one read of its new lines instead of
   * a read of its whole log.
   */
  async steps(run: ScaffoldRun): Promise<RunStep[]> {
    let timeline = this.#timelines.get(run.id);
    if (timeline === undefined) {
      timeline = { seq: 0, events: [] };
    } else {
      this.#timelines.delete(run.id);
    }
    this.#timelines.set(run.id, timeline);
    if (this.#timelines.size > TIMELINES) this.#timelines.delete(this.#timelines.keys().next().value as string);
    for (;;) {
      const lines = await this.#store.readLogs(run.id, { afterSeq: timeline.seq, limit: LOG_PAGE });
      for (const line of lines) {
        // A concurrent call may have taken these lines already.
        if (line.seq <= timeline.seq) continue;
        timeline.seq = line.seq;
        if (isStepEvent(line)) timeline.events.push({ time: line.time, line: line.line });
      }
      if (lines.length < LOG_PAGE) break;
    }
    return runStepsOf(timeline.events, run.status);
  }

  /**
   * Cancels an active run: records `cancelled`, then stops its process. The
   * status is written first so that the monitor, seeing the process die, cannot
   * record it as `failed` instead.
   *
   * @throws NotFoundError
   * @throws ConflictError when the run is already final
   */
  async cancel(id: string, caller: Caller): Promise<ScaffoldRun> {
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
  async retry(id: string, request: RetryRequest, caller: Caller): Promise<ScaffoldRun> {
    const previous = await this.get(id);
    if (!isFinal(previous.status)) throw new ConflictError(`scaffold run ${id} is still ${previous.status}; cancel it before retrying`);
    if (previous.status === 'succeeded') throw new ConflictError(`scaffold run ${id} succeeded; start a new scaffold to run it again`);
    await this.#assertStopped(previous);
    const issues: FieldIssue[] = [];
    this.#checkInputs(previous.cluster, request.secrets, issues);
    if (issues.length > 0) throw new ValidationError(issues);
    return this.#startRun({
      cluster: previous.cluster,
      repositoryUrl: previous.repositoryUrl,
      branch: previous.branch,
      reference: previous.reference,
      secrets: request.secrets,
      caller,
      attempt: previous.attempt + 1,
      retryOf: previous.id,
      ...(previous.delivery ? { delivery: previous.delivery } : {}),
    });
  }

  /**
   * A retry never runs beside an earlier attempt that may still push: the
   * executor must show its process gone (the local runner's lease lapsed or
   * released, the Kubernetes Job and its pods gone or finished).
   * @throws ConflictError while the runner is still active
   * @throws UnavailableError when the executor cannot tell
   */
  async #assertStopped(run: ScaffoldRun): Promise<void> {
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
    const issues: FieldIssue[] = [];
    const resolved = await this.#repository(repository, issues);
    if (resolved === undefined) throw new ValidationError(issues);
    return resolved;
  }

  /**
   * The one validation of a request (runs and dry runs): repository, branch,
   * cluster, secrets, and the cluster's attributes against the target
   * platform's catalog when it can be read. A request that passes can only
   * fail for reasons outside it (the remote, the cluster).
   */
  async #resolve(request: ScaffoldRequest, signal?: AbortSignal): Promise<{ cluster: ClusterSpec; repositoryUrl: string; branch: string; delivery?: DeliverySettings }> {
    const issues: FieldIssue[] = [];
    const { cluster } = this.#checkInputs(request.cluster, request.secrets, issues);
    const repository = await this.#repository(request.repository ?? {}, issues);
    const delivery = this.#delivery(request.delivery, repository?.repositoryUrl, issues);
    if (issues.length > 0 || cluster === undefined || repository === undefined) throw new ValidationError(issues);
    const catalog = await this.#knownCatalog(repository.repositoryUrl, repository.branch, signal);
    if (catalog !== undefined) {
      const attributeIssues = catalogIssues(cluster, catalog, 'cluster');
      if (attributeIssues.length > 0) throw new ValidationError(attributeIssues);
    }
    return { cluster, ...repository, ...(delivery ? { delivery } : {}) };
  }

  /** Delivery settings checked by the runner's own rules; pull_request also needs a forge-hosted repository. */
  #delivery(raw: RawDeliverySettings | undefined, repositoryUrl: string | undefined, issues: FieldIssue[]): DeliverySettings | undefined {
    if (raw === undefined) return undefined;
    try {
      const settings = parseDeliverySettings(raw);
      if (settings.mode === 'pull_request' && repositoryUrl !== undefined) repositoryPathOf(repositoryUrl);
      return settings.mode === 'push' ? undefined : settings;
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...error.issues);
      return undefined;
    }
  }

  /**
   * The repository and branch a run will use: the caller's URL when the policy
   * allows it (or it is the default repository's), else the default
   * repository, prepared only when nothing else in the request is wrong.
   */
  async #repository(repository: { readonly url?: string; readonly branch?: string }, issues: FieldIssue[]): Promise<{ repositoryUrl: string; branch: string } | undefined> {
    const branch = repository.branch ?? DEFAULT_BRANCH;
    const parsedBranch = branchSchema.safeParse(branch);
    if (!parsedBranch.success) issues.push(...fieldIssuesOf(parsedBranch.error, 'repository.branch'));
    const { url } = repository;
    if (url === undefined) {
      if (this.#defaultRepository === undefined) issues.push({ field: 'repository.url', message: 'is required: this service has no default repository' });
      if (issues.length > 0) return undefined;
      return { repositoryUrl: await this.#ensureDefaultRepository(), branch };
    }
    try {
      const checked = checkRepositoryUrl(url, this.#repositoryPolicy, 'repository.url').url;
      return issues.length > 0 ? undefined : { repositoryUrl: checked, branch };
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      // The default repository may be a local one that no caller could name otherwise.
      if (this.#defaultRepository !== undefined && issues.length === 0 && url === (await this.#ensureDefaultRepository())) return { repositoryUrl: url, branch };
      issues.push(...error.issues);
      return undefined;
    }
  }

  /** The catalog's attributes, or undefined when no catalog source is wired or the repository cannot be read now. */
  async #knownCatalog(repositoryUrl: string, branch: string, signal?: AbortSignal): Promise<{ name: string; values: readonly string[] }[] | undefined> {
    if (this.#catalogSource === undefined) return undefined;
    const wait = AbortSignal.timeout(CATALOG_WAIT_MS);
    try {
      const catalog = await this.#catalogSource.catalog({ repositoryUrl, branch, signal: signal === undefined ? wait : AbortSignal.any([signal, wait]) });
      return catalog.attributes.map((a) => ({ name: a.name, values: a.values }));
    } catch (error) {
      // An invalid scaffold.yaml fails every run against this branch: say so now.
      if (error instanceof ConflictError) throw error;
      this.#logger.debug({ branch, err: messageOf(error) }, 'catalog not readable; attributes are checked at render time');
      return undefined;
    }
  }

  #checkInputs(clusterInput: unknown, secrets: RunSecrets, issues: FieldIssue[]): { cluster?: ClusterSpec } {
    const { kubeconfig, certificate } = secrets;
    if (kubeconfig === undefined && certificate === undefined) {
      issues.push({
        field: 'kubeconfig',
        message: "kubeconfig or sealing.certificate is required: the run seals credentials with the new cluster's certificate, given directly or fetched with the kubeconfig",
      });
    } else if (kubeconfig !== undefined && certificate !== undefined && secrets.waitForReady === undefined) {
      // With wait_for_ready the kubeconfig reads Flux, so a certificate may come along to seal with.
      issues.push({ field: 'sealing.certificate', message: 'give either kubeconfig or sealing.certificate, not both' });
    }
    if (secrets.waitForReady !== undefined && kubeconfig === undefined) {
      issues.push({ field: 'wait_for_ready', message: "needs kubeconfig: the run reads the cluster's Flux Kustomizations with it" });
    }
    if (kubeconfig?.kind === 'secretRef' && !this.#kubeconfigSecretRefs) {
      issues.push({ field: 'kubeconfig.secretRef', message: 'is not supported by the local executor; send kubeconfig.inline' });
    }
    const checked = runInputIssues(
      {
        cluster: clusterInput,
        reference: this.#reference,
        now: this.#clock(),
        ...(certificate === undefined ? {} : { certificatePem: certificate }),
        ...(kubeconfig?.kind === 'inline' ? { kubeconfig: kubeconfig.value } : {}),
        ...(secrets.registryDockerconfigjson === undefined ? {} : { registryDockerconfigjson: secrets.registryDockerconfigjson }),
      },
      API_FIELDS,
    );
    issues.push(...checked.issues);
    return checked.cluster === undefined ? {} : { cluster: checked.cluster };
  }

  async #ensureDefaultRepository(): Promise<string> {
    try {
      return await (this.#defaultRepository as DefaultRepository).ensure();
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new UnavailableError('the default repository could not be prepared', { cause: error });
    }
  }

  async #startRun(input: {
    cluster: ClusterSpec;
    repositoryUrl: string;
    branch: string;
    reference: string;
    secrets: RunSecrets;
    caller: Caller;
    attempt: number;
    retryOf?: string;
    delivery?: DeliverySettings;
  }): Promise<ScaffoldRun> {
    const id = this.#idGenerator();
    let run = await this.#store.create({
      id,
      cluster: input.cluster,
      repositoryUrl: input.repositoryUrl,
      branch: input.branch,
      reference: input.reference,
      job: jobNameOf(id),
      createdBy: input.caller.identity,
      sealing: input.secrets.certificate === undefined ? 'kubeconfig' : 'certificate',
      ...(input.delivery ? { delivery: input.delivery } : {}),
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
      await this.#store.update(id, { status: 'failed', message: `could not start the run: ${reason}`, finishedAt: this.#clock() }, ACTIVE_STATUSES);
      this.#logger.error({ run: id, cluster: run.cluster.name, err: messageOf(error) }, 'scaffold run could not be started');
      if (error instanceof AppError) throw error;
      throw new UnavailableError('could not start the run', { cause: error });
    }
    if (job !== run.job) run = (await this.#store.update(id, { job }, ACTIVE_STATUSES)) ?? run;
    this.#logger.info(
      { run: id, cluster: run.cluster.name, by: input.caller.identity, attempt: run.attempt, ...(input.retryOf === undefined ? {} : { retryOf: input.retryOf }) },
      'scaffold run started',
    );
    this.#tracker?.track(run);
    return run;
  }

  async *#readLogs(id: string, options: LogReadOptions): AsyncGenerator<LogLine> {
    const { follow = false, signal } = options;
    let seq = options.afterSeq ?? 0;
    for (;;) {
      if (signal?.aborted) return;
      const lines = await this.#store.readLogs(id, { afterSeq: seq, limit: LOG_PAGE });
      for (const line of lines) {
        seq = line.seq;
        yield line;
      }
      if (lines.length === LOG_PAGE) continue;
      if (!follow) return;
      const run = await this.#store.get(id);
      if (run === undefined || isFinal(run.status)) {
        // Lines written before the final status are all stored now: drain them.
        for (;;) {
          const rest = await this.#store.readLogs(id, { afterSeq: seq, limit: LOG_PAGE });
          for (const line of rest) {
            seq = line.seq;
            yield line;
          }
          if (rest.length < LOG_PAGE) return;
        }
      }
      try {
        await sleep(this.#logPollMs, undefined, signal === undefined ? {} : { signal });
      } catch {
        return; // aborted
      }
    }
  }
}

/** Whether a log line is one of the runner's step events: it moves a step out of `pending`. */
function isStepEvent(line: { readonly time: Date; readonly line: string }): boolean {
  // Cheap refusal first: every event is a JSON object on its line.
  return line.line.startsWith('{') && runStepsOf([line], 'running').some((step) => step.status !== 'pending');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
