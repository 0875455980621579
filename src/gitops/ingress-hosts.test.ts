import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import type { FoundObject } from './layer-resources.js';
import { PLACEHOLDER_SUFFIX, renderHostsComponent, serviceHostOf } from './ingress-hosts.js';

function ingress(name: string, spec: Record<string, unknown>, namespace: string | null = 'tcr'): FoundObject {
  return {
    file: `base/apps/${name}/ingress.yaml`,
    object: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, ...(namespace ? { namespace } : {}) }, spec },
  };
}

const rule = (host: string, path = '/') => ({
  host,
  http: { paths: [{ path, pathType: 'Prefix', backend: { service: { name: 'svc', port: { name: 'http' } } } }] },
});

describe('serviceHostOf', () => {
  it('strips the base placeholder suffix', () => {
    assert.equal(PLACEHOLDER_SUFFIX, '.base.invalid');
    assert.equal(serviceHostOf('api.base.invalid'), 'api');
    assert.equal(serviceHostOf('hooks.base.invalid'), 'hooks');
  });

  it('keeps every label in front of the placeholder', () => {
    assert.equal(serviceHostOf('eu.api.base.invalid'), 'eu.api');
  });

  it('keeps the first label of a host that has no placeholder', () => {
    assert.equal(serviceHostOf('console.dev.tantilium.example.com'), 'console');
    assert.equal(serviceHostOf('localhost'), 'localhost');
  });
});

describe('renderHostsComponent', () => {
  it('writes one JSON6902 patch per Ingress: a test of each base host, then its replacement', () => {
    const files = renderHostsComponent(
      [
        ingress('tcr-api', {
          tls: [{ hosts: ['api.base.invalid', 'hooks.base.invalid'], secretName: 'tls' }],
          rules: [rule('api.base.invalid'), rule('hooks.base.invalid', '/webhooks')],
        }),
      ],
      'eu-prod-1.example.net',
    );
    assert.deepEqual([...files.keys()].sort(), ['hosts/kustomization.yaml', 'hosts/tcr-api.yaml']);
    assert.deepEqual(parse(files.get('hosts/tcr-api.yaml')!), [
      { op: 'test', path: '/spec/rules/0/host', value: 'api.base.invalid' },
      { op: 'replace', path: '/spec/rules/0/host', value: 'api.eu-prod-1.example.net' },
      { op: 'test', path: '/spec/rules/1/host', value: 'hooks.base.invalid' },
      { op: 'replace', path: '/spec/rules/1/host', value: 'hooks.eu-prod-1.example.net' },
      { op: 'test', path: '/spec/tls/0/hosts/0', value: 'api.base.invalid' },
      { op: 'replace', path: '/spec/tls/0/hosts/0', value: 'api.eu-prod-1.example.net' },
      { op: 'test', path: '/spec/tls/0/hosts/1', value: 'hooks.base.invalid' },
      { op: 'replace', path: '/spec/tls/0/hosts/1', value: 'hooks.eu-prod-1.example.net' },
    ]);
  });

  it('never touches the rules themselves, so every path and backend survives', () => {
    const files = renderHostsComponent([ingress('tcr-docs', { rules: [rule('docs.base.invalid', '/docs')] })], 'example.org');
    for (const op of parse(files.get('hosts/tcr-docs.yaml')!) as { path: string }[]) assert.match(op.path, /^\/spec\/(rules\/\d+\/host|tls\/\d+\/hosts\/\d+)$/);
  });

  it('lists the patches in a Component, sorted by Ingress, each targeting its Ingress', () => {
    const files = renderHostsComponent(
      [ingress('tcr-web', { rules: [rule('web.base.invalid')] }), ingress('tcr-api', { rules: [rule('api.base.invalid')] }, null)],
      'eu-prod-1.example.net',
    );
    const component = parse(files.get('hosts/kustomization.yaml')!) as Record<string, unknown>;
    assert.equal(component.apiVersion, 'kustomize.config.k8s.io/v1alpha1');
    assert.equal(component.kind, 'Component');
    assert.deepEqual(component.patches, [
      { path: 'tcr-api.yaml', target: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', name: 'tcr-api' } },
      { path: 'tcr-web.yaml', target: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', name: 'tcr-web', namespace: 'tcr' } },
    ]);
  });

  it('gives Ingresses of the same name in two namespaces a patch each', () => {
    const files = renderHostsComponent(
      [ingress('web', { rules: [rule('web.base.invalid')] }, 'blue'), ingress('web', { rules: [rule('www.base.invalid')] }, 'green')],
      'example.org',
    );
    const component = parse(files.get('hosts/kustomization.yaml')!) as { patches: { path: string; target: { namespace: string } }[] };
    assert.deepEqual(component.patches.map((p) => `${p.target.namespace}:${p.path}`).sort(), ['blue:blue.web.yaml', 'green:green.web.yaml']);
    assert.match(files.get('hosts/blue.web.yaml')!, /value: web\.example\.org$/m);
    assert.match(files.get('hosts/green.web.yaml')!, /value: www\.example\.org$/m);
  });

  it('skips rules without a host, and writes nothing when no Ingress has one', () => {
    const files = renderHostsComponent(
      [
        ingress('catch-all', { defaultBackend: { service: { name: 'svc', port: { number: 80 } } }, rules: [{ http: { paths: [] } }] }),
        { file: 'base/apps/x/service.yaml', object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'x' } } },
        {
          file: 'base/apps/x/old.yaml',
          object: { apiVersion: 'extensions/v1beta1', kind: 'Ingress', metadata: { name: 'old' }, spec: { rules: [rule('old.base.invalid')] } },
        },
      ],
      'eu-prod-1.example.net',
    );
    assert.equal(files.size, 0);
  });
});
