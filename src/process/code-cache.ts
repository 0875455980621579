/**
 * A CommonJS script started from V8's code cache: the bytecode of every
 * function a run compiled, saved once at build time by a training run
 * (train-runner-code-cache.ts) and handed to V8 with the source, so a process
 * does not parse and compile again what every run compiles.
 *
 * Why: a runner is one process a run. Parsing and compiling its code was
 * about 14% of the runner's own CPU in a verified run (perf over whole
 * scaffold-runner processes, bench/run-processes.ts's fixture), paid afresh
 * by every Job. Node 20 caches no compiled code for ES modules (its module
 * compile cache came in 22), but `vm.Script` takes a cache for a script, so
 * the runner is also bundled as one CommonJS file for this path.
 *
 * V8 accepts a cache only for the same V8, the same flags and a source of the
 * same length, and compiles from the source where it rejects one: a rejected
 * cache costs time, never correctness. It checks no more of the source than
 * its length, so a cache is named after the script it was made from, and the
 * script after its content (scripts/bundle.mjs): a rebuilt script never meets
 * an old cache.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/** Whether V8 took the cache given with a script. */
export type CodeCacheUse = 'accepted' | 'rejected' | 'none';

/** A script compiled as a CommonJS module body, ready to run once. */
export interface CompiledModule {
  readonly script: Script;
  readonly cache: CodeCacheUse;
}

/**
 * Node's CommonJS wrapper, on the source's first line so stack traces keep
 * their line numbers; a leading `#!` line becomes a comment of the same length.
 */
function wrap(source: string): string {
  const body = source.startsWith('#!') ? `//${source.slice(2)}` : source;
  return `(function (exports, require, module, __filename, __dirname) { ${body}\n});`;
}

/** Compiles `source` (the file `filename`'s text) as a CommonJS module, from `cachedData` where V8 accepts it. */
export function compileModule(source: string, filename: string, cachedData?: Buffer): CompiledModule {
  const script = new Script(wrap(source), { filename, ...(cachedData !== undefined ? { cachedData } : {}) });
  return { script, cache: cachedData === undefined ? 'none' : script.cachedDataRejected === true ? 'rejected' : 'accepted' };
}

/** Runs a compiled module as Node runs `filename` with `require`: its own `require`, `module`, `__filename` and `__dirname`. */
export function runModule(compiled: CompiledModule, filename: string): void {
  const body = compiled.script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string,
  ) => void;
  const module = { exports: {} as unknown, filename, id: filename };
  body.call(module.exports, module.exports, createRequire(filename), module, filename, dirname(filename));
}

/** The code cache of everything the script has compiled so far: called when the run is over, it holds what a run needs. */
export function codeCacheOf(compiled: CompiledModule): Buffer {
  return compiled.script.createCachedData();
}
