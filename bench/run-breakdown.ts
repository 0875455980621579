/**
 * Where the time of many scaffold runs went, from their own log events: the
 * seven steps (summed over the runs, so they add up to more than the wall time
 * when runs overlap), the git commands the remote ran, push attempts and
 * rebases, and how often the verify gate ran again after a rebase.
 */
import { ms } from './support.js';

type Event = Record<string, unknown>;

export interface RunBreakdown {
  /** One line a step: "step 1 clone 12.3 s". */
  readonly steps: string[];
  /** The git commands by time spent: "push ×140 40.1 s". */
  readonly git: string[];
  readonly pushesLanded: number;
  readonly rejectedAttempts: number;
  /** Pushes that carried queued commits of other runs, and how many they carried. */
  readonly carryingPushes: number;
  readonly carriedCommits: number;
  readonly maxAttempts: number;
  readonly reverifyRun: number;
  readonly reverifySkipped: number;
  /** Verify gate calls (a run's own cluster; a batch's others are not counted). */
  readonly verifies: number;
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

function seconds(value: number): string {
  return `${(value / 1000).toFixed(1)} s`;
}

export function breakdown(events: readonly Event[]): RunBreakdown {
  const byStep = new Map<string, number[]>();
  for (const e of events) {
    if (e['event'] !== 'step_finished' && e['event'] !== 'step_failed') continue;
    const key = `step ${String(e['step'])} ${String(e['step_name'])}`;
    byStep.set(key, [...(byStep.get(key) ?? []), Number(e['duration_ms'] ?? 0)]);
  }
  const byGit = new Map<string, number[]>();
  for (const e of events) {
    if (e['message'] !== 'git' || typeof e['git'] !== 'string') continue;
    byGit.set(e['git'], [...(byGit.get(e['git']) ?? []), Number(e['ms'] ?? 0)]);
  }
  const pushes = events.filter((e) => e['event'] === 'commit' && e['pushed'] === true).map((e) => Number(e['attempts'] ?? 1));
  const reverify = events.filter((e) => e['event'] === 'reverify');
  return {
    steps: [...byStep]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, d]) => `${key} ${seconds(sum(d))} (median ${ms([...d].sort((a, b) => a - b)[Math.floor(d.length / 2)] ?? 0)})`),
    git: [...byGit]
      .sort(([, a], [, b]) => sum(b) - sum(a))
      .slice(0, 6)
      .map(([cmd, d]) => `${cmd} ×${d.length} ${seconds(sum(d))}`),
    pushesLanded: pushes.length,
    rejectedAttempts: events.filter((e) => e['push'] === 'lost').length,
    carryingPushes: events.filter((e) => e['push'] === 'landed' && Number(e['carried'] ?? 0) > 0).length,
    carriedCommits: sum(events.filter((e) => e['push'] === 'landed').map((e) => Number(e['carried'] ?? 0))),
    maxAttempts: Math.max(0, ...pushes),
    reverifyRun: reverify.filter((e) => e['verified'] === true).length,
    reverifySkipped: reverify.filter((e) => e['verified'] === false).length,
    verifies: events.filter((e) => e['event'] === 'verified' && e['batch_cluster'] === undefined).length,
  };
}
