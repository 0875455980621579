/**
 * The wait for Flux Ready (`wait_for_ready`) as the run page shows it: the
 * latest state of each Kustomization the runner observed, folded from the
 * run's `kustomization` log events. Pure, so it is tested without a browser.
 */
import type { KustomizationState, LogEntry } from './log-events';

/** Each Kustomization's latest state, sorted by namespace/name; empty when the run did not wait. */
export function fluxReadinessOf(entries: readonly LogEntry[]): KustomizationState[] {
  const latest = new Map<string, KustomizationState>();
  for (const entry of entries) {
    const state = entry.kustomization;
    if (state !== undefined) latest.set(`${state.namespace}/${state.name}`, state);
  }
  return [...latest.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, state]) => state);
}
