#!/usr/bin/env node
/**
 * Trains the runner's code cache (process/code-cache.ts): runs the bundle's
 * `scaffold-runner` once, a verified two-pass scaffold of a throwaway cluster
 * into a throwaway repository seeded with the shipped platform, sealed for a
 * throwaway key, and keeps the bytecode that run compiled. Then it checks
 * that V8 takes the cache back under the bin's flags and only then names it
 * in the bundle's manifest (process/runner-code.ts), so a bin never meets a
 * cache that did not come from a whole, successful run of its own script.
 *
 *   node dist/bundle/train-runner-code-cache.js
 *
 * scripts/bundle.mjs runs it after bundling; the runner image runs it in its
 * final stage, where git and kubectl are (Dockerfile.runner). Nothing of the
 * run stays: no key, no repository, no tree.
 */
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureSeededBareRepository } from './git/seed-repository.js';
import { platformDir } from './package-paths.js';
import { directLauncher } from './process/child-launcher.js';
import { compileModule } from './process/code-cache.js';
import { CODE_CACHE_ENV, RUNNER_CODE_MANIFEST, type RunnerCodeManifest, readRunnerCodeManifest } from './process/runner-code.js';
import { limitTiering } from './process/v8-tiering.js';
import { createTestCertificate } from './sealing/test-certificate.js';
import { RUNNER_ENV } from './run-contract/runner-inputs.js';

/** The throwaway cluster of the training run. */
const TRAINING_CLUSTER = { name: 'code-cache-training', domain: 'code-cache-training.example.net', region: 'eu-west-1' } as const;

async function replaceFile(path: string, content: string | Buffer): Promise<void> {
  await writeFile(`${path}.partial`, content);
  await rename(`${path}.partial`, path);
}

/**
 * Trains the cache of the bundle in `bundleDir` and names it in the manifest.
 * @returns the cache's file name
 * @throws Error when the training run fails or V8 rejects the cache it made
 */
export async function trainRunnerCodeCache(bundleDir: string): Promise<string> {
  const manifest = readRunnerCodeManifest(bundleDir);
  if (manifest === undefined) throw new Error(`${bundleDir} holds no ${RUNNER_CODE_MANIFEST}: bundle first (scripts/bundle.mjs)`);
  const work = await mkdtemp(join(tmpdir(), 'scaffold-code-cache-'));
  try {
    const repository = join(work, 'fleet.git');
    await ensureSeededBareRepository(repository, platformDir());
    const certificate = join(work, 'sealing.pem');
    await writeFile(certificate, createTestCertificate().certificatePem);
    await mkdir(join(work, 'tmp'));
    const trained = join(work, 'runner.cache');
    const resultFile = join(work, 'result.json');
    const { name, domain, region } = TRAINING_CLUSTER;
    const run = await directLauncher.start({
      command: process.execPath,
      args: [
        join(bundleDir, 'scaffold-runner.js'),
        '--repo-url',
        pathToFileURL(repository).href,
        '--cluster',
        name,
        '--domain',
        domain,
        '--region',
        region,
        '--cert',
        certificate,
      ],
      cwd: work,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: work,
        TMPDIR: join(work, 'tmp'),
        [RUNNER_ENV.resultFile]: resultFile,
        [RUNNER_ENV.workDir]: join(work, 'run'),
        [CODE_CACHE_ENV.trainInto]: trained,
        ...(process.env['SCAFFOLD_V8_TIERING'] !== undefined ? { SCAFFOLD_V8_TIERING: process.env['SCAFFOLD_V8_TIERING'] } : {}),
      },
      ownGroup: false,
    }).outcome;
    const result = await readFile(resultFile, 'utf8').then(
      (text) => JSON.parse(text) as { status?: string; message?: string },
      () => undefined,
    );
    if (run.code !== 0 || result?.status !== 'succeeded') {
      const output = `${run.stdout.slice(-3000)}${run.stderr.slice(-1000)}`;
      throw new Error(
        `the training run ended ${result?.status ?? `with exit ${run.code ?? run.signal}`}${result?.message ? `: ${result.message}` : ''}\n${output}`,
      );
    }
    // Under the bin's flags, as the bin compiles it.
    limitTiering(process.env);
    const script = join(bundleDir, manifest.script);
    const cache = await readFile(trained);
    const use = compileModule(await readFile(script, 'utf8'), script, cache).cache;
    if (use !== 'accepted') throw new Error(`V8 ${use} the code cache the training run made of ${manifest.script}`);
    // Each file whole or not at all: a bin reading the manifest halfway finds the old one.
    const codeCache = `${manifest.script}.cache`;
    await replaceFile(join(bundleDir, codeCache), cache);
    const trainedManifest: RunnerCodeManifest = { script: manifest.script, codeCache, node: process.version };
    await replaceFile(join(bundleDir, RUNNER_CODE_MANIFEST), `${JSON.stringify(trainedManifest)}\n`);
    return codeCache;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const bundleDir = dirname(fileURLToPath(import.meta.url));
  const codeCache = await trainRunnerCodeCache(bundleDir);
  process.stdout.write(`trained the runner's code cache: ${join(bundleDir, codeCache)}\n`);
}
