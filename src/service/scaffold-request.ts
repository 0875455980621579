/**
 * The shapes the scaffold service takes and gives (requests, dry-run results)
 * and the small ports it is told about runs through (default repository,
 * tracker), apart from the service itself so the edges and the resolver can
 * share them.
 */
import type { RawDeliverySettings } from '../delivery/delivery-settings.js';
import type { ClusterSpec } from '../model/cluster-spec.js';
import type { ScaffoldPreview } from '../run/scaffold-previewer.js';
import type { RunSecrets, RunRecord } from '../run/run-record.js';

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
  track(run: RunRecord): void;
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
