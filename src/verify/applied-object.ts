/**
 * Objects as Flux applies them: the namespace a Kustomization puts an object
 * in (its targetNamespace wins over the object's own) and the `group/Kind`
 * findings name kinds by. Shared by the apply-order checks.
 */
import { isRecord } from '../model/is-record.js';

/** A Flux Kustomization's build output, substituted, as the simulation sees it. */
export interface AppliedKustomization {
  /** `namespace/name`. */
  readonly key: string;
  /** Where the Kustomization is written, for findings. */
  readonly file: string;
  /** The directory its spec.path builds. */
  readonly dir: string;
  readonly object: Record<string, unknown>;
  /** `namespace/name` of each Kustomization it depends on, as written. */
  readonly dependsOn: readonly string[];
  /** The Kustomization whose build applies this one, when it is not the root sync's. */
  readonly appliedBy?: string;
  /** The objects it applies, after postBuild substitution. */
  readonly objects: readonly Record<string, unknown>[];
}

export function metadataOf(object: unknown): Record<string, unknown> {
  return isRecord(object) && isRecord(object.metadata) ? object.metadata : {};
}

export function specOf(object: unknown): Record<string, unknown> {
  return isRecord(object) && isRecord(object.spec) ? object.spec : {};
}

export function nameOf(object: unknown): string {
  const name = metadataOf(object).name;
  return typeof name === 'string' ? name : '';
}

/** The API group of an apiVersion (`''` for the core group). */
export function groupOf(apiVersion: unknown): string {
  return typeof apiVersion === 'string' && apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

/** `group/Kind` of an object (`/ConfigMap` for the core group). */
export function groupKindOf(object: Record<string, unknown>): string {
  return `${groupOf(object.apiVersion)}/${String(object.kind ?? '')}`;
}

/** The namespace the object lands in when `kustomization` applies it; undefined when neither says. */
export function appliedNamespace(object: unknown, kustomization: unknown): string | undefined {
  const target = specOf(kustomization).targetNamespace;
  if (typeof target === 'string' && target !== '') return target;
  const own = metadataOf(object).namespace;
  return typeof own === 'string' && own !== '' ? own : undefined;
}

/** What must be done before `k` applies: its dependsOn, and the Kustomization that creates it. */
function predecessors(k: AppliedKustomization | undefined): string[] {
  return k === undefined ? [] : [...k.dependsOn, ...(k.appliedBy !== undefined ? [k.appliedBy] : [])];
}

/** Every Kustomization `key` waits for, directly or not (not itself). */
export function dependencyClosure(key: string, byKey: ReadonlyMap<string, AppliedKustomization>): Set<string> {
  const seen = new Set<string>();
  const stack = predecessors(byKey.get(key));
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next) || next === key) continue;
    seen.add(next);
    stack.push(...predecessors(byKey.get(next)));
  }
  return seen;
}

/** The HelmReleases among objects, with the chart name and the namespace the release installs into. */
export function helmReleasesOf(
  objects: readonly Record<string, unknown>[],
  kustomization: unknown,
): { object: Record<string, unknown>; chart: string; namespace?: string }[] {
  const out: { object: Record<string, unknown>; chart: string; namespace?: string }[] = [];
  for (const object of objects) {
    if (object.kind !== 'HelmRelease' || groupOf(object.apiVersion) !== 'helm.toolkit.fluxcd.io') continue;
    const spec = specOf(object);
    const chartSpec = isRecord(spec.chart) && isRecord(spec.chart.spec) ? spec.chart.spec : {};
    const chartRef = isRecord(spec.chartRef) ? spec.chartRef : {};
    const chart = typeof chartSpec.chart === 'string' ? chartSpec.chart : typeof chartRef.name === 'string' ? chartRef.name : nameOf(object);
    const target = typeof spec.targetNamespace === 'string' && spec.targetNamespace !== '' ? spec.targetNamespace : appliedNamespace(object, kustomization);
    out.push({ object, chart, ...(target !== undefined ? { namespace: target } : {}) });
  }
  return out;
}
