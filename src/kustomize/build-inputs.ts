/**
 * What a `kustomize build <dir>` reads, named by content, so two builds with
 * the same inputs can share one output (kustomize/build-cache.ts).
 *
 * With the root-only load restrictor a kustomization loads files only from its
 * own directory and below; it reaches other directories only as whole
 * kustomizations (a resource, component or generator naming a directory), and
 * each of those is again confined to its own directory. So the inputs are
 * every file below the built directory plus, transitively, every file below
 * each directory its kustomizations name. This over-approximates on purpose:
 * a file nothing references still changes the key, which costs a rebuild,
 * never a wrong verdict. Every string of a kustomization is tried as a path,
 * not only the fields we know, so a field kustomize adds later is covered too.
 *
 * Paths enter the key relative to the built directory: the same subtree at
 * the same depth under two clusters has one key. Kustomize's output does not
 * name the directory it was built in; its error messages do, and origin
 * annotations (`buildMetadata`) may, so those keep the directory in the key.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { sharedYamlReading } from '../gitops/shared-yaml-reading.js';
import { ParseMemo } from '../gitops/parse-memo.js';
import { KUSTOMIZATION_FILES } from '../verify/kustomization-paths.js';

/** The content hash of every file of a tree, by repository-relative path. */
export type TreeDigests = ReadonlyMap<string, string>;

/** The key of one build, or why none can be given (the build then always runs). */
export type BuildInputs =
  { readonly cacheable: true; readonly key: string; readonly dirBound: boolean } | { readonly cacheable: false; readonly reason: string };

/** A kustomization entry kustomize would fetch rather than read: its content is not in the tree. */
function isRemote(entry: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ||
    /^(git@|github\.com\/|gitlab\.com\/|bitbucket\.org\/)/.test(entry) ||
    /[?&](ref|version|submodules|timeout)=/.test(entry)
  );
}

/** Every string value in a parsed YAML value, keys included. */
function stringsOf(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      out.push(key);
      stringsOf(item, out);
    }
  }
}

/** Fields whose entries kustomize may fetch from elsewhere. */
const FETCHED_LISTS = ['resources', 'bases', 'components', 'generators', 'transformers', 'validators'] as const;

/** An index of a tree's files for repeated key computations (one verify builds many directories of one tree). */
export class TreeIndex {
  readonly #digests: TreeDigests;
  readonly #sorted: readonly string[];
  readonly #directories = new Set<string>();

  constructor(digests: TreeDigests) {
    this.#digests = digests;
    this.#sorted = [...digests.keys()].sort();
    for (const path of this.#sorted) {
      for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) this.#directories.add(path.slice(0, slash));
    }
  }

  /** Files below `dir` (repository-relative; '.' is the root): a range of the sorted paths, found by bisection (a verify of every cluster asks thousands of times). */
  #filesBelow(dir: string): string[] {
    if (dir === '.' || dir === '') return [...this.#sorted];
    const prefix = `${dir}/`;
    let low = 0;
    let high = this.#sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#sorted[middle]! < prefix) low = middle + 1;
      else high = middle;
    }
    const below: string[] = [];
    for (let i = low; i < this.#sorted.length && this.#sorted[i]!.startsWith(prefix); i++) below.push(this.#sorted[i]!);
    return below;
  }

  /**
   * The key of building `dir`: a digest of `engine` (the kustomize binary and
   * its flags) and of every input file's path relative to `dir` and content.
   * `read` gives a kustomization file's text.
   */
  async inputs(dir: string, engine: string, read: (path: string) => Promise<string | undefined>): Promise<BuildInputs> {
    const root = posix.normalize(dir.replace(/\/+$/, '') || '.');
    const directories = new Set<string>();
    const files = new Set<string>();
    let dirBound = false;
    const queue = [root];
    while (queue.length > 0) {
      const current = queue.pop()!;
      if (directories.has(current)) continue;
      directories.add(current);
      for (const path of this.#filesBelow(current)) files.add(path);
      for (const name of KUSTOMIZATION_FILES) {
        const file = current === '.' ? name : `${current}/${name}`;
        if (!this.#digests.has(file)) continue;
        const text = await read(file);
        if (text === undefined) return { cacheable: false, reason: `${file} could not be read` };
        const facts = KUSTOMIZATIONS.get(text, factsOf);
        if (facts.dirBound) dirBound = true;
        if (facts.remote !== undefined) return { cacheable: false, reason: `${file} names a remote ${facts.remote} entry` };
        for (const candidate of facts.candidates) {
          const target = posix.normalize(posix.join(current, candidate));
          if (target === '..' || target.startsWith('../')) continue;
          if (target === '.' || this.#directories.has(target)) queue.push(target);
          else if (this.#digests.has(target)) files.add(target);
        }
      }
    }
    const hash = createHash('sha256');
    hash.update(`engine\0${engine}\0`);
    const inside = root === '.' ? '' : `${root}/`;
    for (const path of [...files].sort()) {
      // Below the root, the relative path is the rest of it: path.relative's answer for a fraction of its cost.
      const relative = inside === '' ? path : path.startsWith(inside) ? path.slice(inside.length) : posix.relative(root, path);
      hash.update(`${relative}\0${this.#digests.get(path)!}\0`);
    }
    return { cacheable: true, key: hash.digest('hex'), dirBound };
  }
}

/** What a kustomization's text says about a build's inputs, whichever directory holds it. */
interface KustomizationFacts {
  /** It names `buildMetadata` or does not parse: the output (or error) names its directory. */
  readonly dirBound: boolean;
  /** The first fetched list with a remote entry: no key then. */
  readonly remote?: string;
  /** Every string that may name a path, relative to the kustomization's directory (a generator's "key=path" as both). */
  readonly candidates: readonly string[];
}

/**
 * Kustomization texts parsed for their facts: a verify asks for the inputs of
 * each directory it builds, walking overlapping trees (a cluster's layers all
 * name base/), and a batch run verifies many clusters whose kustomizations are
 * mostly the same texts.
 */
const KUSTOMIZATIONS = new ParseMemo<KustomizationFacts>(4 * 1024 * 1024);

function factsOf(text: string): KustomizationFacts {
  let dirBound = /\bbuildMetadata\b/.test(text);
  const candidates: string[] = [];
  for (const { value, thrown } of sharedYamlReading(text)) {
    if (thrown !== undefined) {
      // kustomize fails on it the same way each time, but an error output is bound to its directory anyway.
      dirBound = true;
      continue;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const field of FETCHED_LISTS) {
        const list = (value as Record<string, unknown>)[field];
        if (Array.isArray(list) && list.some((entry) => typeof entry === 'string' && isRemote(entry))) return { dirBound, remote: field, candidates: [] };
      }
    }
    const strings: string[] = [];
    stringsOf(value, strings);
    for (const string of strings) {
      if (string === '' || string.length > 1024 || posix.isAbsolute(string) || isRemote(string)) continue;
      candidates.push(string);
      // A generator's "key=path" names the file after the "=".
      if (string.includes('=')) candidates.push(string.slice(string.indexOf('=') + 1));
    }
  }
  return { dirBound, candidates };
}
