/** The fleet part of the API: clusters, their removal, and upgrade rollouts (docs/api.md). */
import { json, post, type DryRunFile } from './api';
import type { DeliveryBody } from './delivery-values';
import { CLUSTERS_API as CLUSTERS, removalRequest, upgradeRequestBody, UPGRADES_API as UPGRADES } from './fleet-delivery';
import type { Removal, RemovalPreview } from './run-types';
import type { ClusterView as FleetClusterView } from '../../src/fleet/cluster-view';
import type { SealedSecretView, SealingView } from '../../src/fleet/sealing-freshness';
import type { LastRunView } from '../../src/http/routes/cluster-routes';
import type { rolloutListSchema, rolloutSchema } from '../../src/http/routes/upgrade-routes';
import type { z } from 'zod';

/** A SealedSecret, and a cluster's SealedSecrets compared with the certificate its controller serves now (null: not compared, see `reason`). */
export type SealedSecretEntry = SealedSecretView;
export type SealingSection = SealingView;

/** A fleet entry as the service serves it: the shape the CLI prints too, with the last run and, in a detail, the sealing section. */
export type ClusterView = FleetClusterView<LastRunView> & { readonly sealing?: SealingSection };

/** What the sealing check and a rotation are given: the cluster's certificate, or its kubeconfig (sent for this request only). */
export type ClusterCertificateInput = { readonly sealing: { readonly certificate: string } } | { readonly kubeconfig: { readonly inline: string } };

export interface Fleet {
  readonly repository: { readonly url: string; readonly branch: string };
  readonly commit: string;
  readonly platform_commit: string | null;
  readonly clusters: readonly ClusterView[];
}

export interface UpgradePreview {
  readonly dry_run: true;
  readonly clusters: readonly {
    readonly name: string;
    readonly status: 'changed' | 'up_to_date' | 'failed';
    readonly message?: string;
    readonly credentials_kept?: number;
    readonly files?: { readonly added: readonly string[]; readonly modified: readonly string[]; readonly removed: readonly string[] };
    /** Only when asked for (`diff: true`), for a changed cluster: its changed files with their contents. */
    readonly diff?: readonly DryRunFile[];
  }[];
}

/** An upgrade rollout (`GET /api/v1/upgrades/{id}`): its waves, each cluster's outcome and run. */
export type Rollout = z.output<typeof rolloutSchema>;

/** A rollout summed up, as `GET /api/v1/upgrades` lists it. */
export type RolloutSummary = z.output<typeof rolloutListSchema>['rollouts'][number];

export type { Removal, RemovalPreview };

export function listClusters(signal?: AbortSignal): Promise<Fleet> {
  return json(CLUSTERS, { signal: signal ?? null });
}

export function getCluster(name: string, signal?: AbortSignal): Promise<ClusterView> {
  return json(`${CLUSTERS}/${encodeURIComponent(name)}`, { signal: signal ?? null });
}

/** What upgrading the cluster would change, with its changed files' contents for the diff viewer; nothing is written (so no delivery is asked). */
export function previewUpgrade(name: string): Promise<UpgradePreview> {
  return json(UPGRADES, post({ clusters: [name], dry_run: true, diff: true }));
}

/** Starts the rollout, its commit delivered as `delivery` says (absent: pushed); resolves with it (its id names the page that follows it). */
export function startUpgrade(name: string, delivery?: DeliveryBody): Promise<Rollout> {
  return json(UPGRADES, post(upgradeRequestBody(name, delivery)));
}

/** What upgrading each of `names` would change, with every changed file's contents for the diff viewer; nothing is written. */
export function previewFleetUpgrade(names: readonly string[]): Promise<UpgradePreview> {
  return json(UPGRADES, post({ clusters: names, dry_run: true, diff: true }));
}

/** Starts one rollout upgrading `names` in waves of `waveSize` (the service sorts them by name), pushed; resolves with it. */
export function startFleetUpgrade(names: readonly string[], waveSize: number): Promise<Rollout> {
  return json(UPGRADES, post({ clusters: names, dry_run: false, wave_size: waveSize }));
}

export function getUpgrade(id: string, signal?: AbortSignal): Promise<Rollout> {
  return json(`${UPGRADES}/${encodeURIComponent(id)}`, { signal: signal ?? null });
}

/** The newest rollouts, newest first. */
export async function listUpgrades(signal?: AbortSignal): Promise<readonly RolloutSummary[]> {
  return (await json<{ rollouts: RolloutSummary[] }>(`${UPGRADES}?limit=10`, { signal: signal ?? null })).rollouts;
}

/** Cancels a running rollout; resolves with it recorded cancelled. @throws ApiError (409 when it has already ended) */
export function cancelUpgrade(id: string): Promise<Rollout> {
  return json(`${UPGRADES}/${encodeURIComponent(id)}/cancel`, post({}));
}

/** The cluster with its SealedSecrets compared with the controller's certificate. */
export function checkSealing(name: string, input: ClusterCertificateInput): Promise<ClusterView> {
  return json(`${CLUSTERS}/${encodeURIComponent(name)}/sealing-check`, post(input));
}

/** Starts a run resealing `credentials` (`namespace/name`) with fresh values under the certificate `input` gives; resolves with the run's id. */
export function rotateCredentials(name: string, credentials: readonly string[], input: ClusterCertificateInput): Promise<{ readonly id: string }> {
  return json(`${CLUSTERS}/${encodeURIComponent(name)}/rotate`, post({ credentials, ...input }));
}

/** What removing the cluster would delete and keep, read from the branch now (a dry run: nothing starts, no confirm needed). */
export function previewRemoval(name: string, signal?: AbortSignal): Promise<RemovalPreview> {
  return json(`${CLUSTERS}/${encodeURIComponent(name)}?dry_run=true`, { method: 'DELETE', signal: signal ?? null });
}

/**
 * Starts the run removing the cluster's generated files (202), its commit delivered as `delivery` says (absent: pushed);
 * `confirm` must repeat the name. With `dataRemoval` the data goes too (pushed, after the cluster's Flux applied the lift).
 */
export function removeCluster(name: string, confirm: string, delivery?: DeliveryBody, dataRemoval?: { readonly kubeconfig: string }): Promise<Removal> {
  const { path, init } = removalRequest(name, confirm, delivery, dataRemoval);
  return json(path, init);
}
