/**
 * How the bundle tells the `scaffold-runner` bin where the runner's CommonJS
 * build and its trained code cache are (code-cache.ts): `runner-code.json`
 * beside the bin, written by scripts/bundle.mjs and, once a training run made
 * a cache V8 accepts, by train-runner-code-cache.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The manifest's file name, in the bundle's directory. */
export const RUNNER_CODE_MANIFEST = 'runner-code.json';

/** What the manifest says; the names are of files in the same directory. */
export interface RunnerCodeManifest {
  /** The runner as one CommonJS file, named after its content (`runner-<hash>.cjs`). */
  readonly script: string;
  /** Its code cache (`<script>.cache`), once trained. */
  readonly codeCache?: string;
  /** The node (`process.version`) that trained it: another node's V8 would reject it. */
  readonly node?: string;
}

/** The variables the bin reads. */
export const CODE_CACHE_ENV = {
  /** `off`: start the runner from its ES modules even where a trained cache exists (a comparison, or a suspicion). */
  mode: 'SCAFFOLD_CODE_CACHE',
  /** A training run: start from the CommonJS build without a cache, and write the cache it compiled to this path on exit. */
  trainInto: 'SCAFFOLD_CODE_CACHE_TRAIN',
} as const;

/** Where the bin records how the runner's code started, for the run's first debug line. */
export const CODE_CACHE_USE = Symbol.for('gitops-scaffolder.runner-code-cache');

/**
 * How the runner's code started, where the bundle has a trained cache: from it, or from the
 * ES modules because V8 rejected it (other V8 flags) or another node trained it.
 */
export type RunnerCodeStart = 'accepted' | 'rejected' | 'other-node';

/** The run's debug line for each start. */
export const RUNNER_CODE_STARTS: Readonly<Record<RunnerCodeStart, string>> = {
  accepted: 'runner code: from the trained code cache',
  rejected: 'runner code: from the ES modules, V8 rejected the trained code cache (other V8 flags?)',
  'other-node': 'runner code: from the ES modules, another node trained the code cache',
};

/** The manifest in `dir`, or undefined where there is none (the sources, or a bundle built before the manifest existed). */
export function readRunnerCodeManifest(dir: string): RunnerCodeManifest | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, RUNNER_CODE_MANIFEST), 'utf8');
  } catch {
    return undefined;
  }
  const parsed = JSON.parse(text) as Partial<RunnerCodeManifest>;
  const plainName = (name: unknown): name is string => typeof name === 'string' && /^[\w.-]+$/.test(name) && !name.startsWith('.');
  if (!plainName(parsed.script)) throw new Error(`${join(dir, RUNNER_CODE_MANIFEST)}: "script" must name a file beside it`);
  if (parsed.codeCache !== undefined && !plainName(parsed.codeCache))
    throw new Error(`${join(dir, RUNNER_CODE_MANIFEST)}: "codeCache" must name a file beside it`);
  return {
    script: parsed.script,
    ...(parsed.codeCache !== undefined ? { codeCache: parsed.codeCache } : {}),
    ...(typeof parsed.node === 'string' ? { node: parsed.node } : {}),
  };
}
