/**
 * The inputs and outputs of a cluster render (`renderCluster`), apart from the
 * steps that compute them, so the edges that call it (runner, CLI, preview,
 * fleet) depend on the shapes without pulling in the render itself.
 */
import type { ClusterSpec } from '../model/cluster-spec.js';
import type { SealingCertificate } from '../sealing/sealing-certificate.js';
import type { FileTree } from './file-tree.js';
import type { FluxSyncAccess } from './flux-instance.js';
import type { ResolvedAttributes } from './layer-catalog.js';
import type { RandomBytes } from './random-string.js';
import type { CredentialOutcome, CredentialRotation } from './sealed-credentials.js';

/**
 * `infrastructure`: the layers without dependsOn (they bring up the Sealed Secrets
 * controller), nothing sealed. `all`: every layer, credentials sealed.
 */
export type RenderPass = 'infrastructure' | 'all';

/** Inputs of `renderCluster`. */
export interface RenderOptions {
  /** Unvalidated; checked here. */
  readonly cluster: ClusterSpec;
  /** @default 'development' */
  readonly reference?: string;
  readonly pass: RenderPass;
  /** The cluster's sealing certificate; required when anything must be sealed. */
  readonly certificate?: SealingCertificate;
  /** A caller-supplied `.dockerconfigjson` for the registry pull secret. */
  readonly registryAuth?: string;
  /**
   * The notification Provider's type (slack, msteams, generic) for this cluster.
   * @default the type of the Provider the cluster already has; none: no Provider or Alert
   */
  readonly notificationProvider?: string;
  /** The Provider's webhook address (https URL), a credential: sealed into scaffold.yaml's notification-address credential. */
  readonly notificationAddress?: string;
  /** Seal fresh credentials even where sealed ones exist: all (`true`) or the ones named. @default false */
  readonly rotateCredentials?: CredentialRotation;
  readonly random: RandomBytes;
  readonly generatorVersion: string;
  /** The newest commit that touched the platform (base/, the reference, scaffold.yaml). */
  readonly platformCommit?: string;
  /**
   * Write `flux/flux-instance.yaml`, a FluxInstance for the Flux Operator.
   * @default scaffold.yaml's `fluxInstance.enabled`, or whether the cluster already has one
   */
  readonly fluxInstance?: boolean;
  /** The URL the FluxInstance syncs from; required with one unless scaffold.yaml or the existing FluxInstance gives it. */
  readonly syncUrl?: string;
  /** The ref it syncs: `refs/heads/<branch>` for Git (default refs/heads/main), a tag for OCI (default latest). */
  readonly syncRef?: string;
  /** The Secret in flux-system the FluxInstance pulls a private repository with; default scaffold.yaml's, else the one the cluster has. */
  readonly syncSecret?: string;
}

/** One Flux Kustomization of the rendered cluster. */
export interface RenderedLayer {
  readonly name: string;
  readonly dependsOn: readonly string[];
  /** The repository path it applies, e.g. `clusters/eu-prod-1/apps` or `dns/route53`. */
  readonly path: string;
}

/** What a render produced. */
export interface RenderResult {
  readonly cluster: ClusterSpec;
  /** `clusters/<name>`: the one path Flux is pointed at. */
  readonly gitopsPath: string;
  /** The pass actually rendered: `all` when the cluster already had its full tree. */
  readonly pass: RenderPass;
  /** Every file under gitopsPath this render writes, by repository-relative path. */
  readonly tree: FileTree;
  /**
   * Repository-relative paths, sorted, that an earlier render wrote under
   * gitopsPath and this one no longer produces: the only files to delete.
   * Any other file there (flux bootstrap's flux-system/) is not the render's.
   */
  readonly stale: readonly string[];
  /** Top-level directories of gitopsPath that are Kustomize roots the render does not own, listed in its entry point (`flux-system`). */
  readonly foreignRoots: readonly string[];
  /** The layers written, dependencies first. */
  readonly layers: readonly RenderedLayer[];
  /** Catalog layers this cluster does not get (by its attributes), in catalog order; empty without a catalog. */
  readonly skippedLayers: readonly string[];
  /** The cluster's catalog attributes, given or defaulted; empty when the platform declares none. */
  readonly attributes: ResolvedAttributes;
  /** Whether `flux/flux-instance.yaml` was written. */
  readonly fluxInstance: boolean;
  /** With a FluxInstance: what its sync pulls and with which Secret (none: anonymously); `fluxSyncNote` says it. */
  readonly fluxSync?: FluxSyncAccess;
  readonly credentials: readonly CredentialOutcome[];
  /** With failure notifications: the Provider's type and name (flux-system); the address is only sealed. */
  readonly notifications?: { readonly provider: string; readonly name: string };
}
