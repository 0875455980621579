/**
 * KustomizeBuilder over a tree we write ourselves. `kubectl kustomize` opens
 * files through the kernel, which follows links wherever they lead; so it
 * never sees the repository's working copy. The files the repository reader
 * hands out (`git-object-reader.ts` or the confined `fs-repo-reader.ts`, both
 * refusing links that leave the tree, FIFOs and devices) are written once into
 * a scratch directory that holds no link at all, each kustomization's paths
 * are checked to stay inside it (`verify/kustomization-paths.ts`; with no
 * links, the text is what the kernel resolves), and kustomize builds there
 * with its root-only load restrictor. One copy serves every build of a verify.
 * Given a cache, each build is first looked up by the content of the files it
 * reads (kustomize/build-inputs.ts): the bytes are in hand while copying, so
 * hashing them costs no extra read.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { RepoReader } from '../gitops/repo-reader.js';
import { assertKustomizationConfined, isKustomizationFile } from '../verify/kustomization-paths.js';
import type { KustomizeBuilder } from '../verify/kustomize-builder.js';
import type { KustomizeBuildCache } from './build-cache.js';
import { TreeIndex } from './build-inputs.js';
import { KubectlKustomize } from './kubectl-kustomize.js';

/** Options of {@link MaterializedKustomize}. */
export interface MaterializedKustomizeOptions {
  /** Builds in the materialized tree. @default new KubectlKustomize() */
  readonly kustomize?: KustomizeBuilder;
  /** Where the scratch directory is made. @default os.tmpdir() */
  readonly scratchRoot?: string;
  /** Outputs by input content, shared with other verifies (a run's two passes). @default none: every build runs */
  readonly cache?: KustomizeBuildCache;
}

/**
 * Copies `reader`'s files into the empty directory `into`, checking every kustomization on the way.
 * `onFile` sees each file's bytes as they are written.
 *
 * The writes block: the copy is a few hundred small files on the runner's own
 * scratch volume, where the thread pool's hand-offs (open, write, close, each a
 * trip to a pool thread and back) cost more than the writes.
 */
export async function materializeTree(reader: RepoReader, into: string, onFile?: (path: string, bytes: Buffer) => void): Promise<number> {
  const paths = await reader.list('');
  const made = new Set<string>();
  for (const path of paths) {
    const bytes = reader.readBytes !== undefined ? await reader.readBytes(path) : Buffer.from((await reader.read(path)) ?? '', 'utf8');
    if (bytes === undefined) continue;
    if (isKustomizationFile(path)) assertKustomizationConfined(path, bytes.toString('utf8'));
    onFile?.(path, bytes);
    const target = join(into, ...path.split('/'));
    const parent = dirname(target);
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true });
      made.add(parent);
    }
    // wx: the scratch directory is ours and empty; nothing there is followed or overwritten.
    writeFileSync(target, bytes, { flag: 'wx' });
  }
  return paths.length;
}

/**
 * Builds kustomizations of `reader`'s repository in a copy of it. The
 * `repoRoot` a caller passes is not used: builds run in the copy. Call
 * {@link dispose} when done.
 */
export class MaterializedKustomize implements KustomizeBuilder {
  readonly #reader: RepoReader;
  readonly #kustomize: KustomizeBuilder;
  readonly #scratchRoot: string;
  readonly #cache: KustomizeBuildCache | undefined;
  #tree: Promise<{ readonly root: string; readonly index: TreeIndex; readonly kustomizations: ReadonlyMap<string, string> }> | undefined;
  #engine: Promise<string | undefined> | undefined;
  #scratch: string | undefined;
  #builds = 0;

  constructor(reader: RepoReader, options: MaterializedKustomizeOptions = {}) {
    this.#reader = reader;
    this.#kustomize = options.kustomize ?? new KubectlKustomize();
    this.#scratchRoot = options.scratchRoot ?? tmpdir();
    this.#cache = options.cache;
  }

  async build(_repoRoot: string, dir: string, signal?: AbortSignal): Promise<string> {
    const { root, index, kustomizations } = await (this.#tree ??= this.#materialize());
    const kustomize = () => {
      this.#builds += 1;
      return this.#kustomize.build(root, dir, signal);
    };
    const cache = this.#cache;
    if (cache === undefined) return kustomize();
    // Once per verify: a kubectl replaced between two verifies is another engine.
    const engine = await (this.#engine ??= this.#kustomize.engine?.() ?? Promise.resolve(undefined));
    if (engine === undefined) return cache.bypass(kustomize);
    const inputs = await index.inputs(dir, engine, async (path) => kustomizations.get(path));
    if (!inputs.cacheable) return cache.bypass(kustomize);
    return cache.through(inputs.dirBound ? `${inputs.key}\0${dir}` : inputs.key, dir, kustomize);
  }

  async #materialize(): Promise<{ root: string; index: TreeIndex; kustomizations: ReadonlyMap<string, string> }> {
    const scratch = await mkdtemp(join(this.#scratchRoot, 'gitops-kustomize-'));
    this.#scratch = scratch;
    const root = join(scratch, 'repo');
    mkdirSync(root);
    const digests = new Map<string, string>();
    const kustomizations = new Map<string, string>();
    await materializeTree(
      this.#reader,
      root,
      this.#cache === undefined
        ? undefined
        : (path, bytes) => {
            digests.set(path, createHash('sha256').update(bytes).digest('hex'));
            if (isKustomizationFile(path)) kustomizations.set(path, bytes.toString('utf8'));
          },
    );
    return { root, index: new TreeIndex(digests), kustomizations };
  }

  /** Builds that ran the engine (not answered by the cache). */
  get builds(): number {
    return this.#builds;
  }

  /** Removes the copy. */
  async dispose(): Promise<void> {
    const scratch = this.#scratch;
    this.#tree = undefined;
    this.#scratch = undefined;
    // Blocking, as the copy was written: one call instead of a pool trip per file and directory.
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  }
}
