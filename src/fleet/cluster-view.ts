/**
 * The JSON shape of a fleet entry, shared by `generate-gitops-env clusters -o
 * json|yaml` and `GET /api/v1/clusters`: snake_case like the rest of the API,
 * absent facts left out rather than null. Also the Flux Operator
 * ResourceSetInputProvider `ExternalService` shape, so a ResourceSet can fan
 * out over the fleet.
 */
import type { ClusterEntry, ClusterFreshness, ClusterKind } from './cluster-registry.js';
import { clusterStateOf, type ClusterState, type LastRunOutcome } from './cluster-state.js';
import { PREVIEWS_LAYER } from '../gitops/previews-schema.js';

/**
 * One cluster, as printed and served. `R` is the shape of its last run, which
 * only the service knows (the CLI has none).
 */
export interface ClusterView<R = never> {
  readonly name: string;
  readonly kind: ClusterKind;
  readonly gitops_path: string;
  readonly domain?: string;
  readonly region?: string;
  readonly role?: string;
  readonly infra_provider?: string;
  readonly dns_provider?: string;
  /** The opt-in layers the cluster resumed (the rest of its opt-in layers ship suspended). */
  readonly enabled_layers?: readonly string[];
  /** Whether the cluster renders previews per pull/merge request (it enabled the `previews` layer). */
  readonly previews?: boolean;
  /** Freshness only: kept for compatibility; `state` says whether the tree is complete too. */
  readonly status: ClusterFreshness;
  /** Generated clusters only: complete, incomplete, failed, behind, up to date or removing (cluster-state.ts). */
  readonly state?: ClusterState;
  /** true / false for a generated cluster whose freshness is known; absent otherwise. */
  readonly up_to_date?: boolean;
  /** When behind: the platform commit it was rendered from and the current one. */
  readonly behind?: { readonly rendered_from: string; readonly current: string };
  readonly provenance?: {
    readonly generator_version: string;
    readonly reference: string;
    readonly platform_commit: string;
    readonly pass: 'infrastructure' | 'all';
    readonly files?: number;
  };
  readonly last_run?: R;
}

/** The view of one entry; `current` is the platform commit it was compared with; `outcome`, the last run's action and status, when known. */
export function clusterView<R = never>(entry: ClusterEntry, current: string | undefined, lastRun?: R, outcome?: LastRunOutcome): ClusterView<R> {
  const a = entry.attributes;
  const p = entry.provenance;
  const state = clusterStateOf(entry, outcome);
  return {
    name: entry.name,
    kind: entry.kind,
    gitops_path: entry.gitopsPath,
    ...(a.domain !== undefined ? { domain: a.domain } : {}),
    ...(a.region !== undefined ? { region: a.region } : {}),
    ...(a.role !== undefined ? { role: a.role } : {}),
    ...(a.infraProvider !== undefined ? { infra_provider: a.infraProvider } : {}),
    ...(a.dnsProvider !== undefined ? { dns_provider: a.dnsProvider } : {}),
    ...(a.enableLayers !== undefined ? { enabled_layers: a.enableLayers } : {}),
    ...(entry.kind === 'generated' ? { previews: a.enableLayers?.includes(PREVIEWS_LAYER) ?? false } : {}),
    status: entry.freshness,
    ...(state !== undefined ? { state } : {}),
    ...(entry.freshness === 'up_to_date' || entry.freshness === 'behind' ? { up_to_date: entry.freshness === 'up_to_date' } : {}),
    ...(entry.renderedFrom !== undefined && current !== undefined ? { behind: { rendered_from: entry.renderedFrom, current } } : {}),
    ...(p !== undefined
      ? {
          provenance: {
            generator_version: p.generatorVersion,
            reference: p.reference,
            platform_commit: p.platformCommit,
            pass: p.pass,
            ...(p.files !== undefined ? { files: p.files.length } : {}),
          },
        }
      : {}),
    ...(lastRun !== undefined ? { last_run: lastRun } : {}),
  };
}

/** One input of a ResourceSetInputProvider of type ExternalService: an `id` string plus flat values. */
export type ResourceSetInput = { readonly id: string } & Readonly<Record<string, string | boolean>>;

/**
 * The fleet as the Flux Operator's ExternalService input provider expects it:
 * `{"inputs": [{"id": …, …}]}`, ids unique (the cluster name), values flat so a
 * ResourceSet template can use them as `<< inputs.domain >>`. Only generated
 * clusters: the reference and unmanaged directories are not the fleet.
 */
export function resourceSetInputs(views: readonly ClusterView<unknown>[]): { inputs: ResourceSetInput[] } {
  return {
    inputs: views
      .filter((v) => v.kind === 'generated')
      .map((v) => ({
        id: v.name,
        name: v.name,
        gitops_path: v.gitops_path,
        ...(v.domain !== undefined ? { domain: v.domain } : {}),
        ...(v.region !== undefined ? { region: v.region } : {}),
        ...(v.role !== undefined ? { role: v.role } : {}),
        ...(v.infra_provider !== undefined ? { infra_provider: v.infra_provider } : {}),
        ...(v.dns_provider !== undefined ? { dns_provider: v.dns_provider } : {}),
        status: v.status,
        ...(v.provenance !== undefined ? { platform_commit: v.provenance.platform_commit, generator_version: v.provenance.generator_version } : {}),
      })),
  };
}
