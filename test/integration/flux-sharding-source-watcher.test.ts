/**
 * The last three Flux practices of spec 004 (issue 25) on the shipped
 * platforms, switched on in their scaffold.yaml: sharding (the apps layer goes
 * to shard `apps`), the allow-egress widening for Cilium's Gateway, and
 * source-watcher where a Kustomization sources from an ExternalArtifact. The
 * FluxInstance validates against the real CRDs of ../shared/crds, the tree
 * builds with real kubectl kustomize and passes verify, and each verify rule
 * fails the tree it is meant to fail.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument, stringify } from 'yaml';
import { ValidationError } from '../../src/errors.js';
import { renderWorkTree } from '../../src/git/render-work-tree.js';
import { initPlatformRepository } from '../../src/git/seed-repository.js';
import { KubectlKustomize } from '../../src/kustomize/kubectl-kustomize.js';
import { platformDir } from '../../src/package-paths.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { verifyWorkTree } from '../../src/workspace/verify-work-tree.js';
import { crdValidator, objectsOf as objectsOfText } from '../support/shared-crds.js';

type Obj = Record<string, unknown> & {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
};

const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
const kustomize = new KubectlKustomize();
const validator = crdValidator();
const objectsOf = (text: string): Obj[] => objectsOfText<Obj>(text);

const PLATFORMS = {
  default: {
    cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' },
    syncUrl: 'https://github.com/acme/platform.git',
    // The reference's layer named like the shard.
    appsLayer: 'apps',
    sharding: { shards: ['apps'] },
  },
  'matrix-example': {
    cluster: { name: 'env-aws', domain: 'env-aws.example.net', region: 'eu-west-1', role: 'env', infra_provider: 'aws', dns_provider: 'route53' },
    syncUrl: 'https://gitlab.com/acme/platform.git',
    // Mojaloop and the Finance Portal: the env role's application layer.
    appsLayer: 'env-app',
    sharding: { shards: ['apps'], layers: { 'env-app': 'apps' } },
  },
} as const;

/** scaffold.yaml with the Flux Operator on and `fluxInstance` extended by `extra`; comments kept. */
async function switchOn(repo: string, extra: Record<string, unknown>): Promise<void> {
  const file = join(repo, 'scaffold.yaml');
  const doc = parseDocument(await readFile(file, 'utf8'));
  doc.setIn(['fluxInstance', 'enabled'], true);
  for (const [key, value] of Object.entries(extra)) doc.setIn(['fluxInstance', key], doc.createNode(value));
  await writeFile(file, doc.toString());
}

for (const [platform, setup] of Object.entries(PLATFORMS)) {
  describe(`${platform}: sharding, the Gateway's way through allow-egress and source-watcher switched on`, () => {
    let tmp: string;
    let pristine: string;
    const dir = `clusters/${setup.cluster.name}`;
    const render = (repo: string) =>
      renderWorkTree(repo, { cluster: setup.cluster, pass: 'all', certificate, generatorVersion: 't', fluxInstance: true, syncUrl: setup.syncUrl });

    before(async () => {
      tmp = await mkdtemp(join(tmpdir(), 'flux-sharding-'));
      pristine = join(tmp, 'pristine');
      await initPlatformRepository(pristine, platformDir(platform));
      await switchOn(pristine, { sharding: setup.sharding, networkPolicy: { allowGatewayIngress: true } });
      await render(pristine);
    });
    after(async () => {
      await rm(tmp, { recursive: true, force: true });
    });

    /** The findings of verify on a copy of the tree with one file edited. */
    async function findingsAfter(rel: string, edit: (objects: Obj[]) => void): Promise<string[]> {
      const copy = join(tmp, `copy-${Math.random().toString(36).slice(2)}`);
      await cp(pristine, copy, { recursive: true });
      const file = join(copy, dir, rel);
      const objects = objectsOf(await readFile(file, 'utf8'));
      edit(objects);
      await writeFile(file, objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n'));
      return [...(await verifyWorkTree(copy, { cluster: setup.cluster.name })).findings];
    }

    it('renders a FluxInstance with the shard and the allow-egress patch, valid against the shared CRD, labels only the apps layer, builds and passes verify', async () => {
      const [instance] = objectsOf(await readFile(join(pristine, dir, 'flux/flux-instance.yaml'), 'utf8'));
      assert.deepEqual(await validator.validate(instance), { status: 'checked', issues: [] });
      assert.deepEqual(instance!.spec!.sharding, { key: 'sharding.fluxcd.io/key', shards: ['apps'] });
      const patches = (instance!.spec!.kustomize as { patches: { target: { kind: string; name: string } }[] }).patches;
      assert.deepEqual(
        patches.filter((p) => p.target.kind === 'NetworkPolicy').map((p) => p.target.name),
        ['allow-egress'],
      );
      assert.ok(!(instance!.spec!.components as string[]).includes('source-watcher'), 'no Kustomization sources from an ExternalArtifact');
      const root = objectsOf(await kustomize.build(pristine, dir));
      const labelled = root.filter((o) => o.kind === 'Kustomization' && o.metadata.labels?.['sharding.fluxcd.io/key'] !== undefined);
      assert.deepEqual(
        labelled.map((o) => `${o.metadata.name}=${o.metadata.labels!['sharding.fluxcd.io/key']}`),
        [`${setup.appsLayer}=apps`],
      );
      assert.deepEqual((await verifyWorkTree(pristine, { cluster: setup.cluster.name })).findings, []);
    });

    it('verify flags a layer labelled for a shard the FluxInstance does not run, and a shard label on a cluster without sharding', async () => {
      const wrong = await findingsAfter(`flux/${setup.appsLayer}.yaml`, ([k]) => {
        k!.metadata.labels!['sharding.fluxcd.io/key'] = 'app';
      });
      assert.deepEqual(wrong, [
        `${dir}: Kustomization flux-system/${setup.appsLayer}: is labelled sharding.fluxcd.io/key=app, which is no shard of the cluster's FluxInstance (apps): the main controllers skip every object carrying sharding.fluxcd.io/key and no shard takes this one, so it is never reconciled. Label it with one of the shards, or drop the label`,
      ]);
      const unsharded = await findingsAfter('flux/flux-instance.yaml', ([instance]) => {
        delete instance!.spec!.sharding;
      });
      assert.deepEqual(unsharded, [
        `${dir}: Kustomization flux-system/${setup.appsLayer}: is labelled sharding.fluxcd.io/key=apps, but the cluster's FluxInstance has no spec.sharding: no shard controller exists for it, and with sharding on the main controllers would skip it, so nobody would reconcile it. Drop the label, or add the shard (fluxInstance.sharding in scaffold.yaml)`,
      ]);
    });

    it('verify flags a Kustomization sourcing from an ExternalArtifact on a cluster whose FluxInstance has no source-watcher', async () => {
      const findings = await findingsAfter(`flux/${setup.appsLayer}.yaml`, ([k]) => {
        k!.spec!.sourceRef = { kind: 'ExternalArtifact', name: setup.appsLayer, namespace: 'flux-system' };
      });
      assert.ok(
        findings.includes(
          `${dir}: Kustomization flux-system/${setup.appsLayer}: sources from ExternalArtifact ${setup.appsLayer}, which only source-watcher produces (it reconciles the ArtifactGenerator), but the cluster's FluxInstance components do not include source-watcher: the Kustomization is never Ready. Add source-watcher to spec.components (a render adds it when the tree needs it)`,
        ),
        findings.join('\n'),
      );
    });

    if (platform === 'matrix-example') {
      it("verify flags a webhook route through the cluster's Cilium Gateway once allow-egress is no longer widened", async () => {
        const route = {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'HTTPRoute',
          metadata: { name: 'flux-webhook', namespace: 'flux-system' },
          spec: { parentRefs: [{ name: 'gw-ext', namespace: 'gateway' }], rules: [{ backendRefs: [{ name: 'webhook-receiver', port: 80 }] }] },
        } as unknown as Obj;
        const message = `${dir}: HTTPRoute flux-system/flux-webhook: routes Cilium Gateway gateway/gw-ext to Service flux-system/webhook-receiver, but the FluxInstance's network policies admit only Pods there and Cilium's Gateway proxy reaches the backend as its ingress identity, which is no Pod: every request is dropped. Set fluxInstance.networkPolicy.allowGatewayIngress: true in scaffold.yaml`;
        const narrow = await findingsAfter('flux/flux-instance.yaml', (objects) => {
          const patches = (objects[0]!.spec!.kustomize as { patches: { target: { kind: string } }[] }).patches;
          (objects[0]!.spec!.kustomize as { patches: unknown[] }).patches = patches.filter((p) => p.target.kind !== 'NetworkPolicy');
          objects.push(route);
        });
        assert.ok(narrow.includes(message), narrow.join('\n'));
        const widened = await findingsAfter('flux/flux-instance.yaml', (objects) => {
          objects.push(route);
        });
        assert.ok(!widened.some((f) => f.includes('Cilium Gateway')), widened.join('\n'));
      });
    }

    it('refuses sharding with a layer the platform does not have, and sharding on a cluster rendered without a FluxInstance', async () => {
      const repo = join(tmp, 'refusals');
      await cp(pristine, repo, { recursive: true });
      await switchOn(repo, { sharding: { shards: ['apps'], layers: { 'no-such-layer': 'apps' } } });
      await assert.rejects(
        render(repo),
        (error: unknown) => error instanceof ValidationError && error.issues.some((i) => i.field === 'fluxInstance.sharding.layers.no-such-layer'),
      );
      await switchOn(repo, { sharding: setup.sharding });
      await assert.rejects(
        renderWorkTree(repo, { cluster: { ...setup.cluster, name: 'plain-1' }, pass: 'all', certificate, generatorVersion: 't', fluxInstance: false }),
        (error: unknown) =>
          error instanceof ValidationError &&
          error.issues[0]!.field === 'fluxInstance.sharding' &&
          /only the Flux Operator runs shard controllers/.test(error.message),
      );
    });
  });
}

describe('default: source-watcher where a layer sources from an ExternalArtifact', () => {
  let tmp: string;
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('adds source-watcher to the FluxInstance, valid against the shared CRD, and verify has nothing to say about its producer', async () => {
    tmp = await mkdtemp(join(tmpdir(), 'flux-source-watcher-'));
    const repo = join(tmp, 'gitops');
    await initPlatformRepository(repo, platformDir('default'));
    await switchOn(repo, {});
    // The reference's apps layer reads a slice an ArtifactGenerator makes of the repository.
    const layer = join(repo, 'clusters/development/flux/apps.yaml');
    await writeFile(
      layer,
      (await readFile(layer, 'utf8')).replace(
        /sourceRef:\n {4}kind: GitRepository\n {4}name: flux-system/,
        'sourceRef:\n    kind: ExternalArtifact\n    name: apps',
      ),
    );
    const { cluster, syncUrl } = PLATFORMS.default;
    await renderWorkTree(repo, { cluster, pass: 'all', certificate, generatorVersion: 't', fluxInstance: true, syncUrl });
    const dir = `clusters/${cluster.name}`;
    assert.match(await readFile(join(repo, dir, 'flux/apps.yaml'), 'utf8'), /kind: ExternalArtifact/);
    const [instance] = objectsOf(await readFile(join(repo, dir, 'flux/flux-instance.yaml'), 'utf8'));
    assert.deepEqual(await validator.validate(instance), { status: 'checked', issues: [] });
    assert.deepEqual(instance!.spec!.components, ['source-controller', 'kustomize-controller', 'helm-controller', 'notification-controller', 'source-watcher']);
    const findings = (await verifyWorkTree(repo, { cluster: cluster.name })).findings;
    assert.deepEqual(
      findings.filter((f) => f.includes('source-watcher')),
      [],
    );
  });
});
