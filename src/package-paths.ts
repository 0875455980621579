/**
 * Where the package's shipped data lives (the reference platforms, the CRD
 * schemas), whether running from src/ through tsx or from dist/ after a build.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding this package's package.json. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('gitops-scaffolder: cannot find the package root (no package.json above the code)');
    dir = parent;
  }
  return dir;
}

/** The shipped reference platform named `name`. @default 'default' */
export function platformDir(name = 'default'): string {
  return join(packageRoot(), 'platform', name);
}

/** The package version, recorded in provenance. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
