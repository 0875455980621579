/**
 * The pause before a git command is tried again after colliding with another
 * run or a broken connection: exponential, capped, and with full jitter (a
 * uniform draw below the cap), so runs that collided together spread out.
 */

/** The first window and the largest. */
export interface Backoff {
  readonly baseMs: number;
  readonly maxMs: number;
}

/** A pause drawn from [0, min(maxMs, baseMs × 2^exponent)], in whole ms. */
export function jitteredDelayMs(backoff: Backoff, exponent: number): number {
  return Math.round(Math.random() * Math.min(backoff.maxMs, backoff.baseMs * 2 ** exponent));
}
