/**
 * Kinds applied before they exist. kustomize-controller dry-runs every object
 * of a Kustomization before applying any; a custom resource whose CRD is not
 * on the cluster yet fails that dry run, and the whole Kustomization with it.
 * A CRD is there in time when it is built in, applied by the same
 * Kustomization (Flux applies CRDs first), or installed by a Kustomization it
 * depends on, directly or not: as a CRD object, or by a HelmRelease of a
 * chart scaffold.yaml declares (charts cannot be rendered offline). A chart's
 * CRDs count only when that Kustomization waits for its release (`spec.wait:
 * true`, or a healthCheck naming it) and is reached through dependsOn: Flux
 * calls a Kustomization Ready once applied, while helm-controller installs the
 * chart later. The root sync runs before every layer, so it may hold only
 * kinds that exist already.
 */
import type { PlatformPrerequisites } from '../gitops/platform-prerequisites.js';
import { appliedNamespace, dependencyClosure, groupKindOf, groupOf, helmReleasesOf, nameOf, specOf, type AppliedKustomization } from './applied-object.js';
import { isFluxGroup, isKubernetesGroup } from './builtin-kinds.js';
import type { Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';
import { objectLabel } from './object-label.js';

/** What the check reads. */
export interface CrdAvailabilityInput {
  readonly clusterDir: string;
  /** What the root sync applies; undefined when the root does not build. */
  readonly rootObjects?: readonly Record<string, unknown>[];
  readonly kustomizations: readonly AppliedKustomization[];
  readonly prerequisites: PlatformPrerequisites;
}

/** `group/Kind` of each CRD object among objects. */
export function crdObjectsOf(objects: readonly Record<string, unknown>[]): Set<string> {
  const out = new Set<string>();
  for (const object of objects) {
    if (object.kind !== 'CustomResourceDefinition' || groupOf(object.apiVersion) !== 'apiextensions.k8s.io') continue;
    const spec = specOf(object);
    const names = isRecord(spec.names) ? spec.names : {};
    if (typeof spec.group === 'string' && typeof names.kind === 'string') out.add(`${spec.group}/${names.kind}`);
  }
  return out;
}

/**
 * `group/Kind`s the Kustomization installs through something it applies and
 * must wait for: a HelmRelease of a declared chart, or a Flux Kustomization of
 * another artifact that scaffold.yaml `artifacts` declares. Each maps to that object.
 */
export function deferredInstallersOf(kustomization: AppliedKustomization, prerequisites: PlatformPrerequisites): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const release of helmReleasesOf(kustomization.objects, kustomization.object)) {
    for (const crd of prerequisites.charts?.find((c) => c.chart === release.chart)?.crds ?? []) if (!out.has(crd)) out.set(crd, release.object);
  }
  for (const object of kustomization.objects) {
    if (object.kind !== 'Kustomization' || groupOf(object.apiVersion) !== 'kustomize.toolkit.fluxcd.io') continue;
    for (const crd of prerequisites.artifacts?.find((a) => a.kustomization === nameOf(object))?.crds ?? []) if (!out.has(crd)) out.set(crd, object);
  }
  return out;
}

/** {@link deferredInstallersOf}, each installer as its label. */
export function deferredCrdsOf(kustomization: AppliedKustomization, prerequisites: PlatformPrerequisites): Map<string, string> {
  return new Map([...deferredInstallersOf(kustomization, prerequisites)].map(([crd, object]) => [crd, objectLabel(object)]));
}

/**
 * Whether Kustomization `k` becomes Ready only once `installer` (a HelmRelease
 * or Flux Kustomization it applies) is Ready: `spec.wait: true` waits for
 * everything applied, a healthCheck for what it names. Without either, Ready
 * means "applied": the chart's CRDs are installed some time later, by
 * helm-controller, while everything depending on `k` already runs.
 */
export function waitsFor(k: AppliedKustomization, installer: Record<string, unknown>): boolean {
  const spec = specOf(k.object);
  if (spec.wait === true) return true;
  const namespace = appliedNamespace(installer, k.object);
  return (Array.isArray(spec.healthChecks) ? spec.healthChecks : []).some(
    (check) =>
      isRecord(check) &&
      check.kind === installer.kind &&
      check.name === nameOf(installer) &&
      (typeof check.apiVersion !== 'string' || groupOf(check.apiVersion) === groupOf(installer.apiVersion)) &&
      (typeof check.namespace !== 'string' || check.namespace === namespace),
  );
}

function exists(group: string): boolean {
  return isKubernetesGroup(group) || isFluxGroup(group);
}

/** Findings for objects applied before their CRD can exist; notes where undeclared charts may install it. */
export function checkCrdAvailability(input: CrdAvailabilityInput): { findings: Finding[]; notes: string[] } {
  const { clusterDir, kustomizations, prerequisites } = input;
  const findings: Finding[] = [];
  const notes: string[] = [];
  const provided = new Set(prerequisites.provided?.crds ?? []);
  const byKey = new Map(kustomizations.map((k) => [k.key, k]));
  const own = new Map(kustomizations.map((k) => [k.key, crdObjectsOf(k.objects)]));
  const fromCharts = new Map(kustomizations.map((k) => [k.key, deferredInstallersOf(k, prerequisites)]));
  /** Who installs a kind anywhere in the cluster: the fix names it. */
  const installer = (groupKind: string): string | undefined => {
    for (const k of kustomizations) if (own.get(k.key)!.has(groupKind) || fromCharts.get(k.key)!.has(groupKind)) return k.key;
    return undefined;
  };

  if (input.rootObjects !== undefined) {
    const rootCrds = crdObjectsOf(input.rootObjects);
    for (const object of input.rootObjects) {
      const groupKind = groupKindOf(object);
      if (exists(groupOf(object.apiVersion)) || rootCrds.has(groupKind) || provided.has(groupKind)) continue;
      const by = installer(groupKind);
      findings.push({
        file: clusterDir,
        object: objectLabel(object),
        message: `${groupKind} is a custom resource in the root sync, which applies before any layer${by ? ` (its CRD comes from Kustomization ${by})` : ''}: its dry run fails and no layer is ever created. Move it into a layer that depends on ${by ?? 'the layer installing its CRD'}`,
      });
    }
  }

  // With charts declared, an undeclared one counts as installing no CRD: say so once.
  const declared = new Set((prerequisites.charts ?? []).map((c) => c.chart));
  for (const k of prerequisites.charts === undefined ? [] : kustomizations) {
    for (const release of helmReleasesOf(k.objects, k.object)) {
      if (!declared.has(release.chart))
        notes.push(
          `${k.dir}: ${objectLabel(release.object)}: chart ${release.chart} is not in scaffold.yaml charts, so verify assumes it installs no CRD and creates no Service it knows of`,
        );
    }
  }

  for (const k of kustomizations) {
    const closure = dependencyClosure(k.key, byKey);
    // A chart's CRDs are there for k only behind a dependsOn edge (Flux waits
    // for that Kustomization's Ready) into a Kustomization that waits for the
    // release. The Kustomization that creates k applies it before it is Ready.
    const behindDependsOn = new Set([k.key, ...closure].flatMap((key) => byKey.get(key)?.dependsOn ?? []));
    const available = new Set([...own.get(k.key)!, ...provided]);
    /** CRDs a dependency's release installs that k does not wait for → that dependency. */
    const unwaited = new Map<string, string>();
    const releases: string[] = [];
    for (const dep of closure) {
      for (const crd of own.get(dep) ?? []) available.add(crd);
      const applied = byKey.get(dep);
      for (const [crd, installer] of fromCharts.get(dep) ?? []) {
        if (applied !== undefined && behindDependsOn.has(dep) && waitsFor(applied, installer)) available.add(crd);
        else if (!unwaited.has(crd)) unwaited.set(crd, dep);
      }
      if (applied) releases.push(...helmReleasesOf(applied.objects, applied.object).map((r) => `${objectLabel(r.object)} (chart ${r.chart})`));
    }
    const reported = new Set<string>();
    for (const object of k.objects) {
      const groupKind = groupKindOf(object);
      if (exists(groupOf(object.apiVersion)) || available.has(groupKind) || reported.has(groupKind)) continue;
      reported.add(groupKind);
      if (prerequisites.charts === undefined && releases.length > 0) {
        notes.push(
          `${k.file}: Kustomization ${k.key}: ${groupKind} (${objectLabel(object)}) has no CRD in the tree; it may come from ${releases.sort().join(', ')}: declare the charts' CRDs in scaffold.yaml charts to check it`,
        );
        continue;
      }
      const by = installer(groupKind);
      const sameRelease = fromCharts.get(k.key)!.get(groupKind);
      const dep = unwaited.get(groupKind);
      const depInstaller = dep !== undefined ? fromCharts.get(dep)!.get(groupKind)! : undefined;
      const fix =
        sameRelease !== undefined
          ? `its CRD comes from ${objectLabel(sameRelease)} in the same Kustomization, installed only after the dry run of everything it applies: move ${objectLabel(object)} into a Kustomization that depends on ${k.key}`
          : dep !== undefined && depInstaller !== undefined && !waitsFor(byKey.get(dep)!, depInstaller)
            ? `its CRD comes from ${objectLabel(depInstaller)} in Kustomization ${dep}, which does not wait for it (no spec.wait: true, no healthCheck on it), so ${k.key} starts once ${dep} is applied, before the chart has installed the CRD, and its first reconciles fail. Add a healthCheck on ${objectLabel(depInstaller)} (or spec.wait: true) to Kustomization ${dep}`
            : dep !== undefined
              ? `its CRD comes from ${objectLabel(depInstaller!)} in Kustomization ${dep}, which creates ${k.key} before that is Ready: add dependsOn ${dep} to Kustomization ${k.key}`
              : by !== undefined
                ? `add dependsOn ${by} (which installs it) to Kustomization ${k.key}`
                : `no Kustomization of ${clusterDir} installs it: add its CRD to a layer ${k.key} depends on, declare the chart that installs it in scaffold.yaml charts, or list it in scaffold.yaml provided.crds`;
      findings.push({ file: k.dir, object: objectLabel(object), message: `${groupKind} does not exist yet when Kustomization ${k.key} applies it: ${fix}` });
    }
  }
  return { findings, notes };
}
