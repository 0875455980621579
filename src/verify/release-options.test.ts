/**
 * The release-options check on the trees the reality audit found: the
 * matrix-example as it was (external-dns chart 1.21.1 told
 * `provider: digitalocean` through a ConfigMap of the dns layer, which the
 * 0.21.0 binary refuses at start), and Cilium released where nothing installs
 * TLSRoute. The facts are the shipped scaffold.yaml's, so a change to them is
 * tested here too.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { parsePlatformDescriptor } from '../gitops/platform-descriptor.js';
import type { PlatformPrerequisites } from '../gitops/platform-prerequisites.js';
import { platformDir } from '../package-paths.js';
import { appliedLayer } from './test-applied-layer.js';
import { formatFinding } from './finding.js';
import { checkReleaseOptions } from './release-options.js';

const descriptor = parsePlatformDescriptor(await readFile(`${platformDir('matrix-example')}/scaffold.yaml`, 'utf8'));
const prerequisites: PlatformPrerequisites = { charts: descriptor.charts ?? [], ...(descriptor.artifacts ? { artifacts: descriptor.artifacts } : {}) };
const pinned = descriptor.charts!.find((c) => c.chart === 'external-dns')!.releases.find((r) => r.version === '1.21.1')!;
const allowed = pinned.options.find((o) => o.name === 'provider')!.allowed;

function externalDns(version: string, values: Record<string, unknown>, valuesFrom?: unknown[]): Record<string, unknown> {
  return {
    apiVersion: 'helm.toolkit.fluxcd.io/v2',
    kind: 'HelmRelease',
    metadata: { name: 'external-dns', namespace: 'external-dns' },
    spec: {
      chart: { spec: { chart: 'external-dns', version, sourceRef: { kind: 'HelmRepository', name: 'external-dns', namespace: 'flux-system' } } },
      values,
      ...(valuesFrom ? { valuesFrom } : {}),
    },
  };
}

const layer = (name: string, objects: Record<string, unknown>[], dependsOn: string[] = []) => appliedLayer(name, objects, { dependsOn });

describe('verify refuses what a pinned release does not have', () => {
  it("fails the matrix-example tree as it was: provider digitalocean, from the dns layer's ConfigMap, against external-dns 1.21.1", () => {
    const platform = layer('platform', [
      externalDns('1.21.1', { domainFilters: ['c.example.net'], policy: 'sync' }, [
        { kind: 'ConfigMap', name: 'external-dns-provider', valuesKey: 'values.yaml', optional: true },
      ]),
    ]);
    const dns = layer(
      'dns',
      [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'external-dns-provider', namespace: 'external-dns' },
          data: { 'values.yaml': 'provider:\n  name: digitalocean\nenv: []\n' },
        },
      ],
      ['flux-system/platform'],
    );
    const lines = checkReleaseOptions([platform, dns], prerequisites).map(formatFinding);
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!,
      /^platform: HelmRelease external-dns\/external-dns: sets provider "digitalocean" \(values provider\.name\), which external-dns 1\.21\.1 \(0\.21\.0\) does not have: it refuses it at start and the Pod crash-loops\. It accepts akamai, .*webhook \(scaffold\.yaml charts external-dns, read at kubernetes-sigs\/external-dns@external-dns-helm-chart-1\.21\.1\)$/,
    );
  });

  it('passes the webhook provider on 1.21.1 and designate on 1.16.1, and fails designate on 1.21.1', () => {
    const ok = checkReleaseOptions(
      [layer('dns', [externalDns('1.21.1', { provider: { name: 'webhook' } })]), layer('d2', [externalDns('1.16.1', { provider: { name: 'designate' } })])],
      prerequisites,
    );
    assert.deepEqual(ok, []);
    const bad = checkReleaseOptions([layer('dns', [externalDns('1.21.1', { provider: 'designate' })])], prerequisites).map(formatFinding);
    assert.equal(bad.length, 1);
    assert.match(bad[0]!, /sets provider "designate" \(values provider\), which external-dns 1\.21\.1/);
  });

  it('decides by the value helm-controller would install with, however it is given (property)', () => {
    const provider = fc.oneof(fc.constantFrom(...allowed, 'digitalocean', 'designate', 'Route53', 'aws ', ''), fc.string({ maxLength: 12 }));
    const form = fc.constantFrom('values.name', 'values.string', 'configMap', 'secretTargetPath', 'overriddenByValues');
    fc.assert(
      fc.property(provider, form, (value, how) => {
        const objects: Record<string, unknown>[] = [];
        let effective = value;
        let release: Record<string, unknown>;
        if (how === 'values.name') release = externalDns('1.21.1', { provider: { name: value } });
        else if (how === 'values.string') release = externalDns('1.21.1', { provider: value });
        else if (how === 'configMap') {
          objects.push({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'p', namespace: 'external-dns' },
            data: { 'values.yaml': stringify({ provider: { name: value } }) },
          });
          release = externalDns('1.21.1', {}, [{ kind: 'ConfigMap', name: 'p' }]);
        } else if (how === 'secretTargetPath') {
          objects.push({
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 's', namespace: 'external-dns' },
            data: { p: Buffer.from(value).toString('base64') },
          });
          release = externalDns('1.21.1', {}, [{ kind: 'Secret', name: 's', valuesKey: 'p', targetPath: 'provider.name' }]);
        } else {
          // values win over valuesFrom, as in helm-controller's merge.
          objects.push({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'p', namespace: 'external-dns' },
            data: { 'values.yaml': stringify({ provider: { name: 'digitalocean' } }) },
          });
          release = externalDns('1.21.1', { provider: { name: value } }, [{ kind: 'ConfigMap', name: 'p' }]);
          effective = value;
        }
        const findings = checkReleaseOptions([layer('dns', [...objects, release])], prerequisites);
        // A ${variable} is substituted on the cluster: not known here, so not judged.
        const judged = !/\$\{[A-Za-z_][A-Za-z0-9_]*[^}]*\}/.test(effective);
        assert.equal(findings.length, judged && !allowed.includes(effective) ? 1 : 0, `${how} ${JSON.stringify(value)}`);
      }),
      { numRuns: 300 },
    );
  });

  it('fails Cilium 1.18.2 released where nothing installs TLSRoute (the standard channel only), and passes it with the TLSRoute Kustomization', () => {
    const cilium = {
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: 'cilium', namespace: 'kube-system' },
      spec: { chart: { spec: { chart: 'cilium', version: '1.18.2' } }, values: {} },
    };
    const crdKustomization = (name: string) => ({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name, namespace: 'flux-system' },
      spec: {},
    });
    const standardOnly = checkReleaseOptions([layer('bootstrap', [cilium, crdKustomization('gateway-api')])], prerequisites).map(formatFinding);
    assert.deepEqual(standardOnly, [
      'bootstrap: HelmRelease kube-system/cilium: cilium 1.18.2 (1.18.2) needs gateway.networking.k8s.io/TLSRoute before its controller starts, and nothing on this cluster installs it: the feature stays off until someone restarts it. Install the CRD in a Kustomization this release waits for (scaffold.yaml charts cilium, read at cilium/cilium@v1.18.2)',
    ]);
    assert.deepEqual(
      checkReleaseOptions([layer('bootstrap', [cilium, crdKustomization('gateway-api'), crdKustomization('gateway-api-tlsroute')])], prerequisites),
      [],
    );
  });

  it('checks nothing for a release scaffold.yaml does not record', () => {
    assert.deepEqual(checkReleaseOptions([layer('dns', [externalDns('1.22.0', { provider: 'digitalocean' })])], prerequisites), []);
  });
});
