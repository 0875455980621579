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
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';

/**
 * Node's own modules that a run loads. Node ships their compiled code, which V8
 * takes only under the default flags: each loaded after the flag changed was
 * compiled again, 17 ms for these in a fresh process. So they are loaded before.
 * (From `process.moduleLoadList` at the end of a verified run; one missing here is
 * only compiled.)
 */
const RUN_BUILTINS = [
  'assert',
  'async_hooks',
  'child_process',
  'crypto',
  'dgram',
  'diagnostics_channel',
  'fs/promises',
  'net',
  'os',
  'perf_hooks',
  'querystring',
  'stream/promises',
  'string_decoder',
  'url',
  'util',
  'worker_threads',
] as const;

export function limitTiering(env: NodeJS.ProcessEnv): void {
  if (env['SCAFFOLD_V8_TIERING'] === 'full') return;
  const require = createRequire(import.meta.url);
  for (const id of RUN_BUILTINS) require(`node:${id}`);
  // Tiers above Sparkplug (Maglev, TurboFan) off; the flag exists in the V8 of Node 20 and later.
  setFlagsFromString('--max-opt=1');
}
