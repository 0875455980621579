/**
 * A working copy of a caller's repository is hostile content. A symbolic link
 * committed as `clusters/<name>` pointing at the service's data directory would
 * make every reader of the tree (the dry-run previewer, the renderer, the
 * catalog, `kubectl kustomize` for verify and the graph) read files of the host
 * and hand them back; a kustomization listing `../../../../srv/x` would make
 * kustomize build a directory outside the repository. Each working copy is
 * checked here once, right after git wrote it (clone, rebase), and again
 * before the CLI verifies or draws a tree it did not clone.
 *
 * Links are resolved the way the kernel resolves them (`confined-path.ts`),
 * not as text: `clusters/u -> .` plus `clusters/x -> u/u/../../../srv` stays
 * inside the tree as text and climbs out through the file system. FIFOs,
 * sockets and devices are refused: reading one blocks or reads the host.
 * Readers resolve and open paths themselves too (`fs-repo-reader.ts`); this
 * walk makes the refusal early and names the first offending path. Its
 * calls block, as the readers' do (confined-path.ts): a work tree is local,
 * and the thread pool's hand-offs cost more than the calls.
 */
import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import { sep } from 'node:path';
import { ValidationError } from '../errors.js';
import { assertKustomizationConfined, KUSTOMIZATION_FILES } from '../verify/kustomization-paths.js';
import { resolveConfined, specialFileError } from './confined-path.js';
import { FsRepoReader } from './fs-repo-reader.js';

/**
 * Checks a working copy: every symbolic link resolves inside the work tree
 * (out of `.git`, without a loop), nothing is a FIFO, socket or device, and
 * every kustomization names only paths inside it.
 *
 * `skip`: repository directories not walked, because nothing will read them
 * (a batch run's other clusters, left out of a verify of one cluster). A
 * link elsewhere that leads into one is still resolved, as every reader
 * resolves what it opens.
 *
 * @throws ValidationError (field `repository`) naming the offending path in the
 *   repository; never what a link points at, so nothing about the host is told
 */
export async function assertConfinedWorkTree(root: string, options: { readonly skip?: readonly string[] } = {}): Promise<void> {
  const skip = new Set(options.skip ?? []);
  // The root itself must be a directory, not a link somewhere else.
  if (lstatSync(root).isSymbolicLink()) throw new ValidationError([{ field: 'repository', message: 'the working copy is a symbolic link' }]);
  const base = realpathSync(root);
  const reader = new FsRepoReader(base);
  const pending = [base];
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    const entries = readdirSync(dir, { withFileTypes: true });
    for (const entry of entries) {
      if (dir === base && entry.name === '.git') continue;
      const full = `${dir}${sep}${entry.name}`;
      // `full` is `base` and the names below it: slicing is path.relative's answer, without normalizing every entry of the tree.
      const below = full.slice(base.length + 1);
      const path = sep === '/' ? below : below.split(sep).join('/');
      // Dirent types come from lstat: a link is resolved here, inside the tree, never followed by the kernel.
      if (entry.isSymbolicLink()) {
        const resolved = await resolveConfined(base, path);
        // kustomize reads a linked kustomization through its link: check what it will read.
        if (resolved.found && resolved.stats.isFile() && KUSTOMIZATION_FILES.has(entry.name)) await checkKustomization(reader, path);
        else if (resolved.found && !resolved.stats.isFile() && !resolved.stats.isDirectory()) throw specialFileError(path);
      } else if (entry.isDirectory()) {
        if (!skip.has(path)) pending.push(full);
      } else if (entry.isFile()) {
        if (KUSTOMIZATION_FILES.has(entry.name)) await checkKustomization(reader, path);
      } else {
        throw specialFileError(path);
      }
    }
  }
}

async function checkKustomization(reader: FsRepoReader, path: string): Promise<void> {
  const text = await reader.read(path);
  if (text !== undefined) assertKustomizationConfined(path, text);
}
