import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AppliedKustomization } from './applied-object.js';
import { appliedLayer } from './test-applied-layer.js';
import { formatFinding } from './finding.js';
import { checkGatewayFluxIngress } from './gateway-flux-ingress.js';

const instance = (extra: Record<string, unknown> = {}) => ({
  apiVersion: 'fluxcd.controlplane.io/v1',
  kind: 'FluxInstance',
  metadata: { name: 'flux', namespace: 'flux-system' },
  spec: { distribution: { version: '2.x' }, components: ['notification-controller'], ...extra },
});
const WIDENED = { kustomize: { patches: [{ target: { kind: 'NetworkPolicy', name: 'allow-egress' }, patch: '- op: add\n' }] } };
const gateway = (className: string) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'gw-ext', namespace: 'gateway' },
  spec: { gatewayClassName: className, listeners: [{ name: 'https', port: 443, protocol: 'HTTPS' }] },
});
const receiverRoute = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'flux-webhook' },
  spec: {
    parentRefs: [{ name: 'gw-ext', namespace: 'gateway' }],
    hostnames: ['flux.example.net'],
    rules: [{ backendRefs: [{ name: 'webhook-receiver', port: 80 }] }],
  },
};
const layer = (name: string, objects: Record<string, unknown>[], targetNamespace?: string) =>
  appliedLayer(name, objects, targetNamespace ? { targetNamespace } : {});
const check = (rootObjects: Record<string, unknown>[], layers: AppliedKustomization[]) =>
  checkGatewayFluxIngress({ clusterDir: 'clusters/c', kustomizations: layers, rootObjects }).map(formatFinding);

describe("routes from Cilium's Gateway to flux-system that its network policies drop", () => {
  it('flags a webhook route through a Cilium Gateway when allow-egress is not widened', () => {
    assert.deepEqual(check([instance()], [layer('gateways', [gateway('cilium')]), layer('flux-webhook', [receiverRoute], 'flux-system')]), [
      "flux-webhook: HTTPRoute flux-webhook: routes Cilium Gateway gateway/gw-ext to Service flux-system/webhook-receiver, but the FluxInstance's network policies admit only Pods there and Cilium's Gateway proxy reaches the backend as its ingress identity, which is no Pod: every request is dropped. Set fluxInstance.networkPolicy.allowGatewayIngress: true in scaffold.yaml",
    ]);
  });

  it('recognises a Cilium GatewayClass of the tree under another name', () => {
    const gatewayClass = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'external' },
      spec: { controllerName: 'io.cilium/gateway-controller' },
    };
    assert.equal(
      check([instance()], [layer('gateways', [gatewayClass, gateway('external')]), layer('flux-webhook', [receiverRoute], 'flux-system')]).length,
      1,
    );
  });

  it('passes the route once allow-egress is widened, without network policies, through another Gateway, and to Services elsewhere', () => {
    const layers = [layer('gateways', [gateway('cilium')]), layer('flux-webhook', [receiverRoute], 'flux-system')];
    assert.deepEqual(check([instance(WIDENED)], layers), []);
    assert.deepEqual(check([instance({ cluster: { networkPolicy: false } })], layers), []);
    assert.deepEqual(
      check([instance()], [layer('gateways', [gateway('gke-l7-regional-external-managed')]), layer('flux-webhook', [receiverRoute], 'flux-system')]),
      [],
    );
    assert.deepEqual(check([instance()], [layer('gateways', [gateway('cilium')]), layer('apps', [receiverRoute], 'apps')]), []);
    assert.deepEqual(check([], layers), [], 'no FluxInstance: the policies are not the operator’s');
  });
});
