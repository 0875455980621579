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
// What a verified runner Job still spent loading its bundle (about 190 ms of CPU,
// measured on the chunks one run loads, 12 rounds) went down by about 35 ms with
// three choices below, each measured alone:
// - Two graphs, not one: the runner's and the CLI's. Chunks shared by the two bins
//   were cut finer for the other's sake: a run loaded 78 files, now 52 (each ES
//   module costs Node's loader a resolve, a read and a link).
// - Whitespace and syntax minified, names kept: V8 parses every byte it loads
//   (compiling was a third of the loading); a stack trace still names the functions,
//   and the linked source maps (node --enable-source-maps) lead back to src/.
// - zod without its 50 locales (361 KB of a 735 KB chunk, every run parsed them):
//   the product reads zod's messages in English only (`en`, what zod configures).
//
// The runner is built twice: as ES module chunks (runner-cli.js), and as one CommonJS
// file named after its content (runner-<hash>.cjs), which the scaffold-runner bin
// (scaffold-runner.js) starts from V8's code cache when a training run made one
// (src/process/code-cache.ts says why; src/train-runner-code-cache.ts trains it,
// after the bundle unless --no-train, and needs git and kubectl on PATH). Without a
// trained cache the bin starts the ES modules, as before.
//
// The extra entries are the files the code starts by path beside itself: the spawn
// helper (process/spawn-helper.ts) and the upgrade planning worker
// (workspace/plan-upgrade-in-parallel.ts) resolve `./<name>.js` next to their caller,
// and every chunk is written in the one directory. The package root (platform/,
// schemas/, package.json) is still found by walking up from the code.
//
//   node scripts/bundle.mjs                       # writes dist/bundle/ and trains the runner's code cache
//   node scripts/bundle.mjs [--no-train] [<outdir>] # without the training (no git or kubectl here); elsewhere under the package root
import { spawnSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The files the code starts by path beside itself; each graph that may start them holds them. */
const STARTED_BESIDE = ['src/process/spawn-helper-main.ts', 'src/workspace/upgrade-plan-worker.ts'];

/**
 * The module graphs, bundled one after the other into one directory: chunks are
 * named by their content, so two graphs share a file only when its bytes are
 * the same. The CLI's graph starts the helper files the runner's graph wrote.
 */
const GRAPHS = [['src/runner-cli.ts', ...STARTED_BESIDE], ['src/cli.ts'], ['src/scaffold-runner.ts'], ['src/train-runner-code-cache.ts']];

/** The runner's CommonJS build: what scaffold-runner.js starts from the code cache. */
const RUNNER_SCRIPT_ENTRY = 'src/runner-cli.ts';

/** The bundle's manifest of the runner's CommonJS build (src/process/runner-code.ts). */
const RUNNER_CODE_MANIFEST = 'runner-code.json';

/** The bundled binaries and the files they start beside themselves, as src/ paths. */
export const BUNDLE_ENTRIES = GRAPHS.flat();

/** zod's locale index with English alone: what `z.locales` offers the bundle (zod itself configures `en`). */
const ZOD_LOCALES_EN = 'export { default as en } from "./en.js";\n';

/** Resolves zod's `../locales/index.js` to {@link ZOD_LOCALES_EN}, loaded from zod's own locales directory. */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer)
        ? { path: relative(ROOT, join(args.resolveDir, '..', 'locales', 'index.js')), namespace: 'zod-locales' }
        : undefined,
    );
    // The path is the package root's (a source map names it); `./en.js` resolves beside it.
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({ contents: ZOD_LOCALES_EN, resolveDir: join(ROOT, dirname(args.path)), loader: 'js' }));
  },
};

/**
 * Bundles {@link BUNDLE_ENTRIES} into `outdir` (emptied first), one file an entry,
 * named as its source (`runner-cli.js`, `cli.js`, …), beside the shared chunks.
 * `outdir` must lie under the package root: the code finds platform/ and schemas/ above itself.
 */
export async function bundle(outdir = join(ROOT, 'dist', 'bundle'), { train = true } = {}) {
  await rm(outdir, { recursive: true, force: true });
  const inputs = new Set();
  const outputs = new Set();
  for (const entryPoints of GRAPHS) {
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints,
      outdir,
      entryNames: '[name]',
      chunkNames: 'chunk-[hash]',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      minifyWhitespace: true,
      minifySyntax: true,
      plugins: [zodEnglishOnly],
      // The CommonJS packages inside (pino, commander, client-node's dependencies) call require() on Node's
      // modules, which an ES module does not have.
      banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
      // For a reader of a stack trace; Node does not read them unless started with --enable-source-maps.
      sourcemap: 'linked',
      logLevel: 'warning',
      metafile: true,
    });
    for (const input of Object.keys(result.metafile.inputs)) inputs.add(input);
    for (const output of Object.keys(result.metafile.outputs)) if (output.endsWith('.js')) outputs.add(output);
  }
  const script = await bundleRunnerScript(outdir);
  outputs.add(script);
  await writeFile(join(outdir, RUNNER_CODE_MANIFEST), `${JSON.stringify({ script })}\n`);
  const trained = train ? trainCodeCache(outdir) : 'not asked for (--no-train)';
  return { outdir, inputs: inputs.size, outputs: outputs.size, trained };
}

/**
 * The runner as one CommonJS file (no splitting: esbuild splits ES modules only),
 * `runner-<hash>.cjs` after its content. `import.meta.url` becomes the file's URL;
 * its top level has no await (runner-cli.ts's `main`).
 */
async function bundleRunnerScript(outdir) {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [RUNNER_SCRIPT_ENTRY],
    outdir,
    entryNames: 'runner-[hash]',
    outExtension: { '.js': '.cjs' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minifyWhitespace: true,
    minifySyntax: true,
    plugins: [zodEnglishOnly],
    define: { 'import.meta.url': '__bundleImportMetaUrl', 'import.meta.resolve': '__bundleImportMetaResolve' },
    banner: {
      js: "const __bundleImportMetaUrl = require('node:url').pathToFileURL(__filename).href; const __bundleImportMetaResolve = (specifier) => require('node:url').pathToFileURL(require.resolve(specifier)).href;",
    },
    sourcemap: 'linked',
    logLevel: 'warning',
    metafile: true,
  });
  const [script] = Object.keys(result.metafile.outputs).filter((output) => output.endsWith('.cjs'));
  return relative(outdir, join(ROOT, script));
}

/**
 * Trains the runner's code cache with the bundle's own trainer, where git and kubectl are
 * on PATH (a training run is a verified scaffold); says why not otherwise. A failed
 * training fails the bundle: the runner it ran is the one that ships.
 */
function trainCodeCache(outdir) {
  const missing = [];
  for (const tool of ['git', 'kubectl']) if (exitOf(tool, ['version', ...(tool === 'kubectl' ? ['--client=true'] : [])]) !== 0) missing.push(tool);
  if (missing.length > 0) return `not trained: ${missing.join(' and ')} not on PATH; scaffold-runner starts from the ES modules`;
  const exit = exitOf(process.execPath, [join(outdir, 'train-runner-code-cache.js')], 'inherit');
  if (exit !== 0) throw new Error(`training the runner's code cache failed (exit ${exit}); see above`);
  return 'trained';
}

/** The exit code of `command args`, or -1 where it cannot start or a signal ended it. */
function exitOf(command, args, stdio = 'ignore') {
  return spawnSync(command, args, { stdio: ['ignore', stdio, stdio] }).status ?? -1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const dir = args.find((arg) => !arg.startsWith('--'));
  const { outdir, inputs, outputs, trained } = await bundle(dir !== undefined ? resolve(dir) : undefined, { train: !args.includes('--no-train') });
  process.stdout.write(`bundled ${inputs} modules into ${outputs} files in ${outdir}; the runner's code cache: ${trained}\n`);
}
