/**
 * The local paths a kustomization names must stay inside the repository:
 * `resources: [../../../../srv/x]` would make kustomize build a directory of
 * the host. Checked on the text, against the repository-relative position of
 * the kustomization file; that is how the kernel resolves it too wherever the
 * tree holds no links (a tree materialized for kustomize, or one whose links
 * the work-tree guard resolved). Entries that look like URLs are checked as
 * paths too, since kustomize reads them as paths when no URL parser takes them.
 */
import { posix } from 'node:path';
import { sharedYamlReading } from '../gitops/shared-yaml-reading.js';
import { ValidationError } from '../errors.js';

/** The file names kustomize looks for in a directory. */
export const KUSTOMIZATION_FILES: ReadonlySet<string> = new Set(['kustomization.yaml', 'kustomization.yml', 'Kustomization']);

/** Kustomization fields that list local paths (directories or files). */
const PATH_LISTS = ['resources', 'bases', 'components', 'crds', 'patchesStrategicMerge', 'configurations', 'transformers', 'generators', 'validators'] as const;
const PATCH_LISTS = ['patches', 'patchesJson6902', 'replacements'] as const;
const GENERATOR_LISTS = ['configMapGenerator', 'secretGenerator', 'helmChartInflationGenerator'] as const;

function refuse(message: string): ValidationError {
  return new ValidationError([{ field: 'repository', message }]);
}

/** Whether `path` (repository-relative, POSIX) names a kustomization file. */
export function isKustomizationFile(path: string): boolean {
  return KUSTOMIZATION_FILES.has(posix.basename(path));
}

/**
 * kustomize clones a `file://` URL with git from this machine's disk: another
 * repository of the host, whatever the tree's own paths.
 */
const HOST_REPOSITORY = /^file:/i;

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
  return paths;
}

/**
 * Whether `path`, named by the kustomization at `file`, stays inside the
 * repository and out of `.git`, read as a local path. Every entry is read so,
 * a URL too: kustomize tries a file, then a git URL it can parse, then a
 * directory, so `github.com/../../../../srv` or `a://../../../srv`, which no
 * git URL parser takes, is a directory of the host.
 */
function staysInside(file: string, path: string): boolean {
  if (posix.isAbsolute(path)) return false;
  const target = posix.normalize(posix.join(posix.dirname(file), path));
  if (target === '..' || target.startsWith('../')) return false;
  return target.split('/')[0] !== '.git';
}

/** The documents' values up to the first the yaml package refuses to expand (an alias bomb), if any. */
interface KustomizationValues {
  readonly values: readonly unknown[];
  readonly aliasBomb: boolean;
}

/**
 * The work-tree guard and the build's copy each check every kustomization, and
 * a batch's clusters carry the same ones: each text is parsed once for the
 * process (shared-yaml-reading.ts).
 */
function documentValues(text: string): KustomizationValues {
  const values: unknown[] = [];
  for (const { value, thrown } of sharedYamlReading(text)) {
    if (thrown !== undefined) return { values, aliasBomb: true };
    values.push(value);
  }
  return { values, aliasBomb: false };
}

/**
 * Checks the kustomization `text` of the repository file `file`.
 * @throws ValidationError (field `repository`) naming `file` when a path leaves the repository or the YAML is an alias bomb
 */
export function assertKustomizationConfined(file: string, text: string): void {
  const { values, aliasBomb } = documentValues(text);
  for (const value of values) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    for (const path of pathsOf(value as Record<string, unknown>)) {
      if (HOST_REPOSITORY.test(path)) throw refuse(`${file} names a file: URL; kustomize would clone a repository from the host's disk`);
      if (!staysInside(file, path)) {
        throw refuse(
          `${file} names a path outside the repository (${posix.isAbsolute(path) ? 'an absolute path' : 'one that climbs out with ".."'}); kustomize would read the host's files`,
        );
      }
    }
  }
  if (aliasBomb) throw refuse(`${file} uses YAML aliases beyond any real kustomization (an alias bomb)`);
}
