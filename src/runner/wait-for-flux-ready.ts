/**
 * The optional end of a run (`--wait-ready`): after the last push, wait until
 * the cluster's Flux reports every Kustomization of the repository Ready at
 * the pushed commit. A run that pushed but whose tree Flux cannot apply is then
 * a failed run, with the Kustomizations and their conditions in its message,
 * instead of a success nobody checked.
 *
 * Kept apart from the seven steps: it reads the cluster and writes nothing,
 * and a run without it is unchanged.
 */
import { failureOf } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RunResult } from '../run/run-record.js';
import type { KustomizationReadiness } from '../gitops/kustomization-readiness.js';
import type { FluxReadiness } from './flux-readiness.js';

/** Where the Flux sync of a cluster lives, as `flux bootstrap` and the Flux Operator set it up. */
export const FLUX_SYNC_SOURCE = { kind: 'GitRepository', namespace: 'flux-system', name: 'flux-system' } as const;

/** Inputs of {@link waitForFluxReady}. */
export interface WaitForFluxReadyOptions {
  /** The succeeded result of the run: its last commit is what Flux must apply. */
  readonly result: RunResult;
  /** How long to wait. */
  readonly timeoutMs: number;
  /** Whether a later commit contains the run's (see FluxReadyTarget.contains). */
  readonly contains?: (commit: string, other: string) => Promise<boolean>;
  readonly signal?: AbortSignal;
}

/** Who waits for Flux, and how it reports. */
export interface FluxWaitDeps {
  readonly readiness: FluxReadiness;
  readonly logger: Logger;
  readonly now?: () => number;
}

/**
 * Waits until the cluster's Flux has applied `commit` (or a later commit
 * containing it) with every Kustomization of the sync Ready, logging each
 * Kustomization's progress (`event: kustomization`) and the outcome
 * (`flux_ready`). Shared by `--wait-ready` and a removal's wait for its lift.
 * @returns the Kustomizations, Ready
 * @throws as FluxReadiness.waitForReady: VerificationError, TimeoutError, UnavailableError, the signal's reason
 */
export async function waitForFluxApplied(
  deps: FluxWaitDeps,
  options: {
    readonly commit: string;
    readonly timeoutMs: number;
    readonly contains?: (commit: string, other: string) => Promise<boolean>;
    readonly signal?: AbortSignal;
  },
): Promise<readonly KustomizationReadiness[]> {
  const now = deps.now ?? Date.now;
  const { commit } = options;
  const started = now();
  deps.logger.info(
    { event: 'flux_ready_wait', commit, timeout_ms: options.timeoutMs },
    `waiting up to ${Math.round(options.timeoutMs / 1000)}s for Flux to apply ${commit.slice(0, 12)} and report Ready`,
  );
  const states = await deps.readiness.waitForReady(
    {
      namespace: FLUX_SYNC_SOURCE.namespace,
      source: FLUX_SYNC_SOURCE,
      commit,
      ...(options.contains ? { contains: (other: string) => options.contains!(commit, other) } : {}),
    },
    {
      timeoutMs: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      onProgress: (state) =>
        deps.logger.info(
          // ready and reason apart from the summary: the dashboard shows them per Kustomization without parsing text.
          {
            event: 'kustomization',
            namespace: state.namespace,
            name: state.name,
            phase: state.phase,
            ready: state.ready,
            reason: state.reason,
            revision: state.lastAppliedRevision,
          },
          `Kustomization ${state.namespace}/${state.name}: ${state.phase}, ${state.summary}`,
        ),
    },
  );
  deps.logger.info(
    { event: 'flux_ready', commit, kustomizations: states.map((s) => s.name), duration_ms: now() - started },
    `Flux applied ${commit.slice(0, 12)}: ${states.length} Kustomization(s) Ready`,
  );
  return states;
}

/**
 * Waits for Flux to apply the run's last commit (see {@link waitForFluxApplied}).
 * @returns the run's result, with Flux's verdict added to its message; a failed
 *   result (the commits kept) when Flux failed or did not get there in time
 * @throws the signal's reason when `signal` aborts, so the caller treats it as a cancellation
 */
export async function waitForFluxReady(deps: FluxWaitDeps, options: WaitForFluxReadyOptions): Promise<RunResult> {
  const now = deps.now ?? Date.now;
  const { result } = options;
  const commit = result.commits?.at(-1)?.sha;
  if (result.status !== 'succeeded' || commit === undefined) return result;
  const started = now();
  try {
    const states = await waitForFluxApplied(deps, {
      commit,
      timeoutMs: options.timeoutMs,
      ...(options.contains ? { contains: options.contains } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return { ...result, message: `${result.message}; Flux Ready at ${commit.slice(0, 12)} (${states.map((s) => s.name).join(', ')})` };
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const message = error instanceof Error ? error.message : String(error);
    deps.logger.error(
      { event: 'flux_not_ready', commit, duration_ms: now() - started, error_code: failureOf(error).code },
      `Flux did not report Ready: ${message}`,
    );
    // The commits stay on the result: they are pushed, and a retry re-renders to the same bytes.
    return { ...result, status: 'failed', message: `pushed ${commit.slice(0, 12)}, but Flux did not report Ready: ${message}` };
  }
}
