/**
 * How findings name a Kubernetes object: `Kind namespace/name`, or `Kind name`
 * for cluster-scoped objects (and objects whose namespace is set later).
 */
import { isRecord } from '../model/is-record.js';

/** `Deployment tcr/web`, `Namespace tcr`, or `object` when the value has no kind. */
export function objectLabel(object: unknown): string {
  if (!isRecord(object)) return 'object';
  const kind = typeof object.kind === 'string' && object.kind !== '' ? object.kind : 'object';
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const name = typeof metadata.name === 'string' && metadata.name !== '' ? metadata.name : '(unnamed)';
  return typeof metadata.namespace === 'string' && metadata.namespace !== '' ? `${kind} ${metadata.namespace}/${name}` : `${kind} ${name}`;
}
