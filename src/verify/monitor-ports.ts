/**
 * Prometheus Operator monitors scraping a port that does not exist.
 * A ServiceMonitor endpoint names a port of the Services it selects (a
 * PodMonitor one of the Pods'); a name none of them has yields no target, and
 * the metrics silently stop. Checked where the selected objects are known:
 * Services and workloads in the tree, and the Services scaffold.yaml declares
 * for a chart (cert-manager's chart names its port `http-metrics` since
 * v1.21). Monitors are the ServiceMonitor/PodMonitor objects and the ones a
 * kube-prometheus-stack HelmRelease declares in its values. A monitor selects
 * in its own namespace unless `namespaceSelector` names others (`matchNames`)
 * or all (`any: true`); one whose selector matches only Services elsewhere
 * scrapes nothing either.
 */
import type { ChartSpec } from '../gitops/platform-prerequisites.js';
import { appliedNamespace, groupOf, helmReleasesOf, metadataOf, specOf, type AppliedKustomization } from './applied-object.js';
import type { Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';
import { objectLabel } from './object-label.js';
import { configMapsOf, releaseServicesOf } from './release-services.js';

/** A Service or Pod template as the check matches it. */
interface Target {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, unknown>>;
  readonly ports: readonly string[];
}

interface Monitor {
  readonly kind: 'ServiceMonitor' | 'PodMonitor';
  readonly label: string;
  readonly file: string;
  readonly namespace: string;
  readonly spec: Record<string, unknown>;
}

function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function portNames(value: unknown): string[] {
  return records(value).flatMap((p) => (typeof p.name === 'string' ? [p.name] : []));
}

function podTemplate(object: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet'].includes(String(object.kind))) return undefined;
  const template = specOf(object).template;
  return isRecord(template) ? template : undefined;
}

/** Services and pod templates of the tree, and the Services declared charts create. */
function targetsOf(kustomizations: readonly AppliedKustomization[], charts: readonly ChartSpec[]): { services: Target[]; pods: Target[] } {
  const services: Target[] = [];
  const pods: Target[] = [];
  const configMaps = configMapsOf(kustomizations);
  for (const k of kustomizations) {
    for (const object of k.objects) {
      const namespace = appliedNamespace(object, k.object);
      if (namespace === undefined) continue;
      if (object.kind === 'Service' && groupOf(object.apiVersion) === '') {
        const labels = metadataOf(object).labels;
        services.push({ namespace, labels: isRecord(labels) ? labels : {}, ports: portNames(specOf(object).ports) });
      }
      const template = podTemplate(object);
      if (template) {
        const labels = metadataOf(template).labels;
        const ports = records(specOf(template).containers).flatMap((c) => portNames(c.ports));
        pods.push({ namespace, labels: isRecord(labels) ? labels : {}, ports });
      }
    }
    for (const release of helmReleasesOf(k.objects, k.object)) {
      if (release.namespace === undefined) continue;
      for (const service of releaseServicesOf(release.object, release.chart, release.namespace, charts, configMaps))
        services.push({ namespace: release.namespace, labels: service.labels, ports: service.ports });
    }
  }
  return { services, pods };
}

/** Monitor objects of the tree and those in kube-prometheus-stack values. */
function monitorsOf(kustomizations: readonly AppliedKustomization[]): Monitor[] {
  const monitors: Monitor[] = [];
  for (const k of kustomizations) {
    for (const object of k.objects) {
      if ((object.kind === 'ServiceMonitor' || object.kind === 'PodMonitor') && groupOf(object.apiVersion) === 'monitoring.coreos.com') {
        const namespace = appliedNamespace(object, k.object);
        if (namespace !== undefined) monitors.push({ kind: object.kind, label: objectLabel(object), file: k.dir, namespace, spec: specOf(object) });
      }
    }
    for (const release of helmReleasesOf(k.objects, k.object)) {
      const values = specOf(release.object).values;
      const prometheus = isRecord(values) && isRecord(values.prometheus) ? values.prometheus : {};
      const add = (kind: Monitor['kind'], list: unknown, field: string): void => {
        records(list).forEach((m, i) => {
          monitors.push({
            kind,
            label: `${objectLabel(release.object)} values.prometheus.${field}[${i}] (${kind} ${String(m.name ?? '')})`,
            file: k.dir,
            namespace: release.namespace ?? '',
            spec: m,
          });
        });
      };
      add('ServiceMonitor', prometheus.additionalServiceMonitors, 'additionalServiceMonitors');
      add('PodMonitor', prometheus.additionalPodMonitors, 'additionalPodMonitors');
    }
  }
  return monitors;
}

function selects(selector: unknown, labels: Readonly<Record<string, unknown>>): boolean {
  const match = isRecord(selector) && isRecord(selector.matchLabels) ? selector.matchLabels : undefined;
  if (match === undefined || Object.keys(match).length === 0) return false;
  return Object.entries(match).every(([key, value]) => labels[key] === value);
}

/** One finding per monitor endpoint port that no selected Service/Pod has. */
export function checkMonitorPorts(kustomizations: readonly AppliedKustomization[], charts: readonly ChartSpec[] = []): Finding[] {
  const { services, pods } = targetsOf(kustomizations, charts);
  const findings: Finding[] = [];
  for (const monitor of monitorsOf(kustomizations)) {
    const namespaceSelector = isRecord(monitor.spec.namespaceSelector) ? monitor.spec.namespaceSelector : {};
    const namespaces =
      namespaceSelector.any === true ? undefined : Array.isArray(namespaceSelector.matchNames) ? namespaceSelector.matchNames.map(String) : [monitor.namespace];
    const pool = monitor.kind === 'ServiceMonitor' ? services : pods;
    const matching = pool.filter((t) => selects(monitor.spec.selector, t.labels));
    // Prometheus looks only in the namespaces the monitor names: its own unless namespaceSelector says otherwise.
    const selected = matching.filter((t) => namespaces === undefined || namespaces.includes(t.namespace));
    if (selected.length === 0) {
      const elsewhere = [...new Set(matching.map((t) => t.namespace))].sort();
      if (elsewhere.length > 0 && namespaces !== undefined) {
        const kinds = monitor.kind === 'ServiceMonitor' ? 'Services' : 'Pods';
        const looked = Array.isArray(namespaceSelector.matchNames)
          ? `${namespaces.join(', ')} (spec.namespaceSelector.matchNames)`
          : `${monitor.namespace} (its own namespace; no spec.namespaceSelector)`;
        findings.push({
          file: monitor.file,
          object: monitor.label,
          message: `selects no ${monitor.kind === 'ServiceMonitor' ? 'Service' : 'Pod'} in ${looked}, though ${kinds} in ${elsewhere.join(', ')} match its selector: nothing is scraped. Add spec.namespaceSelector.matchNames: [${[...new Set([...(Array.isArray(namespaceSelector.matchNames) ? namespaces : []), ...elsewhere])].join(', ')}]`,
        });
      }
      continue;
    }
    const available = [...new Set(selected.flatMap((t) => t.ports))].sort();
    const field = monitor.kind === 'ServiceMonitor' ? 'endpoints' : 'podMetricsEndpoints';
    records(monitor.spec[field]).forEach((endpoint, i) => {
      if (typeof endpoint.port !== 'string' || available.includes(endpoint.port)) return;
      findings.push({
        file: monitor.file,
        object: monitor.label,
        message: `${field}[${i}].port ${JSON.stringify(endpoint.port)} is not a port of the ${monitor.kind === 'ServiceMonitor' ? 'Services' : 'Pods'} it selects (${available.map((p) => JSON.stringify(p)).join(', ') || 'none named'}): nothing is scraped. Use one of those names`,
      });
    });
  }
  return findings;
}
