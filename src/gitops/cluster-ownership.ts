/**
 * Which files under `clusters/<name>/` a render owns. A cluster path is shared:
 * `flux bootstrap` writes `flux-system/` there (gotk-components.yaml,
 * gotk-sync.yaml, kustomization.yaml), and people add files of their own. A
 * render may only take away what it wrote itself, and the cluster's entry
 * point must keep listing the Kustomize roots it does not own, or Flux's own
 * sync Kustomization (prune: true) would garbage-collect them, Flux included.
 *
 * Paths here are relative to the cluster directory.
 */

/** The file names kustomize (and Flux) recognise as a Kustomize root. */
export const KUSTOMIZATION_FILE_NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/** Inputs of {@link staleFiles}. */
export interface StaleFilesInput {
  /** The files the cluster directory holds now. */
  readonly existing: Iterable<string>;
  /** The files this render writes. */
  readonly produced: ReadonlySet<string>;
  /**
   * What the previous render recorded in provenance: `undefined` when there is
   * no provenance at all, `files` undefined when a generator that did not
   * record its files wrote it.
   */
  readonly previous: { readonly files?: readonly string[] } | undefined;
  /**
   * For provenance without a file list: whether the generator, from this
   * reference environment, writes a file at this path in some pass or selection.
   */
  readonly generatorShaped: (path: string) => boolean;
}

/**
 * The files a render removes: those it wrote before and no longer produces,
 * sorted. Everything else in the directory is kept byte for byte.
 *
 * - Provenance with a file list: exactly the listed files this render does
 *   not produce.
 * - Provenance without one (a generator before the list existed): that
 *   generator deleted every file it did not produce, so right after its render
 *   the directory held only its own output; anything else appeared since (flux
 *   bootstrap's flux-system/, a person's file). Only files at a path this
 *   generator itself would write from the reference (the entry point,
 *   provenance, `flux/`, the generated `hosts/`, `identity/`, `sealed/` of a
 *   reference layer directory, a carried-over path) are taken as its own;
 *   anything else is kept. A leftover kept this way is harmless (no kustomization
 *   lists it) and the next render records the list.
 * - No provenance: nothing proves the render wrote anything here, so nothing is removed.
 */
export function staleFiles(input: StaleFilesInput): string[] {
  const { previous } = input;
  if (previous === undefined) return [];
  const recorded = previous.files !== undefined ? new Set(previous.files) : undefined;
  const owned = (path: string): boolean => (recorded !== undefined ? recorded.has(path) : input.generatorShaped(path));
  return [...input.existing].filter((path) => !input.produced.has(path) && owned(path)).sort(compare);
}

/**
 * The top-level directories of the cluster path that are Kustomize roots the
 * render does not own (flux bootstrap's `flux-system`): a kustomization file
 * that stays, and no file of the render below them. Sorted.
 */
export function foreignKustomizeRoots(existing: Iterable<string>, produced: ReadonlySet<string>, stale: readonly string[]): string[] {
  const removed = new Set(stale);
  const producedTops = new Set([...produced].filter((p) => p.includes('/')).map((p) => p.slice(0, p.indexOf('/'))));
  const roots = new Set<string>();
  for (const path of existing) {
    const parts = path.split('/');
    if (parts.length !== 2 || removed.has(path)) continue;
    const [top, name] = parts as [string, string];
    if ((KUSTOMIZATION_FILE_NAMES as readonly string[]).includes(name) && !producedTops.has(top)) roots.add(top);
  }
  return [...roots].sort(compare);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
