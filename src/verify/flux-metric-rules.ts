/**
 * Alert rules that name a Flux metric nothing on the cluster exports. Such a
 * rule loads, evaluates to nothing and never fires: the failure it was
 * written for arrives as a surprise. Two ways it happens:
 *
 * - a metric the target Flux's controllers no longer export: the per-object
 *   `gotk_reconcile_condition` and `gotk_suspend_status` were removed in Flux
 *   2.5 (kustomize-controller v1.5.0's CHANGELOG: "Remove deprecated object
 *   metrics from controllers");
 * - a `gotk_*` metric that kube-state-metrics builds from the Flux objects
 *   (Flux's monitoring guide: `gotk_resource_info`), where no
 *   kube-state-metrics on the cluster is configured to build it.
 *
 * Rules are read where Prometheus Operator gets them: PrometheusRule objects
 * in the tree, and kube-prometheus-stack's `additionalPrometheusRulesMap`
 * values, which the chart turns into PrometheusRules verbatim (`toYaml`).
 */
import { isRecord } from '../model/is-record.js';
import { appliedNamespace, helmReleasesOf, type AppliedKustomization } from './applied-object.js';
import { DEFAULT_TARGET_FLUX } from './flux-version.js';
import type { Finding } from './finding.js';
import { effectiveValues, valueAt, valuesSources, type Values } from './helm-values.js';
import { objectLabel } from './object-label.js';

/** What the Flux controllers export about reconciliations (Flux monitoring guide, controller metrics). */
const CONTROLLER_METRICS = new Set([
  'gotk_reconcile_duration_seconds',
  'gotk_reconcile_duration_seconds_bucket',
  'gotk_reconcile_duration_seconds_sum',
  'gotk_reconcile_duration_seconds_count',
  'gotk_cache_events_total',
]);
/** The token cache's metrics (`gotk_token_` prefix since the controllers cache cloud credentials). */
const CONTROLLER_METRIC_PREFIX = 'gotk_token_cache_';
/** Exported up to Flux 2.4, removed in 2.5. */
const REMOVED_IN_2_5 = new Set(['gotk_reconcile_condition', 'gotk_suspend_status']);

interface RuleSite {
  readonly kustomization: AppliedKustomization;
  readonly object: Record<string, unknown>;
  /** Where in the object the groups are, for the message. */
  readonly where: string;
  readonly groups: unknown;
}

/** Findings for alert and recording rules naming a Flux metric nothing on the cluster exports. */
export function checkFluxMetricRules(kustomizations: readonly AppliedKustomization[], targetFlux: string = DEFAULT_TARGET_FLUX): Finding[] {
  const sites = ruleSites(kustomizations);
  if (sites.length === 0) return [];
  const derived = kubeStateMetricsNames(kustomizations);
  const minor = Number(targetFlux.split('.')[1]);
  const findings: Finding[] = [];
  for (const site of sites) {
    for (const rule of rulesOf(site.groups)) {
      for (const metric of fluxMetricsIn(rule.expr)) {
        const why = missing(metric, minor, targetFlux, derived);
        if (why === undefined) continue;
        findings.push({
          file: site.kustomization.dir,
          object: objectLabel(site.object),
          message: `${site.where}rule ${rule.name} uses ${metric}, ${why}: the rule never fires`,
        });
      }
    }
  }
  return findings;
}

function missing(metric: string, minor: number, targetFlux: string, derived: ReadonlySet<string>): string | undefined {
  if (CONTROLLER_METRICS.has(metric) || metric.startsWith(CONTROLLER_METRIC_PREFIX)) return undefined;
  if (REMOVED_IN_2_5.has(metric) && minor >= 5) {
    return `which the Flux ${targetFlux} controllers do not export (removed in Flux 2.5; an object's Ready and suspend state come from kube-state-metrics as gotk_resource_info, see Flux's monitoring guide)`;
  }
  if (REMOVED_IN_2_5.has(metric)) return undefined;
  if (derived.has(metric)) return undefined;
  return `which neither the Flux controllers nor a kube-state-metrics custom resource state configuration on this cluster exports (configure kube-state-metrics' customResourceState with metricNamePrefix gotk, as Flux's monitoring guide does)`;
}

function ruleSites(kustomizations: readonly AppliedKustomization[]): RuleSite[] {
  const sites: RuleSite[] = [];
  const sources = valuesSources(kustomizations);
  for (const k of kustomizations) {
    for (const object of k.objects) {
      if (object.kind === 'PrometheusRule' && typeof object.apiVersion === 'string' && object.apiVersion.startsWith('monitoring.coreos.com/')) {
        sites.push({ kustomization: k, object, where: '', groups: isRecord(object.spec) ? object.spec.groups : undefined });
      }
    }
    for (const release of helmReleasesOf(k.objects, k.object)) {
      const values = effectiveValues(release.object, appliedNamespace(release.object, k.object) ?? '', sources);
      const map = valueAt(values, 'additionalPrometheusRulesMap');
      if (!isRecord(map)) continue;
      for (const [name, entry] of Object.entries(map)) {
        if (isRecord(entry))
          sites.push({ kustomization: k, object: release.object, where: `values additionalPrometheusRulesMap.${name}: `, groups: entry.groups });
      }
    }
  }
  return sites;
}

function rulesOf(groups: unknown): { name: string; expr: string }[] {
  if (!Array.isArray(groups)) return [];
  return groups.flatMap((group) =>
    isRecord(group) && Array.isArray(group.rules)
      ? group.rules.flatMap((rule) => {
          if (!isRecord(rule) || typeof rule.expr !== 'string') return [];
          const name = typeof rule.alert === 'string' ? rule.alert : typeof rule.record === 'string' ? rule.record : '(unnamed)';
          return [{ name, expr: rule.expr }];
        })
      : [],
  );
}

/** The `gotk_*` metric names a PromQL expression selects; label values (quoted) are not metric names. */
export function fluxMetricsIn(expr: string): string[] {
  const unquoted = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  return [...new Set(unquoted.match(/(?<![A-Za-z0-9_:])gotk_[A-Za-z0-9_:]*/g) ?? [])];
}

/**
 * The metric names kube-state-metrics on this cluster builds from custom
 * resources: `<metricNamePrefix>_<name>` of each configured metric, read from
 * the values of every release that enables `customResourceState` (the
 * kube-state-metrics chart, or kube-prometheus-stack's `kube-state-metrics`
 * subchart values).
 */
function kubeStateMetricsNames(kustomizations: readonly AppliedKustomization[]): Set<string> {
  const names = new Set<string>();
  const sources = valuesSources(kustomizations);
  for (const k of kustomizations) {
    for (const release of helmReleasesOf(k.objects, k.object)) {
      const values = effectiveValues(release.object, appliedNamespace(release.object, k.object) ?? '', sources);
      for (const root of [values, valueAt(values, 'kube-state-metrics')]) {
        if (isRecord(root)) addConfigured(root, names);
      }
    }
  }
  return names;
}

function addConfigured(values: Values, names: Set<string>): void {
  const state = values.customResourceState;
  if (!isRecord(state) || state.enabled !== true || !isRecord(state.config)) return;
  const resources = valueAt(state.config, 'spec.resources');
  if (!Array.isArray(resources)) return;
  for (const resource of resources) {
    if (!isRecord(resource) || !Array.isArray(resource.metrics)) continue;
    // kube-state-metrics' default prefix is kube_customresource; an empty string means none.
    const prefix = typeof resource.metricNamePrefix === 'string' ? resource.metricNamePrefix : 'kube_customresource';
    for (const metric of resource.metrics) {
      if (isRecord(metric) && typeof metric.name === 'string') names.add(prefix === '' ? metric.name : `${prefix}_${metric.name}`);
    }
  }
}
