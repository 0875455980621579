#!/usr/bin/env node
/**
 * The `scaffold-runner` bin (package.json, the runner image's entry point):
 * starts the runner (runner-cli.ts) from the bundle's CommonJS build with the
 * code cache a training run made (process/code-cache.ts says why), and from
 * its ES modules where the bundle carries no trained cache (process/
 * runner-code.ts), SCAFFOLD_CODE_CACHE=off asks for that, or this file runs
 * from the sources. Either way the same code runs with the same arguments.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { codeCacheOf, compileModule, runModule } from './process/code-cache.js';
import { CODE_CACHE_ENV, CODE_CACHE_USE, readRunnerCodeManifest } from './process/runner-code.js';
import { limitTiering } from './process/v8-tiering.js';

const here = dirname(fileURLToPath(import.meta.url));
const env = process.env;
// Before anything is compiled: V8 takes a cache only under the flags it was made with.
limitTiering(env);
const manifest = readRunnerCodeManifest(here);
const trainInto = env[CODE_CACHE_ENV.trainInto];
const cacheFile = manifest?.codeCache !== undefined && env[CODE_CACHE_ENV.mode] !== 'off' ? join(here, manifest.codeCache) : undefined;

if (manifest !== undefined && (trainInto !== undefined || cacheFile !== undefined)) {
  const filename = join(here, manifest.script);
  const cachedData = trainInto === undefined && cacheFile !== undefined ? readFileSync(cacheFile) : undefined;
  const compiled = compileModule(readFileSync(filename, 'utf8'), filename, cachedData);
  (globalThis as Record<symbol, unknown>)[CODE_CACHE_USE] = compiled.cache;
  if (trainInto !== undefined) process.once('exit', () => writeFileSync(trainInto, codeCacheOf(compiled)));
  runModule(compiled, filename);
} else {
  await import(pathToFileURL(join(here, import.meta.url.endsWith('.ts') ? 'runner-cli.ts' : 'runner-cli.js')).href);
}
