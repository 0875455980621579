/**
 * Flux rules the CRD schemas cannot carry for a JSON Schema validator: the
 * CEL `x-kubernetes-validations` the API server evaluates, and the GA-only API
 * set. Flux 2.8+ serves only the GA versions, so a beta apiVersion that an
 * older cluster would still accept fails on a new one (DESIGN.md, "Facts").
 */
import type { FieldIssue } from '../errors.js';
import { isRecord } from '../model/is-record.js';

/** The one apiVersion Flux 2.8+ serves, by `group/kind`. */
const GA_API: ReadonlyMap<string, string> = new Map([
  ['kustomize.toolkit.fluxcd.io/Kustomization', 'kustomize.toolkit.fluxcd.io/v1'],
  ['source.toolkit.fluxcd.io/GitRepository', 'source.toolkit.fluxcd.io/v1'],
  ['source.toolkit.fluxcd.io/OCIRepository', 'source.toolkit.fluxcd.io/v1'],
  ['source.toolkit.fluxcd.io/HelmRepository', 'source.toolkit.fluxcd.io/v1'],
  ['source.toolkit.fluxcd.io/HelmChart', 'source.toolkit.fluxcd.io/v1'],
  ['source.toolkit.fluxcd.io/Bucket', 'source.toolkit.fluxcd.io/v1'],
  ['helm.toolkit.fluxcd.io/HelmRelease', 'helm.toolkit.fluxcd.io/v2'],
]);

/**
 * Checks the Flux rules for one object; objects of other kinds yield nothing.
 * An `apiVersion` issue means the object's version is not served at all, so
 * checking it against the GA schema would only add noise.
 */
export function fluxRuleIssues(object: unknown): FieldIssue[] {
  if (!isRecord(object) || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') return [];
  const { apiVersion, kind } = object;
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const ga = GA_API.get(`${group}/${kind}`);
  if (ga !== undefined && apiVersion !== ga) {
    return [{ field: 'apiVersion', message: `${apiVersion} is not served by Flux 2.8+ (GA APIs only): use ${ga}` }];
  }
  const spec = isRecord(object.spec) ? object.spec : {};
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const issues: FieldIssue[] = [];
  if (group === 'helm.toolkit.fluxcd.io' && kind === 'HelmRelease') {
    // CEL on HelmReleaseSpec: (has(chart) && !has(chartRef)) || (!has(chart) && has(chartRef))
    const hasChart = spec.chart !== undefined && spec.chart !== null;
    const hasChartRef = spec.chartRef !== undefined && spec.chartRef !== null;
    if (hasChart === hasChartRef) {
      issues.push({
        field: 'spec',
        message: `exactly one of chart or chartRef must be set (${hasChart ? 'both are' : 'neither is'})`,
      });
    }
  }
  if (group === 'fluxcd.controlplane.io' && kind === 'FluxInstance' && metadata.name !== 'flux') {
    // CEL on FluxInstance: self.metadata.name == 'flux'; the operator reconciles only that one.
    issues.push({ field: 'metadata.name', message: `must be "flux" (got ${JSON.stringify(metadata.name ?? null)})` });
  }
  return issues;
}
