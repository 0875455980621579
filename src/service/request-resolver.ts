/**
 * The one validation of a scaffold request, for runs, dry runs and retries:
 * repository and branch (and the default repository when none is named),
 * delivery, cluster, secrets, and the cluster's attributes against the target
 * platform's catalog when it can be read. A request it passes can only fail
 * for reasons outside it (the remote, the cluster).
 */
import { AppError, ConflictError, UnavailableError, ValidationError, messageOf, type FieldIssue } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import type { DeliverySettings } from '../run/delivery.js';
import { parseDeliverySettings, repositoryPathOf, type RawDeliverySettings } from '../delivery/delivery-settings.js';
import { branchSchema } from '../model/branch-name.js';
import { fieldIssuesOf, type ClusterSpec } from '../model/cluster-spec.js';
import { checkRepositoryUrl, type RepositoryUrlPolicy } from '../model/repository-url.js';
import { API_FIELDS, catalogIssues, runInputIssues } from '../run-contract/run-inputs.js';
import type { CatalogSource } from './catalog-source.js';
import type { DefaultRepository, ScaffoldRequest } from './scaffold-request.js';
import type { RunSecrets } from '../run/run-record.js';
import { DEFAULT_BRANCH } from '../model/defaults.js';

/**
 * What a caller may name as `repository.url` unless configured otherwise:
 * https:// and ssh:// anywhere, http:// and git:// to loopback (test servers),
 * no scp-style addresses and no local repository but the default one.
 */
export const CALLER_URL_POLICY: RepositoryUrlPolicy = { scp: false, plainTransports: 'loopback', localRepositories: [] };

/**
 * The one rule for a request's `delivery` (runs, upgrades, removals): the
 * runner's own settings check, and pull_request also needs a forge-hosted
 * repository. Undefined for push, the default.
 * @throws ValidationError listing every problem
 */
export function checkDelivery(raw: RawDeliverySettings | undefined, repositoryUrl: string | undefined): DeliverySettings | undefined {
  if (raw === undefined) return undefined;
  const settings = parseDeliverySettings(raw);
  if (settings.mode === 'pull_request' && repositoryUrl !== undefined) repositoryPathOf(repositoryUrl);
  return settings.mode === 'push' ? undefined : settings;
}

/** How long a request waits for the catalog before it is checked at render time instead. */
const CATALOG_WAIT_MS = 10_000;

/** What the resolver needs; part of the service's deps. */
export interface RequestResolverDeps {
  /** Absent: requests must name `repository.url`. */
  readonly defaultRepository?: DefaultRepository;
  /** The reference environment new clusters are generated from, e.g. `development`. */
  readonly reference: string;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /**
   * Whether `kubeconfig.secretRef` can be honoured: only a Kubernetes executor can
   * mount a Secret; the local executor needs `kubeconfig.inline`.
   * @default true
   */
  readonly kubeconfigSecretRefs?: boolean;
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

/** A request that passed: what a run or dry run uses. */
export interface ResolvedRequest {
  readonly cluster: ClusterSpec;
  readonly repositoryUrl: string;
  readonly branch: string;
  /** Absent: push straight to the branch. */
  readonly delivery?: DeliverySettings;
}

/** Checks requests and resolves what they leave out. */
export class RequestResolver {
  readonly #defaultRepository: DefaultRepository | undefined;
  readonly #reference: string;
  readonly #logger: Logger;
  readonly #clock: () => Date;
  readonly #kubeconfigSecretRefs: boolean;
  readonly #repositoryPolicy: RepositoryUrlPolicy;
  readonly #catalogSource: CatalogSource | undefined;

  constructor(deps: RequestResolverDeps) {
    this.#defaultRepository = deps.defaultRepository;
    this.#reference = deps.reference;
    this.#logger = deps.logger ?? silentLogger;
    this.#clock = deps.clock ?? (() => new Date());
    this.#kubeconfigSecretRefs = deps.kubeconfigSecretRefs ?? true;
    this.#repositoryPolicy = deps.repositoryPolicy ?? CALLER_URL_POLICY;
    this.#catalogSource = deps.catalogSource;
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
  async resolve(request: ScaffoldRequest, signal?: AbortSignal): Promise<ResolvedRequest> {
    const issues: FieldIssue[] = [];
    const { cluster } = this.checkInputs(request.cluster, request.secrets, issues);
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

  /** Delivery settings checked by {@link checkDelivery}; what is wrong is added to `issues`. */
  #delivery(raw: RawDeliverySettings | undefined, repositoryUrl: string | undefined, issues: FieldIssue[]): DeliverySettings | undefined {
    try {
      return checkDelivery(raw, repositoryUrl);
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
  async #repository(
    repository: { readonly url?: string; readonly branch?: string },
    issues: FieldIssue[],
  ): Promise<{ repositoryUrl: string; branch: string } | undefined> {
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
      if (this.#defaultRepository !== undefined && issues.length === 0 && url === (await this.#ensureDefaultRepository()))
        return { repositoryUrl: url, branch };
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

  /**
   * Checks a cluster and its secrets (a retry's too, whose cluster is the stored
   * one), adding what is wrong to `issues`; the cluster when it is valid.
   */
  checkInputs(clusterInput: unknown, secrets: RunSecrets, issues: FieldIssue[]): { cluster?: ClusterSpec } {
    const { kubeconfig, certificate } = secrets;
    if (kubeconfig === undefined && certificate === undefined) {
      issues.push({
        field: 'kubeconfig',
        message:
          "kubeconfig or sealing.certificate is required: the run seals credentials with the new cluster's certificate, given directly or fetched with the kubeconfig",
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
        ...(secrets.notifications === undefined ? {} : { notifications: secrets.notifications }),
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
}
