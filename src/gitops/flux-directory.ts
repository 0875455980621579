/**
 * The render's `flux/` directory: one Flux Kustomization per included layer,
 * the cluster-config ConfigMap, the FluxInstance when there is one, whatever
 * else the reference lists there, and the kustomization.yaml listing them.
 */
import type { ClusterSpec } from '../model/cluster-spec.js';
import { renderClusterConfig } from './cluster-config-map.js';
import { rewriteIdentity } from './cluster-identity.js';
import { FLUX_INSTANCE_FILE } from './flux-instance.js';
import { FLUX_INSTANCE_RESOURCE, type PlannedFluxInstance } from './flux-instance-plan.js';
import { FLUX_OPERATOR_FILE } from './flux-operator-release.js';
import type { PlannedNotifications } from './flux-alerts.js';
import { NOTIFICATION_FILE } from './notification-schema.js';

const FLUX_OPERATOR_RESOURCE = FLUX_OPERATOR_FILE.slice('flux/'.length);
const NOTIFICATION_RESOURCE = NOTIFICATION_FILE.slice('flux/'.length);
import type { ResolvedAttributes } from './layer-catalog.js';
import type { PlannedLayer } from './planned-layers.js';
import type { PlatformDescriptor } from './platform-descriptor.js';
import type { ReferenceEnvironment } from './reference-environment.js';
import { toYaml } from './yaml.js';

/** Inputs of {@link renderFluxDirectory}. */
export interface FluxDirectoryInput {
  readonly reference: ReferenceEnvironment;
  readonly cluster: ClusterSpec;
  readonly attributes: ResolvedAttributes;
  readonly descriptor: PlatformDescriptor;
  /** Whether the layers come from the platform's catalog rather than the reference. */
  readonly fromCatalog: boolean;
  /** Every layer the cluster gets, and those this pass renders. */
  readonly layers: readonly PlannedLayer[];
  readonly included: readonly PlannedLayer[];
  readonly fluxInstance: PlannedFluxInstance | undefined;
  /** Whether Flux's own credentials are sealed into flux/sealed/. */
  readonly fluxSealed: boolean;
  /** The failure notifications' Provider and Alert, when the cluster has them. */
  readonly notifications?: PlannedNotifications | undefined;
  /** Whether an earlier step already wrote this file (relative to the cluster directory). */
  readonly written: (rel: string) => boolean;
}

/** The files of flux/, as [path relative to the cluster directory, content], kustomization.yaml last. */
export function renderFluxDirectory(input: FluxDirectoryInput): [string, string][] {
  const { reference, cluster, fromCatalog, layers, included, fluxInstance, fluxSealed } = input;
  const files = new Map<string, string>();
  for (const layer of included) files.set(`flux/${layer.file}`, layer.render());
  files.set(`flux/${reference.configMapFile}`, renderClusterConfig(reference, cluster, input.attributes, input.descriptor, fluxInstance?.syncKind));
  if (fluxInstance) files.set(FLUX_INSTANCE_FILE, fluxInstance.yaml);
  if (fluxInstance?.operatorYaml !== undefined) files.set(FLUX_OPERATOR_FILE, fluxInstance.operatorYaml);
  if (input.notifications !== undefined) files.set(NOTIFICATION_FILE, input.notifications.yaml);

  // What flux/kustomization.yaml lists. Without a catalog: the reference's order,
  // minus the layers not rendered, plus whatever it lacks. With one: the
  // ConfigMap, the generated Flux objects, what else the reference lists, then
  // the layers in order (the reference's own Kustomizations are its selection).
  const operator = fluxInstance?.operatorYaml !== undefined;
  const generatedFlux = [
    ...(fluxInstance ? [FLUX_INSTANCE_RESOURCE] : []),
    ...(operator ? [FLUX_OPERATOR_RESOURCE] : []),
    ...(fluxSealed ? ['sealed'] : []),
    ...(input.notifications !== undefined ? [NOTIFICATION_RESOURCE] : []),
  ];
  const notRendered = new Set(fromCatalog ? reference.fluxKustomizationFiles : layers.filter((l) => !included.includes(l)).map((l) => l.file));
  const listed = [...new Set(reference.fluxResources.map((r) => r.replace(/^\.\//, '').replace(/\/+$/, '')))]
    .filter((r) => !notRendered.has(r))
    // Generated when they are rendered, never carried over.
    .filter(
      (r) =>
        (r !== 'sealed' || fluxSealed) &&
        (r !== FLUX_INSTANCE_RESOURCE || fluxInstance !== undefined) &&
        (r !== FLUX_OPERATOR_RESOURCE || operator) &&
        (r !== NOTIFICATION_RESOURCE || input.notifications !== undefined),
    )
    .filter((r) => !fromCatalog || (r !== reference.configMapFile && !generatedFlux.includes(r)));
  const fluxResources = fromCatalog
    ? [reference.configMapFile, ...generatedFlux, ...listed, ...included.map((l) => l.file)]
    : [...listed, ...[reference.configMapFile, ...included.map((l) => l.file), ...generatedFlux].filter((f) => !listed.includes(f))];
  for (const rel of listed) {
    const text = reference.files.get(`flux/${rel}`);
    if (text !== undefined && !files.has(`flux/${rel}`) && !input.written(`flux/${rel}`))
      files.set(`flux/${rel}`, rewriteIdentity(text, reference.identity, cluster));
  }
  files.set(
    'flux/kustomization.yaml',
    toYaml(
      { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: fluxResources },
      `Flux objects of cluster ${cluster.name}: its cluster-config and one Kustomization per layer. Generated by gitops-scaffolder.`,
    ),
  );
  return [...files];
}
