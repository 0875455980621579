/**
 * Flux reporting on itself: the default platform's alert rules, Pod scraping
 * and dashboard as shipped, validated against the real PodMonitor and
 * PrometheusRule CRDs, and the check that refuses a rule naming a Flux
 * metric nothing exports.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { isRecord } from '../model/is-record.js';
import { packageRoot, platformDir } from '../package-paths.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import type { AppliedKustomization } from './applied-object.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { formatFinding } from './finding.js';
import { checkFluxMetricRules, fluxMetricsIn } from './flux-metric-rules.js';
import { SchemaValidator } from './schema-validator.js';
import { substituteVariables } from './substitute-variables.js';

const infrastructure = join(platformDir('default'), 'base', 'infrastructure');
const shipped = parse(await readFile(join(infrastructure, 'kube-prometheus-stack.yaml'), 'utf8')) as Record<string, unknown>;
const values = (shipped.spec as { values: Record<string, unknown> }).values;

function layer(objects: Record<string, unknown>[]): AppliedKustomization {
  return {
    key: 'flux-system/infrastructure',
    file: 'clusters/c/flux/infrastructure.yaml',
    dir: 'infrastructure',
    object: { apiVersion: 'kustomize.toolkit.fluxcd.io/v1', kind: 'Kustomization', metadata: { name: 'infrastructure', namespace: 'flux-system' }, spec: {} },
    dependsOn: [],
    objects,
  };
}

function stack(overrides: Record<string, unknown>): Record<string, unknown> {
  return { ...shipped, spec: { ...(shipped.spec as object), values: { ...values, ...overrides } } };
}

function rule(alert: string, expr: string): Record<string, unknown> {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'r', namespace: 'monitoring' },
    spec: { groups: [{ name: 'g', rules: [{ alert, expr }] }] },
  };
}

describe('Flux reports on itself (default platform)', () => {
  it('ships rules, Pod scraping and the metrics they need, each valid against its real CRD', async () => {
    const validator = new SchemaValidator({ schemas: new FsRepoReader(join(packageRoot(), 'schemas', 'crds')), coreKinds: new CoreKindValidator() });
    const prometheus = values.prometheus as Record<string, unknown>;
    const monitors = prometheus.additionalPodMonitors as Record<string, unknown>[];
    const flux = monitors.find((m) => m.name === 'flux-system')!;
    assert.ok(flux, 'a PodMonitor for the Flux controllers');
    const { name, ...spec } = flux;
    const podMonitor = await validator.validate({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      metadata: { name, namespace: 'monitoring' },
      spec,
    });
    assert.deepEqual(podMonitor, { status: 'checked', issues: [] });

    const rules = (values.additionalPrometheusRulesMap as Record<string, { groups: unknown }>).flux!;
    const prometheusRule = await validator.validate({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'flux', namespace: 'monitoring' },
      spec: { groups: rules.groups },
    });
    assert.deepEqual(prometheusRule, { status: 'checked', issues: [] });
    // The CRD's RE2 pattern ^(?i)(abort|warn)?$ holds case-insensitively, as on the API server.
    const group = { name: 'g', partial_response_strategy: 'Warn', rules: [{ record: 'x', expr: '1' }] };
    const strategy = (value: string) =>
      validator.validate({
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'PrometheusRule',
        metadata: { name: 'p', namespace: 'monitoring' },
        spec: { groups: [{ ...group, partial_response_strategy: value }] },
      });
    assert.deepEqual(await strategy('Warn'), { status: 'checked', issues: [] });
    const refused = await strategy('ignore');
    assert.equal(refused.status === 'checked' ? refused.issues.length : -1, 1);
    const alerts = JSON.stringify(rules.groups);
    assert.match(alerts, /FluxReconciliationFailure/);
    assert.match(alerts, /FluxObjectSuspended/);

    assert.deepEqual(checkFluxMetricRules([layer([shipped])], '2.9'), [], 'every Flux metric the rules use is exported on the cluster');
  });

  it("keeps Grafana's own variables through Flux's substitution (the $${} escape)", async () => {
    const text = await readFile(join(infrastructure, 'dashboards', 'flux-reconciliation.json'), 'utf8');
    assert.doesNotMatch(text.replaceAll('$${', ''), /\$\{/, 'every Grafana variable is written $${…}');
    const applied = JSON.parse(substituteVariables(text, new Map([['cluster_name', 'c']]))) as {
      templating: { list: { name: string }[] };
      panels: { targets: { expr: string }[] }[];
    };
    assert.deepEqual(
      applied.templating.list.map((v) => v.name),
      ['datasource', 'kind'],
    );
    assert.match(applied.panels[0]!.targets[0]!.expr, /customresource_kind=~"\$\{kind\}"/);
    const kustomization = parse(await readFile(join(infrastructure, 'kustomization.yaml'), 'utf8')) as {
      configMapGenerator: { name: string; files: string[] }[];
    };
    assert.deepEqual(kustomization.configMapGenerator.find((g) => g.name === 'grafana-dashboard-flux-reconciliation')?.files, [
      'dashboards/flux-reconciliation.json',
    ]);
  });

  it('refuses a rule on a metric the target Flux no longer exports, and accepts it where it still does', () => {
    const legacy = rule('FluxNotReady', 'gotk_reconcile_condition{type="Ready", status="False"} == 1');
    const lines = checkFluxMetricRules([layer([shipped, legacy])], '2.9').map(formatFinding);
    assert.deepEqual(lines, [
      "infrastructure: PrometheusRule monitoring/r: rule FluxNotReady uses gotk_reconcile_condition, which the Flux 2.9 controllers do not export (removed in Flux 2.5; an object's Ready and suspend state come from kube-state-metrics as gotk_resource_info, see Flux's monitoring guide): the rule never fires",
    ]);
    assert.deepEqual(checkFluxMetricRules([layer([shipped, legacy])], '2.4'), []);
  });

  it('refuses gotk_resource_info where no kube-state-metrics builds it', () => {
    const lines = checkFluxMetricRules([layer([stack({ 'kube-state-metrics': {} })])], '2.9').map(formatFinding);
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(
      lines[0]!,
      /^infrastructure: HelmRelease monitoring\/kube-prometheus-stack: values additionalPrometheusRulesMap\.flux: rule FluxReconciliationFailure uses gotk_resource_info, which neither the Flux controllers nor a kube-state-metrics custom resource state configuration on this cluster exports/,
    );
    // Without metricNamePrefix kube-state-metrics names it kube_customresource_resource_info.
    const ksm = values['kube-state-metrics'] as { customResourceState: { config: { spec: { resources: Record<string, unknown>[] } } } };
    const unprefixed = ksm.customResourceState.config.spec.resources.map(({ metricNamePrefix: _, ...resource }) => resource);
    const noPrefix = stack({ 'kube-state-metrics': { ...ksm, customResourceState: { enabled: true, config: { spec: { resources: unprefixed } } } } });
    assert.equal(checkFluxMetricRules([layer([noPrefix])], '2.9').length, 2);
  });

  it('reads metric names, not label values', () => {
    assert.deepEqual(fluxMetricsIn('sum(rate(gotk_reconcile_duration_seconds_count{name="gotk_fake"}[5m])) / on() my_gotk_x'), [
      'gotk_reconcile_duration_seconds_count',
    ]);
    assert.deepEqual(fluxMetricsIn("gotk_resource_info{ready='gotk_other'} or gotk_token_cache_events_total"), [
      'gotk_resource_info',
      'gotk_token_cache_events_total',
    ]);
    assert.ok(isRecord(values), 'the shipped HelmRelease has values');
  });
});
