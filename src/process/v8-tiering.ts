/**
 * A runner lives for one run, a few seconds of CPU, and most of its code runs
 * a handful of times: V8's optimizing compiler (TurboFan, on background
 * threads) spent more CPU compiling it than the optimized code saved, about
 * 0.25 of 3.2 CPU-s a verified run (measured with perf on a whole
 * scaffold-runner process, bench/run-processes.ts's fixture). Interpreted and
 * baseline-compiled code is enough for one run.
 *
 * Set before the run's code is compiled: V8 accepts a code cache only under
 * the flags it was made with (code-cache.ts), so the bin's loader and the
 * runner it starts set the same ones. SCAFFOLD_V8_TIERING=full keeps every
 * tier (a long upgrade of a large fleet, or a comparison).
 */
import { setFlagsFromString } from 'node:v8';

export function limitTiering(env: NodeJS.ProcessEnv): void {
  // Tiers above Sparkplug (Maglev, TurboFan) off; the flag exists in the V8 of Node 20 and later.
  if (env['SCAFFOLD_V8_TIERING'] !== 'full') setFlagsFromString('--max-opt=1');
}
