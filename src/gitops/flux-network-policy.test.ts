import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ValidationError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { SchemaValidator } from '../verify/schema-validator.js';
import { renderFluxInstance } from './flux-instance.js';
import type { FluxInstancePatch } from './flux-tuning.js';
import { fluxInstanceSpecSchema } from './platform-descriptor.js';

const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });

type Instance = { spec: { kustomize?: { patches: FluxInstancePatch[] } } };
function instance(fluxInstance: unknown): Instance {
  return parse(
    renderFluxInstance(fluxInstanceSpecSchema.parse(fluxInstance), { clusterName: 'c1', syncUrl: 'https://git.example.net/platform/gitops.git' }).yaml,
  ) as Instance;
}

/**
 * Flux's manifests/policies/allow-egress.yaml as fluxcd/flux2 v2.9.4 ships it
 * (the operator installs it into flux-system with cluster.networkPolicy): every
 * Pod of the namespace, ingress from the namespace's own Pods only.
 */
const ALLOW_EGRESS = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: allow-egress
  namespace: flux-system
spec:
  policyTypes:
    - Ingress
    - Egress
  ingress:
  - from:
    - podSelector: {}
  egress:
    - {}
  podSelector: {}
`;
/** allow-webhooks of the same release: the receiver port, from Pods of any namespace. */
const ALLOW_WEBHOOKS = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: allow-webhooks
  namespace: flux-system
spec:
  policyTypes:
    - Ingress
  ingress:
    - from:
        - namespaceSelector: {}
      ports:
        - protocol: TCP
          port: 9292
  podSelector:
    matchLabels:
      app: notification-controller
`;

describe("allow-egress widened for Cilium's Gateway", () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'flux-network-policy-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  /** The policies after kustomize applies the FluxInstance's patches, as the operator does. */
  async function policiesAfterPatches(patches: readonly FluxInstancePatch[]): Promise<Record<string, { ingress: unknown[] }>> {
    const dir = await mkdtemp(join(tmp, 'build-'));
    await mkdir(join(dir, 'flux'));
    await writeFile(join(dir, 'flux', 'allow-egress.yaml'), ALLOW_EGRESS);
    await writeFile(join(dir, 'flux', 'allow-webhooks.yaml'), ALLOW_WEBHOOKS);
    const kustomization = {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['allow-egress.yaml', 'allow-webhooks.yaml'],
      patches,
    };
    await writeFile(join(dir, 'flux', 'kustomization.yaml'), JSON.stringify(kustomization));
    const built = await new KubectlKustomize().build(dir, 'flux');
    const out: Record<string, { ingress: unknown[] }> = {};
    for (const text of built.split(/^---$/m)) {
      const object = parse(text) as { metadata: { name: string }; spec: { ingress: unknown[] } };
      out[object.metadata.name] = { ingress: object.spec.ingress };
    }
    return out;
  }

  it('adds a rule admitting any source on the receiver port to allow-egress, and only to it, as real kustomize applies it', async () => {
    const object = instance({ networkPolicy: { allowGatewayIngress: true } });
    assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
    const patches = object.spec.kustomize!.patches.filter((p) => p.target.kind === 'NetworkPolicy');
    assert.deepEqual(
      patches.map((p) => p.target),
      [{ kind: 'NetworkPolicy', name: 'allow-egress' }],
    );
    const policies = await policiesAfterPatches(object.spec.kustomize!.patches);
    // A rule without `from` admits every source, Cilium's reserved ingress identity included; the namespace's own rule stays.
    assert.deepEqual(policies['allow-egress']!.ingress, [{ from: [{ podSelector: {} }] }, { ports: [{ protocol: 'TCP', port: 9292 }] }]);
    assert.deepEqual(policies['allow-webhooks']!.ingress, [{ from: [{ namespaceSelector: {} }], ports: [{ protocol: 'TCP', port: 9292 }] }]);
  });

  it('writes no NetworkPolicy patch by default', () => {
    assert.deepEqual(
      (instance({}).spec.kustomize?.patches ?? []).filter((p) => p.target.kind === 'NetworkPolicy'),
      [],
    );
  });

  it('refuses it where there is no allow-egress to widen, or no receiver behind it', () => {
    const refused = (fluxInstance: unknown, message: RegExp) =>
      assert.throws(
        () => instance(fluxInstance),
        (error: unknown) =>
          error instanceof ValidationError && error.issues[0]!.field === 'fluxInstance.networkPolicy.allowGatewayIngress' && message.test(error.message),
      );
    refused({ networkPolicy: { allowGatewayIngress: true }, cluster: { networkPolicy: false } }, /installs no allow-egress NetworkPolicy/);
    refused({ networkPolicy: { allowGatewayIngress: true }, components: ['source-controller', 'kustomize-controller'] }, /has no notification-controller/);
    assert.throws(() => fluxInstanceSpecSchema.parse({ networkPolicy: { allowGatewayIngress: 'yes' } }));
  });
});
