/**
 * Building a path the way kustomize-controller does: `kustomize build` where
 * the directory has a kustomization file, otherwise the kustomization Flux
 * generates for it (flux-generated-kustomization.ts): the other YAML files as
 * they are, plus each Kustomize root below built with kustomize. Each distinct
 * directory is built once per builder, however often it is asked for.
 */
import { ValidationError } from '../errors.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import { fluxGeneratedKustomization } from './flux-generated-kustomization.js';
import { isRecord } from '../model/is-record.js';
import type { KustomizeBuilder } from './kustomize-builder.js';
import { manifestDocuments } from './manifest-documents.js';

/** The objects a path builds to, or why it does not build. */
export type FluxBuild = { readonly ok: true; readonly objects: readonly Record<string, unknown>[] } | { readonly ok: false; readonly error: string };

/** What building reads the world through. */
export interface FluxPathBuildDeps {
  readonly reader: RepoReader;
  readonly builder: KustomizeBuilder;
  /** Absolute path of the working tree, for the builder. */
  readonly repoRoot: string;
  readonly signal?: AbortSignal;
}

/**
 * Creates a caching builder of repository directories.
 * Kustomize's own errors come back as `{ ok: false }`; anything else (kubectl missing, a timeout, an abort) is thrown.
 */
export function fluxPathBuilder(deps: FluxPathBuildDeps): (dir: string) => Promise<FluxBuild> {
  const { reader, builder, repoRoot, signal } = deps;
  const builds = new Map<string, Promise<FluxBuild>>();
  const build = (dir: string): Promise<FluxBuild> => {
    let pending = builds.get(dir);
    if (pending === undefined) {
      pending = (async (): Promise<FluxBuild> => {
        const generated = await fluxGeneratedKustomization(reader, dir);
        if (generated !== undefined) {
          const objects: Record<string, unknown>[] = [];
          for (const file of generated.files) {
            const parsed = manifestDocuments((await reader.read(file)) ?? '');
            if (parsed.error !== undefined) return { ok: false, error: `${file} is not valid YAML: ${parsed.error}` };
            for (const document of parsed.documents) {
              if (!isRecord(document) || typeof document.apiVersion !== 'string' || typeof document.kind !== 'string') {
                return {
                  ok: false,
                  error: `no kustomization file, and Flux cannot decode ${file} as Kubernetes objects (a document without apiVersion and kind)`,
                };
              }
              objects.push(document);
            }
          }
          for (const root of generated.roots) {
            const built = await build(root);
            if (!built.ok) return { ok: false, error: `accumulating resources from '${root}': ${built.error}` };
            objects.push(...built.objects);
          }
          return { ok: true, objects };
        }
        let text: string;
        try {
          text = await builder.build(repoRoot, dir, signal);
        } catch (error) {
          if (error instanceof ValidationError) return { ok: false, error: error.message };
          throw error;
        }
        const parsed = manifestDocuments(text, 'kustomize-output');
        if (parsed.error !== undefined) return { ok: false, error: `output is not valid YAML: ${parsed.error}` };
        return { ok: true, objects: parsed.documents.filter(isRecord) };
      })();
      builds.set(dir, pending);
    }
    return pending;
  };
  return build;
}
