/** The bundled binaries and the files they start beside themselves, as src/ paths. */
export const BUNDLE_ENTRIES: readonly string[];
/** Bundles the entries into `outdir` (default dist/bundle/, emptied first; it must lie under the package root). */
export function bundle(outdir?: string): Promise<{ outdir: string; inputs: number; outputs: number }>;
