/**
 * A HelmRelease's values as helm-controller installs them: each `valuesFrom`
 * source in order (a `targetPath` sets one value, anything else merges a YAML
 * document), then `spec.values` over them, merged the way Helm coalesces.
 * Read from the cluster's built objects, so a check sees what the release sees.
 */
import { parse } from 'yaml';
import { isRecord } from '../model/is-record.js';
import { appliedNamespace, metadataOf, specOf, type AppliedKustomization } from './applied-object.js';

export type Values = Record<string, unknown>;

/** ConfigMaps and Secrets of the cluster by `Kind namespace/name`, their data as strings. */
export function valuesSources(kustomizations: readonly AppliedKustomization[]): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const k of kustomizations) {
    for (const object of k.objects) {
      if (object.apiVersion !== 'v1' || (object.kind !== 'ConfigMap' && object.kind !== 'Secret')) continue;
      const data: Record<string, string> = {};
      if (isRecord(object.data)) {
        for (const [key, value] of Object.entries(object.data)) {
          if (typeof value === 'string') data[key] = object.kind === 'Secret' ? Buffer.from(value, 'base64').toString('utf8') : value;
        }
      }
      if (object.kind === 'Secret' && isRecord(object.stringData)) {
        for (const [key, value] of Object.entries(object.stringData)) if (typeof value === 'string') data[key] = value;
      }
      out.set(`${object.kind} ${appliedNamespace(object, k.object) ?? ''}/${String(metadataOf(object).name ?? '')}`, data);
    }
  }
  return out;
}

/** The values helm-controller installs with: each valuesFrom in order, then spec.values over them. */
export function effectiveValues(release: Record<string, unknown>, namespace: string, sources: Map<string, Record<string, string>>): Values {
  const spec = specOf(release);
  let merged: Values = {};
  for (const reference of Array.isArray(spec.valuesFrom) ? spec.valuesFrom : []) {
    if (!isRecord(reference) || typeof reference.kind !== 'string' || typeof reference.name !== 'string') continue;
    const data = sources.get(`${reference.kind} ${namespace}/${reference.name}`);
    const text = data?.[typeof reference.valuesKey === 'string' ? reference.valuesKey : 'values.yaml'];
    if (text === undefined) continue;
    if (typeof reference.targetPath === 'string') {
      merged = mergeValues(merged, valuesAtPath(reference.targetPath, text));
      continue;
    }
    let parsed: unknown;
    try {
      parsed = parse(text);
    } catch {
      continue;
    }
    if (isRecord(parsed)) merged = mergeValues(merged, parsed);
  }
  return isRecord(spec.values) ? mergeValues(merged, spec.values) : merged;
}

/** Helm's coalescing: maps merge key by key, anything else is replaced. */
function mergeValues(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const before = out[key];
    out[key] = isRecord(before) && isRecord(value) ? mergeValues(before, value) : value;
  }
  return out;
}

function valuesAtPath(path: string, value: string): Values {
  return path
    .split('.')
    .reverse()
    .reduce<unknown>((inner, key) => ({ [key]: inner }), value) as Values;
}

export function valueAt(values: Values, path: string): unknown {
  let current: unknown = values;
  for (const key of path.split('.')) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}
