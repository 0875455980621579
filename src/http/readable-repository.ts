/**
 * The repository an endpoint that makes the service itself clone may name
 * (`repository_url` of the catalog, the fleet, a cluster, its sealing check,
 * a removal or an upgrade; the repository of a run whose graph is drawn): the default repository or one listed in
 * `ALLOWED_REPOSITORY_URLS`, nothing else. Otherwise anyone allowed to read the
 * fleet could make the service connect to any host and port and read git's
 * answer back: a port scanner, and with plain http to loopback a reader of
 * local services. A scaffold run clones in its runner with the caller's own
 * credentials and keeps the wider create-request policy.
 *
 * The refusal comes before any connection and is the same whatever the URL
 * names, so it tells nothing about the host.
 */
import { ForbiddenError, ValidationError } from '../errors.js';
import { checkRepositoryUrl, parseRepositoryUrl, type RepositoryUrlPolicy } from '../model/repository-url.js';
import type { RunService } from '../service/run-service.js';

/** The one answer to a repository_url outside the configured ones. */
export const UNCONFIGURED_REPOSITORY_MESSAGE =
  'the repository is not one this service reads: the catalog, the fleet, graphs, upgrades and removals read only the default repository and those listed in ALLOWED_REPOSITORY_URLS (an operator adds it there)';

/** A `repository_url` and `branch` as a query or body gives them. */
export interface RepositoryQuery {
  readonly repository_url?: string | undefined;
  readonly branch?: string | undefined;
}

/** Resolves a read's repository and branch, or throws. */
export type ReadableRepository = (query: RepositoryQuery) => Promise<{ repositoryUrl: string; branch: string }>;

/**
 * @param allowList `ALLOWED_REPOSITORY_URLS`
 * @returns a resolver that throws ValidationError (400) for a malformed URL or
 *   branch, and ForbiddenError (403) with
 *   {@link UNCONFIGURED_REPOSITORY_MESSAGE} for a well-formed URL that is neither
 *   the default repository nor on the allow list
 */
export function readableRepository(service: Pick<RunService, 'repositoryOf'>, allowList: readonly string[]): ReadableRepository {
  // Only the list decides here: transports and hosts were the create-request rules' business.
  const listed: RepositoryUrlPolicy = { scp: false, plainTransports: 'any', localRepositories: 'any', allowList };
  const isListed = (url: string): boolean => {
    if (allowList.length === 0) return false;
    try {
      checkRepositoryUrl(url, listed, 'repository_url');
      return true;
    } catch (error) {
      if (error instanceof ValidationError) return false;
      throw error;
    }
  };
  const defaultUrl = async (): Promise<string | undefined> => {
    try {
      return (await service.repositoryOf({})).repositoryUrl;
    } catch (error) {
      // No default repository: only the list remains.
      if (error instanceof ValidationError) return undefined;
      throw error;
    }
  };
  return async (query) => {
    const url = query.repository_url;
    const branch = query.branch === undefined ? {} : { branch: query.branch };
    if (url === undefined) return service.repositoryOf(branch);
    // Malformed is still a 400 naming the field; anything well-formed but not configured is the one 403.
    const remote = parseRepositoryUrl(url, 'repository_url');
    if (!isListed(url)) {
      const configured = await defaultUrl();
      if (configured === undefined || (url !== configured && remote.url !== configured)) throw new ForbiddenError(UNCONFIGURED_REPOSITORY_MESSAGE);
    }
    return service.repositoryOf({ url, ...branch });
  };
}
