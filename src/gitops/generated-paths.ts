/**
 * Which paths under `clusters/<name>/` the generator writes itself, rather than
 * carrying them over from the reference environment. One definition serves
 * both the carry-over (never copy what is generated) and the ownership check of
 * an old render that recorded no file list (what could it have written).
 *
 * Paths here are relative to the cluster directory.
 */
import { PROVENANCE_FILE } from './provenance.js';

/**
 * What `flux bootstrap` writes into a cluster path: that cluster's own Flux
 * installation and sync. Never carried over from the reference, and never the
 * render's to write or remove.
 */
export const FLUX_BOOTSTRAP_DIR = 'flux-system';

/** A layer overlay's generated directory: `<overlay>/hosts/`, `<overlay>/identity/` or `<overlay>/sealed/`. */
const GENERATED_OVERLAY_DIR = /^([^/]+)\/(hosts|identity|sealed)\//;

/** The entry point, provenance and flux/: written whole by every render. */
function isGeneratorRoot(rel: string): boolean {
  return rel === 'kustomization.yaml' || rel === PROVENANCE_FILE || rel.startsWith('flux/');
}

function isFluxBootstrap(rel: string): boolean {
  return rel.startsWith(`${FLUX_BOOTSTRAP_DIR}/`);
}

/** Whether a file of the reference environment is carried over (identity rewritten) rather than generated or Flux's own. */
export function isCarriedOver(rel: string): boolean {
  return !isGeneratorRoot(rel) && !GENERATED_OVERLAY_DIR.test(rel) && !isFluxBootstrap(rel);
}

/**
 * Whether this generator, from a reference whose (identity-rewritten) files are
 * `referencePaths`, writes a file at `rel` in some pass or layer selection.
 */
export function generatorShapedPath(referencePaths: ReadonlySet<string>): (rel: string) => boolean {
  const referenceDirs = new Set([...referencePaths].filter((rel) => rel.includes('/')).map((rel) => rel.slice(0, rel.indexOf('/'))));
  return (rel) => {
    if (isFluxBootstrap(rel)) return false;
    if (isGeneratorRoot(rel) || referencePaths.has(rel)) return true;
    const generated = GENERATED_OVERLAY_DIR.exec(rel);
    return generated !== null && referenceDirs.has(generated[1]!);
  };
}
