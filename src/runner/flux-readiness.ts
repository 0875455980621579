/**
 * The port a run waits on after its last push: the new cluster's Flux, seen
 * through its API server. Declared here, by its consumer; implemented in
 * `kubernetes/kube-flux-readiness.ts`.
 */
import type { KustomizationReadiness, SourceRef } from '../gitops/kustomization-readiness.js';

/** What to wait for: the Kustomizations of one namespace that apply one source, at one commit. */
export interface FluxReadyTarget {
  /** Where the cluster's Flux Kustomizations live, usually `flux-system`. */
  readonly namespace: string;
  /** Only Kustomizations applying this source count (others, e.g. a tenant's repository, are not the run's). */
  readonly source: SourceRef;
  /** The pushed commit (full SHA) every one of them must have applied. */
  readonly commit: string;
  /**
   * Whether another commit contains `commit` in its history: a push that landed
   * after the run's makes Flux apply that one instead. Asked once per commit
   * seen on a Ready Kustomization. Absent: only `commit` itself counts.
   */
  readonly contains?: (other: string) => Promise<boolean>;
}

/** Waits for the cluster's Flux to apply a commit. */
export interface FluxReadiness {
  /**
   * Waits until at least one Kustomization applies the source and every one of
   * them reports Ready=True with `lastAppliedRevision` at the commit.
   * `onProgress` is called with a Kustomization each time its state changes.
   * @returns the final state of each Kustomization, sorted by name
   * @throws VerificationError naming each Kustomization that failed (a terminal reason at the commit, Stalled, suspended)
   * @throws TimeoutError naming each Kustomization that is not Ready, with its condition
   * @throws UnavailableError when the API server refuses the credentials (401/403)
   * @throws the signal's reason when `signal` aborts
   */
  waitForReady(
    target: FluxReadyTarget,
    options: { readonly timeoutMs: number; readonly signal?: AbortSignal; readonly onProgress?: (state: KustomizationReadiness) => void },
  ): Promise<readonly KustomizationReadiness[]>;
}
