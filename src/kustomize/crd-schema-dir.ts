/**
 * Where the CRD schemas shipped with the package live (`schemas/crds/` at the
 * package root). Resolved from this module's own URL, never from the working
 * directory, so the CLI finds them wherever it is run; the pure verify core
 * takes the directory as an argument and never looks itself.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotFoundError } from '../errors.js';

/**
 * The package's `schemas/crds` directory. Walks up from this file to the
 * nearest `package.json`, which works both from `src/` (tsx) and from the
 * compiled `dist/src/`.
 *
 * @throws NotFoundError when no package root with `schemas/crds` is found (a broken install)
 */
export function defaultCrdSchemaDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'schemas', 'crds'))) return join(dir, 'schemas', 'crds');
    const parent = dirname(dir);
    if (parent === dir) throw new NotFoundError(`schemas/crds not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}
