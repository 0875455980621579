/**
 * The `target` of a patch the generator writes for an object of the base (a
 * host patch of an Ingress, the identity patch of external-dns): its API group,
 * kind, name and namespace as the object has them, so kustomize selects that
 * object and no other. A target that selects nothing is skipped by kustomize
 * in silence; verify reports it (verify/patch-targets.ts).
 */
import { isRecord } from '../model/is-record.js';

/** A kustomize patch target, in the key order the generated files show. */
export interface PatchTarget {
  readonly group: string;
  readonly version?: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/**
 * The target selecting `object`. With `version`, its API version too: a host
 * patch follows the Ingress schema of that version; without, the patch stays
 * selected across an API version of the kind whose fields do not move.
 */
export function patchTargetOf(object: Record<string, unknown>, options: { readonly version: boolean }): PatchTarget {
  const apiVersion = String(object.apiVersion);
  const slash = apiVersion.indexOf('/');
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    ...(options.version ? { version: apiVersion.slice(slash + 1) } : {}),
    kind: String(object.kind),
    name: String(metadata.name),
    ...(typeof metadata.namespace === 'string' && metadata.namespace !== '' ? { namespace: metadata.namespace } : {}),
  };
}
