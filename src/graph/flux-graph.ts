/**
 * The Flux dependency graph of a cluster: its Kustomizations as nodes and
 * `spec.dependsOn` as edges. Pure: built from parsed objects, not from files.
 */
import { isRecord } from '../model/is-record.js';

/** A reference to a Flux object, `namespace/name`. */
export interface ObjectRef {
  readonly name: string;
  readonly namespace: string;
}

/** One health check entry of a Kustomization, as written in its spec. */
export interface HealthCheckRef {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** A Flux Kustomization as the graph sees it. */
export interface FluxNode extends ObjectRef {
  /** `spec.path`, as written (e.g. `./clusters/eu-prod-1/apps`). */
  readonly path: string;
  readonly dependsOn: readonly ObjectRef[];
  readonly healthChecks: readonly HealthCheckRef[];
  readonly wait: boolean;
  /**
   * `spec.suspend: true`: Flux applies nothing of it until it is resumed (an
   * opt-in layer this cluster has not enabled), which is neither failed nor
   * pending; a Kustomization depending on it waits forever.
   */
  readonly suspended?: boolean;
  /** Repository-relative file the object was found in, when known. */
  readonly file?: string;
}

/** Nodes plus a lookup by `namespace/name`. */
export interface FluxGraph {
  readonly nodes: readonly FluxNode[];
}

/** The `namespace/name` key of a reference. */
export function refKey(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

const KUSTOMIZATION_API = 'kustomize.toolkit.fluxcd.io/';

/**
 * Builds the graph from Kubernetes objects, keeping only Flux Kustomizations.
 * A dependsOn without a namespace means the dependent's own namespace, as in Flux.
 *
 * @param objects - parsed manifests, each optionally paired with the file it came from
 */
export function fluxGraphOf(objects: Iterable<{ object: unknown; file?: string }>): FluxGraph {
  const nodes: FluxNode[] = [];
  for (const { object, file } of objects) {
    if (!isRecord(object) || object.kind !== 'Kustomization') continue;
    if (typeof object.apiVersion !== 'string' || !object.apiVersion.startsWith(KUSTOMIZATION_API)) continue;
    const metadata = isRecord(object.metadata) ? object.metadata : {};
    const spec = isRecord(object.spec) ? object.spec : {};
    const name = String(metadata.name ?? '');
    const namespace = String(metadata.namespace ?? 'flux-system');
    const dependsOn = (Array.isArray(spec.dependsOn) ? spec.dependsOn : [])
      .filter(isRecord)
      .map((d) => ({ name: String(d.name ?? ''), namespace: String(d.namespace ?? namespace) }));
    const healthChecks = (Array.isArray(spec.healthChecks) ? spec.healthChecks : []).filter(isRecord).map((h) => ({
      ...(typeof h.apiVersion === 'string' ? { apiVersion: h.apiVersion } : {}),
      kind: String(h.kind ?? ''),
      name: String(h.name ?? ''),
      ...(typeof h.namespace === 'string' ? { namespace: h.namespace } : {}),
    }));
    nodes.push({
      name,
      namespace,
      path: String(spec.path ?? ''),
      dependsOn,
      healthChecks,
      wait: spec.wait === true,
      ...(spec.suspend === true ? { suspended: true } : {}),
      ...(file !== undefined ? { file } : {}),
    });
  }
  // Code-unit order, not localeCompare: the order must not depend on the ICU
  // locale of the machine, or two renders of one tree would differ.
  nodes.sort((a, b) => {
    const ka = refKey(a);
    const kb = refKey(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  return { nodes };
}
