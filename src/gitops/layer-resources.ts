/**
 * What a layer overlay applies from outside itself: the objects in the
 * directories and files its kustomization.yaml lists under `resources`.
 * The generator needs them to find every Ingress to give a hostname and the
 * external-dns release to point at the cluster's domain.
 */
import { posix } from 'node:path';
import { assertRepoPath } from './file-tree.js';
import type { RepoReader } from './repo-reader.js';
import { sharedYamlDocuments } from './yaml.js';
import { isRecord } from '../model/is-record.js';

/** A Kubernetes object found in a layer's resources, with the file it came from. */
export interface FoundObject {
  readonly object: Record<string, unknown>;
  readonly file: string;
}

/** The directories of a layer that the generator writes itself; never scanned. */
export const GENERATED_LAYER_DIRS = ['hosts', 'identity', 'sealed'] as const;

/**
 * A layer resource's objects, from the process's one reading of the text
 * (shared-yaml-reading.ts): base/ is the same for both passes of a run and
 * for every cluster of a batch or an upgrade, and verify reads the same files
 * again. The objects are shared, so frozen.
 * @throws ValidationError naming `file` when the YAML is malformed
 */
export function parseLayerResource(text: string, file: string): readonly unknown[] {
  return sharedYamlDocuments(text, file);
}

/** The `resources` entries of a kustomization.yaml text. */
export function kustomizationResources(text: string, file: string): string[] {
  const object = sharedYamlDocuments(text, file)[0];
  return isRecord(object) && Array.isArray(object.resources) ? object.resources.map(String) : [];
}

/**
 * Whether the yaml package can read an object of one of `kinds` from `text`.
 * A kind is a scalar, and a scalar's value holds only characters of its text
 * except where a double-quoted scalar escapes one (`"Ingr\x65ss"`): an alias
 * repeats an anchored node of the same text, a tag does not change a string,
 * and folded lines join with a space or a line break. So a text without a
 * backslash and without a kind's name holds no such object, and need not be
 * parsed: most of a platform's files (Namespaces, Services, Deployments,
 * HelmRepositories) are of no kind the overlays look for, and parsing them
 * took half of the 160 ms a fresh runner process spent here (the shipped
 * platform's five layers).
 */
export function mayHoldKind(text: string, kinds: readonly string[]): boolean {
  return text.includes('\\') || kinds.some((kind) => text.includes(kind));
}

/**
 * Objects of `kinds` from every YAML file below the layer's resource entries
 * (resolved relative to `layerRoot`, e.g. `clusters/development/apps`).
 * Remote resources (URLs) and the generated directories are skipped, and so
 * is every file that cannot hold one of `kinds` ({@link mayHoldKind}): it is
 * not parsed, so its YAML errors are kustomize's to report when verify builds
 * the tree.
 *
 * @param parse - how a file's text becomes objects (the objects are only read, never changed).
 *   @default parseLayerResource
 */
export async function layerResourceObjects(
  reader: RepoReader,
  layerRoot: string,
  kustomizationText: string,
  kinds: readonly string[],
  parse: (text: string, file: string) => readonly unknown[] = parseLayerResource,
): Promise<FoundObject[]> {
  const found: FoundObject[] = [];
  const seen = new Set<string>();
  for (const entry of kustomizationResources(kustomizationText, `${layerRoot}/kustomization.yaml`)) {
    if (/^[a-z]+:\/\//.test(entry) || (GENERATED_LAYER_DIRS as readonly string[]).includes(entry.replace(/\/+$/, ''))) continue;
    const path = assertRepoPath(posix.normalize(posix.join(layerRoot, entry)).replace(/\/+$/, ''), `${layerRoot}/kustomization.yaml resources`);
    const files = (await reader.isDirectory(path)) ? await reader.list(path) : [path];
    for (const file of files) {
      if (!/\.ya?ml$/.test(file) || seen.has(file)) continue;
      seen.add(file);
      const text = await reader.read(file);
      if (text === undefined || !mayHoldKind(text, kinds)) continue;
      for (const object of parse(text, file)) {
        if (isRecord(object) && typeof object.kind === 'string' && kinds.includes(object.kind)) found.push({ object, file });
      }
    }
  }
  return found;
}
