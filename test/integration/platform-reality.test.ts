/**
 * The shipped platforms against the pinned upstream releases (the "reality"
 * audit): each finding as what a cluster would get, read from the rendered
 * tree with real kubectl kustomize and checked against the real CRD schemas
 * of ../shared/crds. Builds only: `verify` of every matrix row is in
 * matrix.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { renderWorkTree } from '../../src/git/render-work-tree.js';
import { initPlatformRepository } from '../../src/git/seed-repository.js';
import { ValidationError } from '../../src/errors.js';
import { KubectlKustomize } from '../../src/kustomize/kubectl-kustomize.js';
import { platformDir } from '../../src/package-paths.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { PACKAGE_ROOT } from '../support/cli.js';
import { CRD_DIR, crdValidator, objectsOf as objectsOfText } from '../support/shared-crds.js';

type Obj = Record<string, unknown> & { kind?: string; metadata?: { name?: string; namespace?: string }; spec?: Record<string, unknown> };

const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
const kustomize = new KubectlKustomize();
const validator = crdValidator();

const objectsOf = (text: string): Obj[] => objectsOfText<Obj>(text);

const CLUSTERS = {
  proxmox: {
    name: 'tooling-proxmox',
    domain: 'tooling-proxmox.example.net',
    region: 'fra-dc2',
    role: 'tooling',
    infra_provider: 'proxmox',
    dns_provider: 'digitalocean',
  },
  aws: { name: 'env-aws', domain: 'env-aws.example.net', region: 'eu-west-1', role: 'env', infra_provider: 'aws', dns_provider: 'designate' },
  gcp: { name: 'env-gcp', domain: 'env-gcp.example.net', region: 'europe-west4', role: 'env', infra_provider: 'gcp', dns_provider: 'clouddns' },
  doks: {
    name: 'tooling-doks',
    domain: 'tooling-doks.example.net',
    region: 'nl-ams3',
    role: 'tooling',
    infra_provider: 'digitalocean',
    dns_provider: 'digitalocean',
  },
} as const;

describe('matrix-example against its pinned releases', () => {
  let tmp: string;
  let repo: string;
  /** Per cluster, each layer's build by layer name. */
  const builds = new Map<string, Map<string, Obj[]>>();
  const config = new Map<string, Record<string, string>>();

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'platform-reality-'));
    repo = join(tmp, 'gitops');
    await initPlatformRepository(repo, platformDir('matrix-example'));
    for (const cluster of Object.values(CLUSTERS)) {
      const { result } = await renderWorkTree(repo, { cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
      const byLayer = new Map<string, Obj[]>();
      for (const layer of result.layers) byLayer.set(layer.name, objectsOf(await kustomize.build(repo, layer.path)));
      builds.set(cluster.name, byLayer);
      config.set(
        cluster.name,
        (parse(await readFile(join(repo, result.gitopsPath, 'flux/cluster-config.yaml'), 'utf8')) as { data: Record<string, string> }).data,
      );
    }
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const find = (cluster: string, kind: string, name: string): { layer: string; object: Obj } | undefined => {
    for (const [layer, objects] of builds.get(cluster)!) {
      const object = objects.find((o) => o.kind === kind && o.metadata?.name === name);
      if (object) return { layer, object };
    }
    return undefined;
  };
  const catalog = async () =>
    (
      parse(await readFile(join(repo, 'scaffold.yaml'), 'utf8')) as {
        layers: { name: string; wait?: boolean; healthChecks?: { kind: string; name: string }[] }[];
      }
    ).layers;

  it('runs DigitalOcean DNS through the webhook sidecar: external-dns 0.21.0 has no in-tree digitalocean provider', () => {
    for (const cluster of [CLUSTERS.proxmox.name, CLUSTERS.doks.name]) {
      const { object } = find(cluster, 'HelmRelease', 'external-dns')!;
      const spec = object.spec as {
        chart: { spec: { version: string } };
        values: { provider: { name: string; webhook: { image: { repository: string; tag: string }; args: string[] } }; extraArgs: string[] };
      };
      assert.equal(spec.chart.spec.version, '1.21.1');
      assert.equal(spec.values.provider.name, 'webhook');
      assert.deepEqual(spec.values.provider.webhook.image, { repository: 'ghcr.io/amoniacou/external-dns-digitalocean-webhook', tag: '0.1.2' });
      // The chart names and probes the sidecar's port 8080 (http-webhook); external-dns must call it there.
      assert.ok(spec.values.provider.webhook.args.includes('--port=8080'));
      assert.ok(spec.values.extraArgs.includes('--webhook-provider-url=http://localhost:8080'));
    }
  });

  it('runs designate on chart 1.16.1, the last whose binary has it, with Keystone credentials from the environment', () => {
    const { object } = find(CLUSTERS.aws.name, 'HelmRelease', 'external-dns')!;
    const spec = object.spec as { chart: { spec: { version: string } }; values: { provider: { name: string }; env: { name: string }[] } };
    assert.equal(spec.chart.spec.version, '1.16.1');
    assert.equal(spec.values.provider.name, 'designate');
    assert.deepEqual(spec.values.env.map((e) => e.name).sort(), [
      'OS_APPLICATION_CREDENTIAL_ID',
      'OS_APPLICATION_CREDENTIAL_SECRET',
      'OS_AUTH_URL',
      'OS_REGION_NAME',
    ]);
  });

  it('applies external-dns in a layer that waits for it, so the layer is not Ready while it crash-loops', async () => {
    const layers = await catalog();
    for (const cluster of Object.values(CLUSTERS)) {
      const { layer } = find(cluster.name, 'HelmRelease', 'external-dns')!;
      assert.equal(layer, 'dns', cluster.name);
      const spec = layers.find((l) => l.name === layer)!;
      assert.ok(spec.wait === true || spec.healthChecks?.some((h) => h.kind === 'HelmRelease' && h.name === 'external-dns'), `${layer} waits for external-dns`);
    }
  });

  it("installs TLSRoute (experimental, v1alpha2) in its own Kustomization, and Cilium's release waits for it", async () => {
    for (const cluster of [CLUSTERS.proxmox.name, CLUSTERS.aws.name]) {
      const bootstrap = builds.get(cluster)!.get('bootstrap')!;
      const source = bootstrap.find((o) => o.kind === 'GitRepository' && o.metadata?.name === 'gateway-api')!;
      const ignore = String(source.spec!.ignore);
      assert.match(ignore, /^!\/config\/crd\/experimental\/gateway\.networking\.k8s\.io_tlsroutes\.yaml$/m);
      // Only that file of the experimental channel: its copies of the standard CRDs would replace them.
      assert.doesNotMatch(ignore, /^!\/config\/crd\/experimental\/$/m);
      const tlsroute = bootstrap.find((o) => o.kind === 'Kustomization' && o.metadata?.name === 'gateway-api-tlsroute')!;
      assert.equal(tlsroute.spec!.path, './config/crd/experimental');
      assert.equal(tlsroute.spec!.prune, false);
      const gate = bootstrap.find((o) => o.kind === 'Kustomization' && o.metadata?.name === 'cilium-gateway-api')!;
      assert.deepEqual(gate.spec!.dependsOn, [{ name: 'gateway-api' }, { name: 'gateway-api-tlsroute' }]);
      const cilium = bootstrap.find((o) => o.kind === 'HelmRelease' && o.metadata?.name === 'cilium')!;
      assert.deepEqual(cilium.spec!.valuesFrom, [{ kind: 'ConfigMap', name: 'cilium-gateway-api', valuesKey: 'values.yaml' }]);
      // The gate's path holds that ConfigMap, and its values restart the operator.
      const gated = objectsOf(await kustomize.build(repo, String(gate.spec!.path).replace(/^\.\//, '')));
      const configMap = gated.find((o) => o.kind === 'ConfigMap' && o.metadata?.name === 'cilium-gateway-api' && o.metadata.namespace === 'kube-system')!;
      const values = parse((configMap.data as Record<string, string>)['values.yaml']!) as { operator: { podAnnotations: Record<string, string> } };
      assert.ok(Object.keys(values.operator.podAnnotations).length > 0);
      // As Flux applies the gate on a Git sync (postBuild substitution's default).
      const substituted = { ...gate, spec: { ...gate.spec, sourceRef: { ...(gate.spec!.sourceRef as object), kind: 'GitRepository' } } };
      for (const object of [source, tlsroute, substituted, cilium, configMap])
        assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
    }
    // The CRD Cilium 1.18 looks for is TLSRoute v1alpha2, which v1.3.0 has only in the experimental channel.
    const crd = parse(await readFile(join(CRD_DIR, 'gateway.networking.k8s.io_tlsroutes.experimental.yaml'), 'utf8')) as {
      metadata: { annotations: Record<string, string> };
      spec: { versions: { name: string; served: boolean }[] };
    };
    assert.equal(crd.metadata.annotations['gateway.networking.k8s.io/channel'], 'experimental');
    assert.ok(crd.spec.versions.some((v) => v.name === 'v1alpha2' && v.served));
  });

  it('applies no Gateway API CRDs on GKE, which manages its own, and records that in the descriptor', async () => {
    const bootstrap = builds.get(CLUSTERS.gcp.name)!.get('bootstrap')!;
    assert.ok(!bootstrap.some((o) => o.kind === 'GitRepository' && o.metadata?.name === 'gateway-api'));
    assert.ok(!bootstrap.some((o) => o.kind === 'Kustomization'));
    const scaffold = parse(await readFile(join(repo, 'scaffold.yaml'), 'utf8')) as {
      attributes: { infra_provider: { platform: Record<string, { crds?: string[] }> } };
    };
    assert.ok(scaffold.attributes.infra_provider.platform.gcp!.crds!.includes('gateway.networking.k8s.io/Gateway'));
  });

  it('puts gw-int on an internal class on GKE, never the external one gw-ext uses', () => {
    for (const cluster of Object.values(CLUSTERS)) {
      const data = config.get(cluster.name)!;
      const gateways = builds
        .get(cluster.name)!
        .get('platform-config')!
        .filter((o) => o.kind === 'Gateway');
      assert.equal(gateways.find((g) => g.metadata?.name === 'gw-int')!.spec!.gatewayClassName, '${gateway_class_internal}');
      assert.equal(gateways.find((g) => g.metadata?.name === 'gw-ext')!.spec!.gatewayClassName, '${gateway_class}');
      if (cluster.infra_provider === 'gcp') {
        assert.equal(data.gateway_class_internal, 'gke-l7-rilb');
        assert.notEqual(data.gateway_class_internal, data.gateway_class);
      }
    }
  });

  it('routes to Hubble UI only where Cilium runs it (Talos), to the Service its chart creates', () => {
    for (const cluster of Object.values(CLUSTERS)) {
      const route = find(cluster.name, 'HTTPRoute', 'hubble');
      const cilium = find(cluster.name, 'HelmRelease', 'cilium');
      const ui = (cilium?.object.spec as { values?: { hubble?: { ui?: { enabled?: boolean } } } } | undefined)?.values?.hubble?.ui?.enabled === true;
      assert.equal(route !== undefined, ui, cluster.name);
      if (route) {
        assert.equal(route.object.metadata!.namespace, 'kube-system');
        assert.deepEqual((route.object.spec as { rules: { backendRefs: unknown[] }[] }).rules[0]!.backendRefs, [{ name: 'hubble-ui', port: 80 }]);
      }
    }
  });

  it('gives keycloakx its database credentials, and puts no cluster-secrets value into any HelmRelease values', () => {
    const { object } = find(CLUSTERS.aws.name, 'HelmRelease', 'keycloak')!;
    const database = (object.spec as { values: { database: Record<string, string> } }).values.database;
    assert.equal(database.username, 'root');
    assert.equal(database.existingSecret, 'keycloak-credentials');
    const secret = find(CLUSTERS.aws.name, 'Secret', 'keycloak-credentials')!;
    assert.equal(secret.object.metadata!.namespace, object.metadata!.namespace);
    assert.ok(database.existingSecretKey! in (secret.object.stringData as Record<string, string>));
    for (const [cluster, layers] of builds) {
      for (const [layer, objects] of layers) {
        for (const release of objects.filter((o) => o.kind === 'HelmRelease')) {
          assert.doesNotMatch(JSON.stringify(release.spec!.values ?? {}), /_password\}/, `${cluster} ${layer} ${release.metadata!.name}`);
          for (const from of (release.spec!.valuesFrom ?? []) as { kind: string; name: string }[]) {
            if (from.kind !== 'Secret') continue;
            assert.ok(
              objects.some((o) => o.kind === 'Secret' && o.metadata?.name === from.name && o.metadata.namespace === release.metadata!.namespace),
              `${release.metadata!.name} reads Secret ${from.name} of its own layer and namespace`,
            );
          }
        }
      }
    }
  });

  it('refuses a FluxInstance on an infrastructure that has no CNI until Flux runs, naming the fact', async () => {
    const scaffold = join(repo, 'scaffold.yaml');
    const original = await readFile(scaffold, 'utf8');
    try {
      await writeFile(scaffold, original.replace('      aws: { cni: cluster }', '      aws: { cni: bootstrap }'));
      const cluster = { ...CLUSTERS.aws, name: 'env-aws-operator' };
      await assert.rejects(
        renderWorkTree(repo, {
          cluster,
          pass: 'infrastructure',
          certificate,
          generatorVersion: '0.0.0-test',
          fluxInstance: true,
          syncUrl: 'https://git.example.net/platform.git',
        }),
        (error: unknown) =>
          error instanceof ValidationError &&
          error.issues.length === 1 &&
          error.issues[0]!.field === 'flux-instance' &&
          /infrastructure provider aws has no CNI until Flux runs its bootstrap layer \(scaffold\.yaml attributes\.infra_provider\.platform\.aws\.cni: bootstrap\)/.test(
            error.issues[0]!.message,
          ),
      );
      assert.ok(!existsSync(join(repo, 'clusters/env-aws-operator')));
      // Without a FluxInstance the same row renders.
      await renderWorkTree(repo, { cluster, pass: 'infrastructure', certificate, generatorVersion: '0.0.0-test' });
    } finally {
      await writeFile(scaffold, original);
    }
    // As shipped, EKS is created with its Cilium (cni: cluster): a FluxInstance renders.
    const { result } = await renderWorkTree(repo, {
      cluster: { ...CLUSTERS.aws, name: 'env-aws-fi' },
      pass: 'infrastructure',
      certificate,
      generatorVersion: '0.0.0-test',
      fluxInstance: true,
      syncUrl: 'https://git.example.net/platform.git',
    });
    assert.equal(result.fluxInstance, true);
  });

  it('points the Cilium gate at the OCIRepository when a FluxInstance syncs from an OCI artifact', async () => {
    const { result } = await renderWorkTree(repo, {
      cluster: { ...CLUSTERS.proxmox, name: 'tooling-oci' },
      pass: 'all',
      certificate,
      generatorVersion: '0.0.0-test',
      fluxInstance: true,
      syncUrl: 'oci://registry.example.net/platform/gitops',
    });
    const data = (parse(await readFile(join(repo, result.gitopsPath, 'flux/cluster-config.yaml'), 'utf8')) as { data: Record<string, string> }).data;
    assert.equal(data.flux_source_kind, 'OCIRepository');
    // A Git sync leaves the key out, so the gate's default (GitRepository) applies.
    assert.equal(config.get(CLUSTERS.proxmox.name)!.flux_source_kind, undefined);
    const gate = builds
      .get(CLUSTERS.proxmox.name)!
      .get('bootstrap')!
      .find((o) => o.metadata?.name === 'cilium-gateway-api')!;
    assert.equal((gate.spec!.sourceRef as { kind: string }).kind, '${flux_source_kind:=GitRepository}');
  });
});

describe('the default platform against its pinned releases', () => {
  it('gives its FluxInstance the pull Secret of the private platform repository without --sync-secret', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'platform-reality-default-'));
    try {
      const repo = join(tmp, 'gitops');
      await initPlatformRepository(repo, platformDir('default'));
      const cluster = { name: 'staging', domain: 'staging.tantilium.example.com', region: 'eu-west-1' };
      const { result } = await renderWorkTree(repo, {
        cluster,
        pass: 'infrastructure',
        certificate,
        generatorVersion: '0.0.0-test',
        fluxInstance: true,
        syncUrl: 'ssh://git@git.example.net/platform/gitops.git',
      });
      const instance = parse(result.tree.get('clusters/staging/flux/flux-instance.yaml')!) as { spec: { sync: { pullSecret?: string } } };
      assert.equal(instance.spec.sync.pullSecret, 'flux-system');
      assert.deepEqual(await validator.validate(instance), { status: 'checked', issues: [] });
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});

describe('the fleet ResourceSetInputProvider example of docs/api.md', () => {
  it('is valid against the Flux Operator CRD and lifts filter.limit above the operator default of 100 inputs', async () => {
    const api = await readFile(join(PACKAGE_ROOT, 'docs/api.md'), 'utf8');
    const block = [...api.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('kind: ResourceSetInputProvider'))!;
    const provider = parse(block) as Obj & { spec: { filter?: { limit?: number } } };
    assert.deepEqual(await validator.validate(provider), { status: 'checked', issues: [] });
    const crd = parse(await readFile(join(CRD_DIR, 'fluxcd.controlplane.io_resourcesetinputproviders.yaml'), 'utf8')) as {
      spec: { versions: { schema: { openAPIV3Schema: unknown } }[] };
    };
    const at = (value: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], value);
    const operatorDefault = at(
      crd.spec.versions[0]!.schema.openAPIV3Schema,
      'properties',
      'spec',
      'properties',
      'filter',
      'properties',
      'limit',
      'default',
    ) as number;
    assert.equal(operatorDefault, 100);
    assert.ok((provider.spec.filter?.limit ?? operatorDefault) > operatorDefault, 'a fleet past 100 clusters would be cut silently');
    // The token's lifetime is explained next to it.
    assert.match(api, /--audience gitops-scaffolder --duration/);
  });
});
