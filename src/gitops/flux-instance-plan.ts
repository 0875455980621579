/**
 * Whether a render writes a FluxInstance (Flux managed by the Flux Operator)
 * and what it syncs. A re-render keeps what the cluster was given before, so
 * a cluster once moved to the Flux Operator is never moved back by omission.
 */
import { ValidationError } from '../errors.js';
import { renderFluxOperatorRelease } from './flux-operator-release.js';
import { FLUX_INSTANCE_FILE, renderFluxInstance, type FluxSyncAccess, type SyncKind } from './flux-instance.js';
import { fluxInstanceSpecSchema, type PlatformDescriptor } from './platform-descriptor.js';
import type { ReferenceEnvironment } from './reference-environment.js';
import type { RenderOptions } from './render-types.js';
import { parseYamlDocuments } from './yaml.js';

/** The FluxInstance's file as `flux/kustomization.yaml` lists it. */
export const FLUX_INSTANCE_RESOURCE = FLUX_INSTANCE_FILE.slice('flux/'.length);

/** What `flux bootstrap` writes into the cluster path: Flux's controllers, which its sync keeps applying. */
export const FLUX_BOOTSTRAP_COMPONENTS = 'flux-system/gotk-components.yaml';

/**
 * Why a cluster path may not hold both a FluxInstance and flux bootstrap's
 * flux-system/, and how to move from one to the other: the Flux Operator's
 * migration (fluxcd.control-plane.io/operator/flux-bootstrap-migration) takes
 * over the running controllers first and removes flux-system/ from Git last.
 * Shared by the render that refuses to write it and verify that refuses it.
 */
export function fluxOwnerConflict(clusterDir: string): string {
  return (
    `a FluxInstance beside flux bootstrap's ${clusterDir}/flux-system/ (gotk-components.yaml): the Flux Operator and the bootstrap sync both manage the same controllers and keep undoing each other's changes. Keep one owner. ` +
    'To move to the Flux Operator: (1) install it into flux-system (helm install flux-operator oci://ghcr.io/controlplaneio-fluxcd/charts/flux-operator --namespace flux-system); ' +
    `(2) kubectl apply the FluxInstance, with the sync of ${clusterDir}/flux-system/gotk-sync.yaml (same URL, ref, path ${clusterDir}, pullSecret flux-system), and wait until it is Ready; ` +
    '(3) check that `flux trace kustomization flux-system -n flux-system` reports it is no longer managed by the bootstrap sync, so nothing prunes the controllers; ' +
    `(4) only then delete ${clusterDir}/flux-system/ from Git and from the entry point's resources, and commit the FluxInstance. To stay with flux bootstrap, leave the FluxInstance out`
  );
}

/** A FluxInstance the render writes. */
export interface PlannedFluxInstance {
  readonly yaml: string;
  /** The operator's self-upgrading HelmRelease (flux-operator-release.ts), unless scaffold.yaml turns it off. */
  readonly operatorYaml?: string;
  /** The kind of source its sync creates: layers reading `flux-system` follow it. */
  readonly syncKind: SyncKind;
  /** What it pulls and with which Secret, for the render to say. */
  readonly sync: FluxSyncAccess;
}

/** The sync URL and ref of a FluxInstance the cluster already has, to keep it on a re-render. */
function existingFluxInstance(text: string | undefined): { url?: string; ref?: string; pullSecret?: string } | undefined {
  if (text === undefined) return undefined;
  let objects: unknown[];
  try {
    objects = parseYamlDocuments(text, FLUX_INSTANCE_FILE);
  } catch {
    return {};
  }
  const sync = (objects[0] as { spec?: { sync?: { url?: unknown; ref?: unknown; pullSecret?: unknown } } } | undefined)?.spec?.sync;
  return {
    ...(typeof sync?.url === 'string' ? { url: sync.url } : {}),
    ...(typeof sync?.ref === 'string' ? { ref: sync.ref } : {}),
    ...(typeof sync?.pullSecret === 'string' ? { pullSecret: sync.pullSecret } : {}),
  };
}

/**
 * The FluxInstance to write: when asked for, when scaffold.yaml enables it, or
 * when the cluster (else the reference, the template) already has one.
 * @param bootstrapped - the cluster path holds flux bootstrap's flux-system/ (gotk-components.yaml)
 * @param externalArtifacts - a Kustomization of the cluster's tree sources from an ExternalArtifact (source-watcher.ts)
 * @throws ValidationError when one is wanted and nothing gives its sync URL, or
 *   beside flux bootstrap's flux-system/ ({@link fluxOwnerConflict})
 */
export function planFluxInstance(
  options: Pick<RenderOptions, 'fluxInstance' | 'syncUrl' | 'syncRef' | 'syncSecret'>,
  descriptor: PlatformDescriptor,
  reference: ReferenceEnvironment,
  clusterName: string,
  existingText: string | undefined,
  infraProvider: string | undefined,
  bootstrapped = false,
  externalArtifacts = false,
): PlannedFluxInstance | undefined {
  const before =
    existingFluxInstance(existingText) ??
    (reference.fluxResources.some((r) => r.replace(/^\.\//, '') === FLUX_INSTANCE_RESOURCE)
      ? existingFluxInstance(reference.files.get(FLUX_INSTANCE_FILE))
      : undefined);
  const wantsInstance = options.fluxInstance ?? (descriptor.fluxInstance?.enabled === true || before !== undefined);
  if (!wantsInstance) {
    if (descriptor.fluxInstance?.sharding !== undefined) {
      throw new ValidationError([
        {
          field: 'fluxInstance.sharding',
          message: `cluster ${clusterName} is rendered without a FluxInstance, and only the Flux Operator runs shard controllers: the layers labelled for a shard would be reconciled by nobody. Render it with the FluxInstance, or drop fluxInstance.sharding`,
        },
      ]);
    }
    return undefined;
  }
  if (bootstrapped) throw new ValidationError([{ field: 'flux-instance', message: fluxOwnerConflict(`clusters/${clusterName}`) }]);
  assertCniBeforeFlux(descriptor, infraProvider);
  const syncUrl = options.syncUrl ?? descriptor.fluxInstance?.sync.url ?? before?.url;
  if (syncUrl === undefined) {
    throw new ValidationError([
      {
        field: 'sync-url',
        message: 'a FluxInstance syncs the cluster from its repository: give the URL Flux pulls from (--sync-url, or fluxInstance.sync.url in scaffold.yaml)',
      },
    ]);
  }
  // A ref belongs to the URL it was given with: a new URL starts from its own default.
  const syncRef = options.syncRef ?? (options.syncUrl === undefined ? before?.ref : undefined);
  const pullSecret = options.syncSecret ?? descriptor.fluxInstance?.sync.pullSecret ?? before?.pullSecret;
  const spec = descriptor.fluxInstance ?? fluxInstanceSpecSchema.parse({});
  const instance = renderFluxInstance(spec, {
    clusterName,
    syncUrl,
    ...(syncRef !== undefined ? { syncRef } : {}),
    ...(pullSecret !== undefined ? { pullSecret } : {}),
    externalArtifacts,
  });
  return spec.operator.upgrade ? { ...instance, operatorYaml: renderFluxOperatorRelease(spec.operator.version, clusterName) } : instance;
}

/**
 * A FluxInstance needs Pods to run before anything it syncs does: the Flux
 * Operator and the controllers it installs are ordinary Pods, which stay
 * Pending on nodes without a CNI. A row whose CNI only comes from the bootstrap
 * layer (`attributes.infra_provider.platform.<value>.cni: bootstrap`) can never
 * get there, so it is refused here rather than pushed to a cluster that stalls.
 * @throws ValidationError naming the infrastructure provider
 */
function assertCniBeforeFlux(descriptor: PlatformDescriptor, infraProvider: string | undefined): void {
  if (infraProvider === undefined) return;
  if (descriptor.attributes?.infra_provider?.platform[infraProvider]?.cni !== 'bootstrap') return;
  throw new ValidationError([
    {
      field: 'flux-instance',
      message:
        `infrastructure provider ${infraProvider} has no CNI until Flux runs its bootstrap layer (scaffold.yaml attributes.infra_provider.platform.${infraProvider}.cni: bootstrap), ` +
        'but the Flux Operator and its controllers are Pods that need a CNI to start: nothing would ever run. ' +
        "Create the cluster with its CNI installed (a Helm chart under the release name and namespace of the bootstrap layer's HelmRelease, which then upgrades it in place) and set cni: cluster",
    },
  ]);
}
