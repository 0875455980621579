#!/usr/bin/env node
/**
 * The `scaffold-runner` bin (package.json, the runner image's entry point):
 * starts the runner (runner-cli.ts) from the bundle's CommonJS build with the
 * code cache a training run made (process/code-cache.ts says why), and from
 * its ES modules where the bundle carries no trained cache (process/
 * runner-code.ts), the cache was trained under another node or V8 rejects it
 * (other V8 flags), SCAFFOLD_CODE_CACHE=off asks for that, or this file runs
 * from the sources. Either way the same code runs with the same arguments.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { codeCacheOf, compileModule, runModule } from './process/code-cache.js';
import { CODE_CACHE_ENV, CODE_CACHE_USE, type RunnerCodeStart, readRunnerCodeManifest } from './process/runner-code.js';
import { limitTiering } from './process/v8-tiering.js';

const here = dirname(fileURLToPath(import.meta.url));
const env = process.env;
// Before anything is compiled: V8 takes a cache only under the flags it was made with.
limitTiering(env);
const manifest = readRunnerCodeManifest(here);
const trainInto = env[CODE_CACHE_ENV.trainInto];

/** Records how the runner's code started, for the run's first debug line (runner-cli.ts). */
function record(start: RunnerCodeStart): void {
  (globalThis as Record<symbol, unknown>)[CODE_CACHE_USE] = start;
}

/**
 * Runs the runner from its CommonJS build: with the trained cache, or without one while
 * training. False where V8 rejected the cache, and nothing ran: with other V8 flags
 * (NODE_OPTIONS=--max-old-space-size=…, say), compiling all of the one big script lazily
 * costs more than loading the ES modules' chunks a run needs.
 */
function startFromScript(script: string, cacheFile: string | undefined): boolean {
  const filename = join(here, script);
  let cachedData: Buffer | undefined;
  try {
    cachedData = cacheFile !== undefined ? readFileSync(cacheFile) : undefined;
  } catch {
    return false; // named, but gone: as good as rejected
  }
  const compiled = compileModule(readFileSync(filename, 'utf8'), filename, cachedData);
  if (compiled.cache === 'rejected') return false;
  if (compiled.cache === 'accepted') record('accepted');
  if (trainInto !== undefined) process.once('exit', () => writeFileSync(trainInto, codeCacheOf(compiled)));
  runModule(compiled, filename);
  return true;
}

let started = false;
if (manifest !== undefined && trainInto !== undefined) {
  started = startFromScript(manifest.script, undefined);
} else if (manifest?.codeCache !== undefined && env[CODE_CACHE_ENV.mode] !== 'off') {
  if (manifest.node !== process.version) record('other-node');
  else if (!(started = startFromScript(manifest.script, join(here, manifest.codeCache)))) record('rejected');
}
if (!started) await import(pathToFileURL(join(here, import.meta.url.endsWith('.ts') ? 'runner-cli.ts' : 'runner-cli.js')).href);
