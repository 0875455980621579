/**
 * Where the CRD schemas shipped with the package live (`schemas/crds/` at the
 * package root). Resolved from this module's own URL, never from the working
 * directory, so the CLI finds them wherever it is run; the pure verify core
 * takes the directory as an argument and never looks itself.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NotFoundError } from '../errors.js';
import { packageRoot } from '../package-paths.js';

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
