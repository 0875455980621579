/**
 * HelmReleases asking a pinned release for something it does not have.
 * scaffold.yaml records, per chart release, what was read at its upstream tag
 * (`charts[].releases`): the values options it accepts and the CRDs its
 * controller looks for when it starts. external-dns 0.21.0 (chart 1.21.1)
 * has no `digitalocean` provider and exits at start on `--provider=digitalocean`;
 * Cilium 1.18's operator leaves Gateway API off for good without TLSRoute.
 * Neither shows in the tree: the chart renders, Flux applies it, and the Pod
 * crash-loops or the feature stays off. This check reads the release's
 * values the way helm-controller merges them (valuesFrom in order, then
 * `values`) and refuses a value the release does not accept, and a release
 * whose required CRDs nothing on the cluster installs.
 */
import type { ChartRelease, PlatformPrerequisites } from '../gitops/platform-prerequisites.js';
import { isRecord } from '../model/is-record.js';
import { appliedNamespace, helmReleasesOf, specOf, type AppliedKustomization } from './applied-object.js';
import { crdObjectsOf, deferredCrdsOf } from './crd-availability.js';
import type { Finding } from './finding.js';
import { effectiveValues, valueAt, valuesSources } from './helm-values.js';
import { objectLabel } from './object-label.js';

/** A Flux postBuild variable reference (`${name}`, `${name:-default}` …), substituted on the cluster. */
const SUBSTITUTION_VARIABLE = /\$\{[A-Za-z_][A-Za-z0-9_]*[^}]*\}/;

/** Findings for HelmReleases using an option value, or lacking a CRD, their pinned release does not have. */
export function checkReleaseOptions(kustomizations: readonly AppliedKustomization[], prerequisites: PlatformPrerequisites): Finding[] {
  const charts = prerequisites.charts ?? [];
  if (!charts.some((c) => c.releases.length > 0)) return [];
  const sources = valuesSources(kustomizations);
  const installed = installedCrds(kustomizations, prerequisites);
  const findings: Finding[] = [];
  for (const k of kustomizations) {
    for (const release of helmReleasesOf(k.objects, k.object)) {
      const version = pinnedVersion(release.object);
      const pinned = charts.find((c) => c.chart === release.chart)?.releases.find((r) => r.version === version);
      if (pinned === undefined) continue;
      const label = objectLabel(release.object);
      const values = effectiveValues(release.object, appliedNamespace(release.object, k.object) ?? '', sources);
      for (const option of pinned.options) {
        const found = option.values.map((path) => ({ path, value: valueAt(values, path) })).find((v) => typeof v.value === 'string');
        // A postBuild variable is only known on the cluster; a bare "${" is no variable and is checked like any text.
        if (found === undefined || typeof found.value !== 'string' || SUBSTITUTION_VARIABLE.test(found.value)) continue;
        if (option.allowed.includes(found.value)) continue;
        findings.push({
          file: k.dir,
          object: label,
          message: `sets ${option.name} ${JSON.stringify(found.value)} (values ${found.path}), which ${release.chart} ${describe(pinned)} does not have: it refuses it at start and the Pod crash-loops. It accepts ${option.allowed.join(', ')} (scaffold.yaml charts ${release.chart}, read at ${pinned.checked})`,
        });
      }
      for (const crd of pinned.requires) {
        if (installed.has(crd)) continue;
        findings.push({
          file: k.dir,
          object: label,
          message: `${release.chart} ${describe(pinned)} needs ${crd} before its controller starts, and nothing on this cluster installs it: the feature stays off until someone restarts it. Install the CRD in a Kustomization this release waits for (scaffold.yaml charts ${release.chart}, read at ${pinned.checked})`,
        });
      }
    }
  }
  return findings;
}

function describe(release: ChartRelease): string {
  return release.appVersion !== undefined ? `${release.version} (${release.appVersion})` : release.version;
}

function pinnedVersion(release: Record<string, unknown>): string | undefined {
  const chart = specOf(release).chart;
  const version = isRecord(chart) && isRecord(chart.spec) ? chart.spec.version : undefined;
  return typeof version === 'string' ? version : undefined;
}

/** `group/Kind` of every CRD some Kustomization of the cluster installs, or the platform provides. */
function installedCrds(kustomizations: readonly AppliedKustomization[], prerequisites: PlatformPrerequisites): Set<string> {
  const out = new Set(prerequisites.provided?.crds ?? []);
  for (const k of kustomizations) {
    for (const crd of crdObjectsOf(k.objects)) out.add(crd);
    for (const crd of deferredCrdsOf(k, prerequisites).keys()) out.add(crd);
  }
  return out;
}
