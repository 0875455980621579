/**
 * Rolling an upgrade out over a fleet in waves (`POST /api/v1/upgrades` with
 * `wave_size`): the clusters are cut into waves, and the next wave starts only
 * when every run of the previous one succeeded. A failure stops the rollout
 * and says where. Pure: the caller starts runs and reads their statuses, and
 * asks {@link nextRolloutStep} what to do after each change.
 */
import { ValidationError } from '../errors.js';

/** A run's status as the rollout sees it (the service's RunStatus). */
export type WaveRunStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** What the rollout does next. */
export type RolloutStep =
  /** Start one run per cluster of this wave. */
  | { readonly kind: 'start'; readonly wave: number; readonly clusters: readonly string[] }
  /** Runs of this wave are still active. */
  | { readonly kind: 'wait'; readonly wave: number; readonly waitingFor: readonly string[] }
  /** A run of this wave did not succeed: the rollout ends here; the later waves never start. */
  | { readonly kind: 'stopped'; readonly wave: number; readonly failed: readonly string[]; readonly notStarted: readonly string[] }
  /** Every wave succeeded. */
  | { readonly kind: 'done' };

/**
 * Cuts `clusters` (sorted, duplicates dropped, so the same request gives the same waves) into waves of `waveSize`.
 * @throws ValidationError when `waveSize` is not a whole number of at least 1
 */
export function planWaves(clusters: readonly string[], waveSize: number): string[][] {
  if (!Number.isInteger(waveSize) || waveSize < 1) throw new ValidationError([{ field: 'wave_size', message: 'must be at least 1' }]);
  const sorted = [...new Set(clusters)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const waves: string[][] = [];
  for (let i = 0; i < sorted.length; i += waveSize) waves.push(sorted.slice(i, i + waveSize));
  return waves;
}

/**
 * The rollout's next step, from the waves and the status of each cluster's
 * run (absent: not started). A wave with a failure is let finish (its other
 * runs are already under way) before the rollout reports where it stopped.
 */
export function nextRolloutStep(waves: readonly (readonly string[])[], statuses: Readonly<Record<string, WaveRunStatus | undefined>>): RolloutStep {
  for (const [wave, clusters] of waves.entries()) {
    const started = clusters.filter((c) => statuses[c] !== undefined);
    if (started.length === 0) return { kind: 'start', wave, clusters };
    const active = clusters.filter((c) => statuses[c] === undefined || statuses[c] === 'pending' || statuses[c] === 'running');
    if (active.length > 0) return { kind: 'wait', wave, waitingFor: active };
    const failed = clusters.filter((c) => statuses[c] !== 'succeeded');
    if (failed.length > 0) return { kind: 'stopped', wave, failed, notStarted: waves.slice(wave + 1).flat() };
  }
  return { kind: 'done' };
}
