/**
 * Whether a Flux Kustomization's spec.path is a path in this repository.
 * Flux reads it relative to the root of its sourceRef's artifact. verify can
 * only look at this repository, which is the artifact of the cluster's own
 * source (`flux-system/flux-system`, created by flux bootstrap or a
 * FluxInstance) and of any source the tree does not declare. Two kinds of
 * source are known to be something else:
 *
 * - an ExternalArtifact, assembled by another controller (Flux's
 *   ArtifactGenerator copies parts of the repository into it, relocated);
 * - a GitRepository, OCIRepository or Bucket the tree itself declares under
 *   another name: its own URL (a tenant's repository, an upstream OCI
 *   artifact of manifests).
 */
import { isRecord } from '../model/is-record.js';

const SOURCE_API = 'source.toolkit.fluxcd.io/';
const DECLARABLE_KINDS = new Set(['GitRepository', 'OCIRepository', 'Bucket']);
const ASSEMBLED_KINDS = new Set(['ExternalArtifact']);
/** The cluster's own source: this repository. */
const OWN_SOURCE = 'flux-system/flux-system';

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

/** The sources a cluster's tree declares, and what that says about each Kustomization's path. */
export class KustomizationSources {
  /** `Kind namespace/name`; `*` as the namespace of a source whose applier decides it. */
  readonly #declared = new Set<string>();

  /** Records the source objects among `objects`. */
  declare(objects: readonly unknown[]): void {
    for (const object of objects) {
      if (!isRecord(object) || typeof object.kind !== 'string' || !DECLARABLE_KINDS.has(object.kind)) continue;
      if (typeof object.apiVersion !== 'string' || !object.apiVersion.startsWith(SOURCE_API)) continue;
      const metadata = isRecord(object.metadata) ? object.metadata : {};
      if (typeof metadata.name !== 'string') continue;
      this.#declared.add(`${object.kind} ${stringOr(metadata.namespace, '*')}/${metadata.name}`);
    }
  }

  /**
   * @returns why the Kustomization's path is not in this repository (a note,
   *   as it cannot be checked), or undefined when it is
   */
  elsewhere(kustomization: Record<string, unknown>): string | undefined {
    const spec = isRecord(kustomization.spec) ? kustomization.spec : {};
    const metadata = isRecord(kustomization.metadata) ? kustomization.metadata : {};
    const ref = spec.sourceRef;
    if (!isRecord(ref) || typeof ref.kind !== 'string' || typeof ref.name !== 'string') return undefined;
    const namespace = stringOr(ref.namespace, stringOr(metadata.namespace, 'flux-system'));
    const source = `${ref.kind} ${namespace}/${ref.name}`;
    if (ASSEMBLED_KINDS.has(ref.kind)) return `is inside ${source}, which another controller assembles`;
    if (`${namespace}/${ref.name}` === OWN_SOURCE) return undefined;
    if (this.#declared.has(source) || this.#declared.has(`${ref.kind} */${ref.name}`)) {
      return `is inside ${source}, a source the tree declares with its own URL, not this repository`;
    }
    return undefined;
  }
}
