/**
 * Where the CRD schemas shipped with the package live (`schemas/crds/` at the
 * package root, and their table `schemas/crd-table.json`). Resolved from this
 * module's own URL, never from the working directory, so the CLI finds them
 * wherever it is run; the pure verify core takes them as an argument and
 * never looks itself.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError } from '../errors.js';
import { packageRoot } from '../package-paths.js';
import type { CrdKinds, CrdTable } from '../verify/crd-table.js';

/**
 * The package's `schemas/crds` directory, below the package root that
 * `packageRoot()` finds (from `src/` through tsx and from the compiled `dist/src/`).
 *
 * @throws NotFoundError when the package root has no `schemas/crds` (a broken install)
 */
export function defaultCrdSchemaDir(): string {
  const dir = join(packageRoot(), 'schemas', 'crds');
  if (!existsSync(dir)) throw new NotFoundError(`${dir} not found: the package's CRD schemas are missing`);
  return dir;
}

/** `schemas/crd-table.json`: the CRDs of `schemas/crds` by kind, as `scripts/crd-table.ts` writes them. */
export function shippedCrdTablePath(): string {
  return join(packageRoot(), 'schemas', 'crd-table.json');
}

/**
 * The shipped CRDs, read from their table: what a verifying process checks
 * custom resources against. The table's test fails when it no longer holds
 * what `schemas/crds` does.
 *
 * @throws NotFoundError when the package has no table (a broken install)
 */
export async function shippedCrdKinds(): Promise<CrdKinds> {
  const path = shippedCrdTablePath();
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new NotFoundError(`${path} not found: the package's CRD schemas are missing`) : error;
  });
  return (JSON.parse(text) as CrdTable).kinds;
}
