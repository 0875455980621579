/**
 * source-watcher where the tree needs it (spec 004: it "is in the component
 * list for one reason: it reconciles ArtifactGenerator", which slices the
 * repository into ExternalArtifacts). A Kustomization sourcing from
 * `kind: ExternalArtifact` waits for an artifact only source-watcher
 * produces, so a FluxInstance whose tree has one installs it.
 *
 * With source-watcher in the components, the operator also turns on
 * kustomize- and helm-controller's ExternalArtifact feature gate; without it
 * they do not accept the source kind at all (flux-operator v0.58.1,
 * internal/builder/components.go and profiles.go).
 *
 * source-watcher ships in the Flux distribution from 2.7.0
 * (manifests/bases/source-watcher in fluxcd/flux2: absent at v2.6.0, present
 * at v2.7.0), and the operator refuses it for an older Flux ("source-watcher
 * is only supported in Flux versions >= 2.7.0", components.go): a
 * distribution range admitting one is refused here, before a cluster's
 * FluxInstance fails to build.
 */
import { parseAllDocuments } from 'yaml';
import { ValidationError } from '../errors.js';
import { isRecord } from '../model/is-record.js';
import { fluxMinorFloor } from './flux-version-range.js';
import type { RepoReader } from './repo-reader.js';

export const SOURCE_WATCHER = 'source-watcher';

/** The first Flux minor (2.<minor>) whose distribution has source-watcher. */
export const SOURCE_WATCHER_SINCE_MINOR = 7;

/** Whether one of the YAML documents is a Flux Kustomization sourcing from an ExternalArtifact. */
export function sourcesFromExternalArtifact(yaml: string): boolean {
  let docs: unknown[];
  try {
    docs = parseAllDocuments(yaml).map((d) => d.toJS() as unknown);
  } catch {
    return false;
  }
  return docs.some(
    (doc) =>
      isRecord(doc) &&
      doc.kind === 'Kustomization' &&
      typeof doc.apiVersion === 'string' &&
      doc.apiVersion.startsWith('kustomize.toolkit.fluxcd.io/') &&
      isRecord(doc.spec) &&
      isRecord(doc.spec.sourceRef) &&
      doc.spec.sourceRef.kind === 'ExternalArtifact',
  );
}

/**
 * Whether the cluster's tree has a Kustomization sourcing from an
 * ExternalArtifact: among what the render writes (the layers' Kustomizations,
 * the cluster directory) or in the shared directories a catalog layer applies.
 * @param rendered - the YAML the render writes for the cluster
 * @param layerPaths - the repository paths the cluster's layers apply; those under `clusters/` are in `rendered`
 */
export async function treeSourcesFromExternalArtifact(reader: RepoReader, rendered: Iterable<string>, layerPaths: readonly string[]): Promise<boolean> {
  for (const text of rendered) if (sourcesFromExternalArtifact(text)) return true;
  for (const path of new Set(layerPaths)) {
    if (path.startsWith('clusters/') || path === '' || path === '.') continue;
    for (const file of await reader.list(path)) {
      if (!/\.ya?ml$/.test(file)) continue;
      if (sourcesFromExternalArtifact((await reader.read(file)) ?? '')) return true;
    }
  }
  return false;
}

/**
 * Refuses source-watcher with a distribution range that admits a Flux without it.
 * @param why - what asked for it, for the message
 * @throws ValidationError naming `fluxInstance.distribution.version`
 */
export function assertSourceWatcherAvailable(distributionVersion: string, why: string): void {
  const floor = fluxMinorFloor(distributionVersion);
  if (floor === undefined || floor >= SOURCE_WATCHER_SINCE_MINOR) return;
  throw new ValidationError([
    {
      field: 'fluxInstance.distribution.version',
      message: `${why}, and source-watcher ships with Flux from 2.${SOURCE_WATCHER_SINCE_MINOR}, but ${JSON.stringify(distributionVersion)} admits an older release, which the operator cannot install it from: raise the version range to 2.${SOURCE_WATCHER_SINCE_MINOR} or later`,
    },
  ]);
}
