#!/usr/bin/env node
// Bundles the two short-lived binaries, scaffold-runner (every Job is one process) and
// generate-gitops-env, from src/ into dist/bundle/ with esbuild: what package.json's
// bin and Dockerfile.runner's entry point run.
//
// Why: a process loading the compiled dist/src one module at a time spends about
// 90 ms of CPU in Node's ESM loader (resolving, reading and compiling a few hundred
// files of ours and of node_modules) before the run starts; 7% of a verified runner
// Job, and a third of `generate-gitops-env --help`. Split into chunks, a module
// loaded lazily (client-node, the forge clients, verify) stays out of a process that
// does not use it, as it does unbundled.
//
// The extra entries are the files the code starts by path beside itself: the spawn
// helper (process/spawn-helper.ts) and the upgrade planning worker
// (workspace/plan-upgrade-in-parallel.ts) resolve `./<name>.js` next to their caller,
// and every chunk is written in the one directory. The package root (platform/,
// schemas/, package.json) is still found by walking up from the code.
//
//   node scripts/bundle.mjs            # writes dist/bundle/
//   node scripts/bundle.mjs <outdir>   # elsewhere under the package root
import { rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The bundled binaries and the files they start beside themselves, as src/ paths. */
export const BUNDLE_ENTRIES = ['src/runner-cli.ts', 'src/cli.ts', 'src/process/spawn-helper-main.ts', 'src/workspace/upgrade-plan-worker.ts'];

/**
 * Bundles {@link BUNDLE_ENTRIES} into `outdir` (emptied first), one file an entry,
 * named as its source (`runner-cli.js`, `cli.js`, …), beside the shared chunks.
 * `outdir` must lie under the package root: the code finds platform/ and schemas/ above itself.
 */
export async function bundle(outdir = join(ROOT, 'dist', 'bundle')) {
  await rm(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: BUNDLE_ENTRIES,
    outdir,
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // The CommonJS packages inside (pino, commander, client-node's dependencies) call require() on Node's
    // modules, which an ES module does not have.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    // For a reader of a stack trace; Node does not read them unless started with --enable-source-maps.
    sourcemap: 'linked',
    logLevel: 'warning',
    metafile: true,
  });
  return { outdir, inputs: Object.keys(result.metafile.inputs).length, outputs: Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js')).length };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const out = process.argv[2] !== undefined ? resolve(process.argv[2]) : undefined;
  const { outdir, inputs, outputs } = await bundle(out);
  process.stdout.write(`bundled ${inputs} modules into ${outputs} files in ${outdir}\n`);
}
