/**
 * What a FluxInstance's `distribution.version` range guarantees: the features
 * gated on a Flux minor (a controller's feature gate, a component first
 * shipped in a release) are only written where the range cannot install an
 * older Flux. Shared by flux-tuning.ts and source-watcher.ts.
 */

/**
 * The lowest Flux 2 minor a distribution version range admits: `2.8.x`,
 * `2.8.1`, `>=2.8.0`, `~2.8` and `^2.8` give 8; `2.x`, `*` and `latest`, where the
 * operator installs the newest release, give undefined (no floor below it).
 */
export function fluxMinorFloor(version: string): number | undefined {
  const match = /(\d+)\.(\d+)/.exec(version);
  if (match === null) return undefined;
  return Number(match[1]) === 2 ? Number(match[2]) : Number(match[1]) > 2 ? Number.POSITIVE_INFINITY : 0;
}
