/**
 * The catalog port: which cluster attributes (role, infrastructure provider,
 * DNS provider) a platform repository's layer catalog knows, with their values
 * and defaults, read from its `scaffold.yaml`. Used by `GET /api/v1/catalog`
 * (the dashboard's dry-run form offers these values); implemented by
 * `app/git-catalog-source.ts`.
 */
import type { ClusterAttribute } from '../model/cluster-spec.js';

/** One attribute of the layer catalog. */
export interface CatalogAttribute {
  readonly name: ClusterAttribute;
  readonly values: readonly string[];
  /** The value a cluster that gives none takes. */
  readonly default?: string;
}

/** The layer catalog of a platform repository; no attributes for a platform without one. */
export interface Catalog {
  readonly attributes: readonly CatalogAttribute[];
}

/** Reads the layer catalog of a repository's branch. */
export interface CatalogSource {
  /**
   * @throws ConflictError when the repository's scaffold.yaml is invalid (a request against it is refused at once; `request-resolver.ts`)
   * @throws NotFoundError when the repository does not exist
   * @throws UnavailableError when the repository cannot be read
   */
  catalog(input: { readonly repositoryUrl: string; readonly branch: string; readonly signal?: AbortSignal }): Promise<Catalog>;
}
