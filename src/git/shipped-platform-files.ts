/**
 * The files of a platform shipped with the package, by repository path: what
 * tests render from in memory (`memoryRepoReader`), read the way the generator
 * reads a work tree.
 */
import { platformDir } from '../package-paths.js';
import { FsRepoReader } from './fs-repo-reader.js';

/** Every file of `platform/<name>/`. @default name 'default' */
export async function shippedPlatformFiles(name = 'default'): Promise<Map<string, string>> {
  const disk = new FsRepoReader(platformDir(name));
  const files = new Map<string, string>();
  for (const path of await disk.list('')) files.set(path, (await disk.read(path)) ?? '');
  return files;
}
