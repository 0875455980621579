/**
 * Waiting for a cluster's Flux to apply a pushed commit: lists its Flux
 * Kustomizations (kustomize.toolkit.fluxcd.io/v1) through the API server and
 * reads their status until each is Ready at that commit, one fails, or time
 * runs out.
 *
 * A poll, not a watch: the answer depends on every Kustomization at once, a
 * list is one small request per interval, and a Kustomization that the sync
 * creates mid-wait is seen without any resync logic. Which Kustomizations
 * count: those in the namespace that apply the run's source. The sync
 * Kustomization (`flux-system`) is among them and applies the layer
 * Kustomizations in the same reconciliation, so once it is at the commit the
 * layers it creates are already listed.
 */
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { TimeoutError, UnavailableError, VerificationError } from '../errors.js';
import {
  appliesSource,
  commitOfRevision,
  kustomizationReadiness,
  type KustomizationLike,
  type KustomizationReadiness,
} from '../gitops/kustomization-readiness.js';
import { silentLogger, type Logger } from '../logger.js';
import type { FluxReadiness, FluxReadyTarget } from '../runner/flux-readiness.js';
import { interruptibleSleep } from '../interruptible-sleep.js';
import { kubeApiFailureOf, kubeApiFailureSummary } from './kube-api-error.js';
import { abortReason, withSignal } from './with-signal.js';
import { RedirectRefusingKubeConfig } from './redirect-refusing-kube-config.js';

/** What KubeFluxReadiness needs. */
export interface KubeFluxReadinessDeps {
  /** Credentials for the cluster's own API server. */
  readonly kubeConfig: KubeConfig;
  readonly logger?: Logger;
  /**
   * The pause between two reads. kustomize-controller reconciles on its
   * interval or on a source event, so seconds are plenty.
   * @default 5000
   */
  readonly pollIntervalMs?: number;
}

const GROUP = 'kustomize.toolkit.fluxcd.io';
const VERSION = 'v1';
const PLURAL = 'kustomizations';

/** Implements FluxReadiness against a real (or double) Kubernetes API. */
export class KubeFluxReadiness implements FluxReadiness {
  private readonly api: CustomObjectsApi;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;

  constructor(deps: KubeFluxReadinessDeps) {
    this.api = RedirectRefusingKubeConfig.of(deps.kubeConfig).makeApiClient(CustomObjectsApi);
    this.logger = (deps.logger ?? silentLogger).child({ component: 'flux-readiness' });
    this.pollIntervalMs = deps.pollIntervalMs ?? 5000;
  }

  async waitForReady(
    target: FluxReadyTarget,
    options: { readonly timeoutMs: number; readonly signal?: AbortSignal; readonly onProgress?: (state: KustomizationReadiness) => void },
  ): Promise<readonly KustomizationReadiness[]> {
    const timeout = AbortSignal.timeout(Math.max(0, options.timeoutMs));
    const stop = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const seen = new Map<string, string>();
    // Other commits Ready Kustomizations reported, and whether each contains the run's.
    const checked = new Map<string, boolean>();
    let states: KustomizationReadiness[] = [];
    let lastError: string | undefined;

    while (!stop.aborted) {
      let items: KustomizationLike[];
      try {
        const list = (await this.api.listNamespacedCustomObject(
          { group: GROUP, version: VERSION, namespace: target.namespace, plural: PLURAL },
          withSignal(stop),
        )) as { items?: unknown };
        items = Array.isArray(list.items) ? (list.items as KustomizationLike[]) : [];
        lastError = undefined;
      } catch (error) {
        if (stop.aborted) break;
        const { code } = kubeApiFailureOf(error);
        if (code === 401 || code === 403) {
          throw new UnavailableError(
            `cannot list Kustomizations in ${target.namespace}: the API server refused the credentials (${kubeApiFailureSummary(error)})`,
            { cause: error },
          );
        }
        // 404: the Kustomization CRD is not installed yet (Flux is still coming up); anything else may pass too.
        lastError =
          code === 404 ? 'the Kustomization API is not served yet (Flux not installed?)' : `the API server could not be read: ${kubeApiFailureSummary(error)}`;
        this.logger.warn({ error: kubeApiFailureSummary(error) }, 'listing Kustomizations failed; retrying');
        await interruptibleSleep(this.pollIntervalMs, stop);
        continue;
      }
      const ours = items.filter((item) => appliesSource(item, target.source));
      for (const item of ours) {
        const other = commitOfRevision(item.status?.lastAppliedRevision);
        if (target.contains === undefined || other === undefined || other === target.commit.toLowerCase() || checked.has(other)) continue;
        try {
          checked.set(other, await target.contains(other));
        } catch (error) {
          // Asked again at the next read; until then that revision does not count.
          this.logger.warn({ error: error instanceof Error ? error.message : String(error) }, "could not tell whether a newer commit contains the run's");
        }
      }
      const newer = new Set([...checked].filter(([, yes]) => yes).map(([sha]) => sha));
      states = ours.map((item) => kustomizationReadiness(item, target.commit, newer)).sort((a, b) => a.name.localeCompare(b.name));
      for (const state of states) {
        const key = `${state.namespace}/${state.name}`;
        const report = `${state.phase} ${state.summary}`;
        if (seen.get(key) !== report) {
          seen.set(key, report);
          options.onProgress?.(state);
        }
      }
      const failed = states.filter((s) => s.phase === 'failed');
      if (failed.length > 0) throw new VerificationError(failed.map((s) => `Kustomization ${s.namespace}/${s.name} failed: ${s.summary}`));
      if (states.length > 0 && states.every((s) => s.phase === 'ready')) return states;
      await interruptibleSleep(this.pollIntervalMs, stop);
    }

    if (options.signal?.aborted) throw abortReason(options.signal);
    const seconds = Math.round(options.timeoutMs / 100) / 10;
    const waiting = states.filter((s) => s.phase !== 'ready');
    const what =
      waiting.length > 0
        ? `not Ready: ${waiting.map((s) => `${s.namespace}/${s.name} (${s.summary})`).join('; ')}`
        : (lastError ?? `no Kustomization in ${target.namespace} applies ${target.source.kind} ${target.source.namespace}/${target.source.name}`);
    throw new TimeoutError(`Flux did not apply ${target.commit.slice(0, 12)} within ${seconds}s; ${what}`);
  }
}
