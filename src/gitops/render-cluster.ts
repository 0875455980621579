/**
 * Renders a new cluster's Flux tree, `clusters/<name>/`, from the reference
 * environment: identity regenerated, overlays carried over, credentials sealed.
 * Pure apart from reading the repository through the RepoReader port: the result
 * is a FileTree for an edge to write.
 *
 * This file is the order of the steps; each step is its own module: the layers
 * (planned-layers), the FluxInstance (flux-instance-plan), the credentials
 * (cluster-credentials), the overlays (layer-overlays), flux/ (flux-directory),
 * ownership and the entry point (cluster-entry-point).
 */
import { ValidationError } from '../errors.js';
import { CLUSTER_ATTRIBUTES, parseClusterSpec, parseReferenceName, type ClusterSpec } from '../model/cluster-spec.js';
import { sealClusterCredentials } from './cluster-credentials.js';
import { renderEntryPoint } from './cluster-entry-point.js';
import { identityLeftovers, rewriteIdentity } from './cluster-identity.js';
import { planNotifications } from './flux-alerts.js';
import { renderFluxDirectory } from './flux-directory.js';
import { FLUX_BOOTSTRAP_COMPONENTS, planFluxInstance } from './flux-instance-plan.js';
import { assertShardLayers, labelForShard, shardOfLayer } from './flux-sharding.js';
import { treeSourcesFromExternalArtifact } from './source-watcher.js';
import { isCarriedOver } from './generated-paths.js';
import { resolveClusterAttributes } from './layer-catalog.js';
import { renderLayerOverlays } from './layer-overlays.js';
import { catalogLayers, referenceLayers, type PlannedLayer } from './planned-layers.js';
import { enabledOptionalLayers, markOptionalLayer } from './optional-layers.js';
import { planPreviews } from './preview-environments.js';
import { PREVIEWS_LAYER } from './previews-schema.js';
import { FLUX_INSTANCE_FILE } from './flux-instance.js';
import { NOTIFICATION_FILE } from './notification-schema.js';
import { FLUX_CREDENTIAL_LAYER, PLATFORM_DESCRIPTOR_PATH, parsePlatformDescriptor } from './platform-descriptor.js';
import { parseProvenance, renderProvenance, PROVENANCE_FILE } from './provenance.js';
import { loadReferenceEnvironment } from './reference-environment.js';
import type { RepoReader } from './repo-reader.js';
import type { RenderOptions, RenderPass, RenderResult } from './render-types.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

export type { RenderOptions, RenderPass, RenderResult, RenderedLayer } from './render-types.js';

/**
 * Renders `clusters/<name>/` for one pass.
 *
 * The layers are the platform's layer catalog's, selected by the cluster's
 * attributes, when scaffold.yaml has one; otherwise the reference
 * environment's Flux Kustomizations.
 *
 * Re-rendering converges: the same inputs give the same bytes, existing sealed
 * credentials are kept, and asking for the infrastructure pass on a cluster that
 * already has its full tree renders the full tree (never takes layers away).
 * Attributes and a FluxInstance the cluster was rendered with are kept when
 * not given again.
 *
 * @throws ValidationError for a bad cluster spec or attribute, a malformed reference
 *   or descriptor, a catalog layer the repository lacks, credentials to seal
 *   without a certificate, or a FluxInstance without a sync URL
 * @throws NotFoundError when the reference environment does not exist
 */
export async function renderCluster(reader: RepoReader, options: RenderOptions): Promise<RenderResult> {
  const cluster = parseClusterSpec(options.cluster);
  const referenceName = parseReferenceName(options.reference ?? REFERENCE_ENVIRONMENT);
  if (cluster.name === referenceName) {
    throw new ValidationError([
      { field: 'cluster.name', message: `must differ from the reference environment ${JSON.stringify(referenceName)}, which is the template` },
    ]);
  }
  const descriptor = parsePlatformDescriptor(await reader.read(PLATFORM_DESCRIPTOR_PATH));
  const fromCatalog = descriptor.layers !== undefined;
  const reference = await loadReferenceEnvironment(reader, referenceName, { layers: fromCatalog ? 'catalog' : 'flux' });
  const gitopsPath = `clusters/${cluster.name}`;

  const existing = new Map<string, string>();
  for (const path of await reader.list(gitopsPath)) existing.set(path.slice(gitopsPath.length + 1), (await reader.read(path)) ?? '');
  const previous = parseProvenance(existing.get(PROVENANCE_FILE));
  const pass: RenderPass = options.pass === 'infrastructure' && previous?.pass === 'all' ? 'all' : options.pass;
  const attributes = resolveClusterAttributes(descriptor.attributes, cluster, previous?.cluster ?? {});
  const resolvedCluster: { -readonly [K in keyof ClusterSpec]: ClusterSpec[K] } = {
    ...cluster,
    ...Object.fromEntries(CLUSTER_ATTRIBUTES.flatMap((name) => (attributes[name] !== undefined ? [[name, attributes[name]]] : []))),
  };

  const planInstance = (externalArtifacts: boolean) =>
    planFluxInstance(
      options,
      descriptor,
      reference,
      cluster.name,
      existing.get(FLUX_INSTANCE_FILE),
      attributes.infra_provider,
      existing.has(FLUX_BOOTSTRAP_COMPONENTS),
      externalArtifacts,
    );
  let fluxInstance = planInstance(false);
  const syncKind = fluxInstance?.syncKind;

  const planned = fromCatalog
    ? await catalogLayers(reader, descriptor, reference, cluster, attributes, syncKind)
    : { layers: referenceLayers(reference, cluster, syncKind), skipped: [] as readonly string[] };
  // Opt-in layers: the optional ones of the catalog and, where the platform offers them, previews.
  const previewsOffered = descriptor.previews?.enabled === true;
  const enabled = enabledOptionalLayers({
    layers: [
      ...planned.layers.map((l) => ({ name: l.name, dependsOn: l.dependsOn, optional: l.optional === true })),
      ...(previewsOffered ? [{ name: PREVIEWS_LAYER, dependsOn: [], optional: true }] : []),
    ],
    skipped: planned.skipped,
    requested: cluster.enable_layers,
    previous: (previous?.cluster as { enable_layers?: unknown } | undefined)?.enable_layers,
  });
  const previews =
    previewsOffered && enabled.has(PREVIEWS_LAYER)
      ? await planPreviews({
          spec: descriptor.previews!,
          reader,
          clusterName: cluster.name,
          fluxInstance,
          bootstrapLayer: planned.layers.some((l) => l.name === descriptor.bootstrap?.layer) ? descriptor.bootstrap!.layer : undefined,
        })
      : undefined;
  const sharding = fluxInstance !== undefined ? descriptor.fluxInstance?.sharding : undefined;
  if (sharding !== undefined)
    assertShardLayers(sharding, [...planned.layers.map((l) => l.name), ...planned.skipped, ...(previewsOffered ? [PREVIEWS_LAYER] : [])]);
  const layers: PlannedLayer[] = [...planned.layers, ...(previews ? [previews.layer] : [])]
    .map((l) => (l.optional === true ? { ...l, render: () => markOptionalLayer(l.render(), enabled.has(l.name)) } : l))
    .map((l) => {
      const shard = sharding !== undefined ? shardOfLayer(sharding, l.name) : undefined;
      return shard !== undefined ? { ...l, render: () => labelForShard(l.render(), sharding!.key, shard) } : l;
    });
  delete resolvedCluster.enable_layers;
  if (enabled.size > 0) resolvedCluster.enable_layers = [...enabled].sort();
  const included = layers.filter((l) => pass === 'all' || l.dependsOn.length === 0);
  // A layer of the first pass runs before the Sealed Secrets controller: nothing sealed exists yet.
  for (const layer of layers.filter((l) => l.dependsOn.length === 0 && l.sealedSources.length > 0)) {
    throw new ValidationError([
      {
        field: `${PLATFORM_DESCRIPTOR_PATH}.layers.${layer.name}.substituteFrom`,
        message: `layer ${layer.name} has no dependsOn, so it is applied in the first pass, before the Sealed Secrets controller can unseal Secret ${layer.sealedSources.join(', ')}: it cannot substitute from it`,
      },
    ]);
  }
  const overlayDir = (l: PlannedLayer): string[] => (l.dir !== undefined ? [l.dir] : []);
  const includedDirs = new Set(included.flatMap(overlayDir));
  const layerDirs = new Set(fromCatalog ? (descriptor.layers ?? []).flatMap((l) => (l.overlay !== undefined ? [l.overlay] : [])) : layers.flatMap(overlayDir));

  // Paths relative to the cluster directory, in the order the steps write them.
  const out = new Map<string, string>();
  const put = (rel: string, content: string) => out.set(rel, content);

  for (const [rel, text] of reference.files) {
    if (!isCarriedOver(rel)) continue;
    const top = rel.split('/')[0]!;
    if (rel.includes('/') && layerDirs.has(top) && !includedDirs.has(top)) continue;
    // File names follow their content: a reference to `development.yaml` is rewritten, so is the file.
    put(rewriteIdentity(rel, reference.identity, cluster), rewriteIdentity(text, reference.identity, cluster));
  }

  const sealed = sealClusterCredentials({ descriptor, pass, cluster, layerDirs, includedDirs, existing, options });
  for (const [rel, content] of sealed.files) put(rel, content);
  const overlays = await renderLayerOverlays({
    reader,
    reference,
    cluster,
    included,
    credentials: sealed.credentials,
    carriedOver: (rel) => out.get(rel),
  });
  for (const [rel, content] of overlays) put(rel, content);
  if (previews && included.some((l) => l.name === PREVIEWS_LAYER)) for (const [rel, content] of previews.files) put(rel, content);
  const fluxSealed = sealed.credentials.some((c) => c.layer === FLUX_CREDENTIAL_LAYER);
  const notifications = planNotifications({
    descriptor,
    pass,
    clusterName: cluster.name,
    choice: {
      ...(options.notificationProvider !== undefined ? { provider: options.notificationProvider } : {}),
      ...(options.notificationAddress !== undefined ? { address: options.notificationAddress } : {}),
    },
    existing: existing.get(NOTIFICATION_FILE),
    outcomes: sealed.outcomes,
    fluxInstance: fluxInstance !== undefined,
  });
  // source-watcher where a Kustomization of the tree sources from an ExternalArtifact (source-watcher.ts).
  if (
    fluxInstance !== undefined &&
    (await treeSourcesFromExternalArtifact(
      reader,
      [...included.map((l) => l.render()), ...out.values()],
      included.map((l) => l.path.replace(/^\.\//, '')),
    ))
  ) {
    fluxInstance = planInstance(true);
  }
  const fluxFiles = renderFluxDirectory({
    reference,
    cluster,
    attributes,
    descriptor,
    fromCatalog,
    layers,
    included,
    fluxInstance,
    fluxSealed,
    notifications,
    written: (rel) => out.has(rel),
  });
  for (const [rel, content] of fluxFiles) put(rel, content);

  const produced = new Set([...out.keys(), 'kustomization.yaml', PROVENANCE_FILE]);
  const entryPoint = renderEntryPoint({
    clusterName: cluster.name,
    gitopsPath,
    existing: existing.keys(),
    produced,
    previous,
    referencePaths: new Set([...reference.files.keys()].map((rel) => rewriteIdentity(rel, reference.identity, cluster))),
  });
  put('kustomization.yaml', entryPoint.yaml);
  put(
    PROVENANCE_FILE,
    renderProvenance({
      generatorVersion: options.generatorVersion,
      reference: referenceName,
      platformCommit: options.platformCommit ?? 'unknown',
      pass,
      cluster: resolvedCluster,
      files: [...produced],
    }),
  );

  // Nothing of the reference's identity may be left behind. Sealed files are
  // generated whole (and ciphertext could match by chance), and provenance names
  // the reference on purpose, so both are skipped.
  const tree = new Map([...out].map(([rel, content]) => [`${gitopsPath}/${rel}`, content] as const).sort(([a], [b]) => a.localeCompare(b)));
  for (const [path, content] of tree) {
    if (/\/sealed\/sealed-[^/]+\.yaml$/.test(path) || path === `${gitopsPath}/${PROVENANCE_FILE}`) continue;
    const leftovers = identityLeftovers(`${path}\n${content}`, reference.identity, cluster);
    if (leftovers.length > 0) {
      throw new ValidationError([
        { field: path, message: `still contains the reference environment's ${leftovers.map((l) => JSON.stringify(l)).join(', ')} after rendering` },
      ]);
    }
  }

  return {
    cluster: resolvedCluster,
    gitopsPath,
    pass,
    tree,
    stale: entryPoint.stale.map((rel) => `${gitopsPath}/${rel}`),
    foreignRoots: entryPoint.foreignRoots,
    layers: included.map((l) => ({ name: l.name, dependsOn: l.dependsOn, path: l.path })),
    skippedLayers: planned.skipped,
    attributes,
    fluxInstance: fluxInstance !== undefined,
    ...(fluxInstance !== undefined ? { fluxSync: fluxInstance.sync } : {}),
    credentials: sealed.outcomes,
    ...(notifications !== undefined ? { notifications: { provider: notifications.provider, name: notifications.name } } : {}),
  };
}
