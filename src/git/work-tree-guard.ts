/**
 * A working copy of a caller's repository is hostile content. A symbolic link
 * committed as `clusters/<name>` pointing at the service's data directory would
 * make every reader of the tree (the dry-run previewer, the renderer, the
 * catalog, `kubectl kustomize` for verify and the graph) read files of the host
 * and hand them back; a kustomization listing `../../../../srv/x` would make
 * kustomize build a directory outside the repository. Each working copy is
 * checked here once, right after git wrote it (clone, rebase), so no reader
 * needs to know: links may point only inside the work tree (never into
 * `.git`), and kustomizations may name only paths inside it.
 */
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ValidationError } from '../errors.js';

const KUSTOMIZATION_FILES = new Set(['kustomization.yaml', 'kustomization.yml', 'Kustomization']);
/** Kustomization fields that list local paths (directories or files). */
const PATH_LISTS = ['resources', 'bases', 'components', 'crds', 'patchesStrategicMerge', 'configurations', 'transformers', 'generators', 'validators'] as const;
const PATCH_LISTS = ['patches', 'patchesJson6902', 'replacements'] as const;
const GENERATOR_LISTS = ['configMapGenerator', 'secretGenerator', 'helmChartInflationGenerator'] as const;

function refuse(message: string): ValidationError {
  return new ValidationError([{ field: 'repository', message }]);
}

/** Whether `target` (absolute) lies inside `root` (absolute) and outside its `.git`. */
function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  if (rel === '') return true;
  if (rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) return false;
  return rel.split(sep)[0] !== '.git';
}

/** A kustomization entry is remote when kustomize would fetch it rather than read a path. */
function isRemote(entry: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) || /^(git@|github\.com\/|gitlab\.com\/|bitbucket\.org\/)/.test(entry);
}

function pathsOf(kustomization: Record<string, unknown>): string[] {
  const paths: string[] = [];
  const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
  for (const key of PATH_LISTS) paths.push(...strings(kustomization[key]));
  for (const key of PATCH_LISTS) {
    const list = kustomization[key];
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const path = (item as { path?: unknown } | null)?.path;
      if (typeof path === 'string') paths.push(path);
    }
  }
  for (const key of GENERATOR_LISTS) {
    const list = kustomization[key];
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const generator = (item ?? {}) as { files?: unknown; envs?: unknown; env?: unknown; valuesFile?: unknown };
      // "key=path" names the data key and the file.
      paths.push(...strings(generator.files).map((file) => file.slice(file.indexOf('=') + 1)));
      paths.push(...strings(generator.envs));
      if (typeof generator.env === 'string') paths.push(generator.env);
      if (typeof generator.valuesFile === 'string') paths.push(generator.valuesFile);
    }
  }
  const helm = (kustomization['helmGlobals'] ?? {}) as { chartHome?: unknown };
  if (typeof helm.chartHome === 'string') paths.push(helm.chartHome);
  return paths.filter((path) => !isRemote(path));
}

async function checkKustomization(root: string, file: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return; // unreadable here is unreadable for kustomize too; it reports that itself
  }
  const where = relative(root, file).split(sep).join('/');
  for (const doc of parseAllDocuments(text)) {
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch {
      throw refuse(`${where} uses YAML aliases beyond any real kustomization (an alias bomb)`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    for (const path of pathsOf(value as Record<string, unknown>)) {
      if (isAbsolute(path) || !inside(root, resolve(dirname(file), path))) {
        throw refuse(`${where} names a path outside the repository (${isAbsolute(path) ? 'an absolute path' : 'one that climbs out with ".."'}); kustomize would read the host's files`);
      }
    }
  }
}

/**
 * Checks a freshly written working copy: every symbolic link stays inside the
 * work tree, and every kustomization names only paths inside it.
 *
 * @throws ValidationError (field `repository`) naming the offending path in the
 *   repository; never what the link points at, so nothing about the host is told
 */
export async function assertConfinedWorkTree(root: string): Promise<void> {
  const base = resolve(root);
  const pending = [base];
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (dir === base && entry.name === '.git') continue;
      // Dirent types come from lstat: a link is examined, never followed.
      if (entry.isSymbolicLink()) {
        const target = await readlink(full);
        if (isAbsolute(target) || !inside(base, resolve(dir, target))) {
          throw refuse(`holds a symbolic link that leaves the work tree: ${relative(base, full).split(sep).join('/')}`);
        }
        // kustomize reads a linked kustomization through its link: check what it will read.
        if (KUSTOMIZATION_FILES.has(entry.name)) await checkKustomization(base, full);
      } else if (entry.isDirectory()) {
        pending.push(full);
      } else if (entry.isFile() && KUSTOMIZATION_FILES.has(entry.name)) {
        await checkKustomization(base, full);
      }
    }
  }
  // The root itself must be a directory, not a link somewhere else.
  if ((await lstat(base)).isSymbolicLink()) throw refuse('the working copy is a symbolic link');
}
