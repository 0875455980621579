/**
 * Issue 11: trees that really reconcile. The shipped platforms, rendered, in
 * the order Flux reconciles them on a fresh cluster (bootstrap first, every
 * Kustomization after what it depends on), pass verify's apply-order
 * simulation; and each defect the issue found in them, put back on purpose,
 * is a verify finding naming the file, the object and the fix.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { renderWorkTree } from '../../src/git/render-work-tree.js';
import { verifyWorkTree } from '../../src/workspace/verify-work-tree.js';
import { initPlatformRepository } from '../../src/git/seed-repository.js';
import { fluxGraphOf, refKey } from '../../src/graph/flux-graph.js';
import { topoSort } from '../../src/graph/topo-sort.js';
import { KubectlKustomize } from '../../src/kustomize/kubectl-kustomize.js';
import { platformDir } from '../../src/package-paths.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';

const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
const kustomize = new KubectlKustomize();
const ENV_AWS = { name: 'env-aws', domain: 'env-aws.mojaloop.example.net', region: 'eu-west-1', role: 'env', infra_provider: 'aws', dns_provider: 'route53' };
const ENV_PROXMOX = {
  name: 'env-proxmox',
  domain: 'env-proxmox.mojaloop.example.net',
  region: 'fra-dc2',
  role: 'env',
  infra_provider: 'proxmox',
  dns_provider: 'digitalocean',
};
const PROD = { name: 'eu-prod-1', domain: 'prod.tantilium.example.com', region: 'eu-west-1' };

/** Rewrites a file of the repository for the duration of `check`, then puts it back. */
async function withEdit(repo: string, file: string, change: (text: string) => string, check: () => Promise<void>): Promise<void> {
  const path = join(repo, file);
  const original = await readFile(path, 'utf8');
  const changed = change(original);
  assert.notEqual(changed, original, `the edit of ${file} changed nothing`);
  await writeFile(path, changed);
  try {
    await check();
  } finally {
    await writeFile(path, original);
  }
}

async function findings(repo: string, cluster: string): Promise<readonly string[]> {
  return (await verifyWorkTree(repo, { cluster })).findings;
}

/** The cluster's Kustomizations in the order Flux can reconcile them, dependencies first. */
async function reconcileOrder(repo: string, gitopsPath: string): Promise<{ order: string[]; dependsOn: Map<string, Set<string>> }> {
  const objects = parseAllDocuments(await kustomize.build(repo, gitopsPath)).map((d) => ({ object: d.toJS() as unknown }));
  const graph = fluxGraphOf(objects);
  const dependsOn = new Map<string, Set<string>>();
  const closure = (key: string, seen = new Set<string>()): Set<string> => {
    for (const dep of graph.nodes.find((n) => refKey(n) === key)?.dependsOn ?? []) {
      if (!seen.has(refKey(dep))) closure(refKey(dep), seen.add(refKey(dep)));
    }
    return seen;
  };
  for (const node of graph.nodes) dependsOn.set(node.name, new Set([...closure(refKey(node))].map((k) => k.split('/')[1]!)));
  return { order: topoSort(graph.nodes).map((n) => n.name), dependsOn };
}

describe('issue 11: the shipped platforms reconcile in Flux order on a fresh cluster', () => {
  let tmp: string;
  let matrix: string;
  let platform: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'reconcile-'));
    matrix = join(tmp, 'matrix');
    platform = join(tmp, 'default');
    await initPlatformRepository(matrix, platformDir('matrix-example'));
    await initPlatformRepository(platform, platformDir('default'));
    for (const cluster of [ENV_AWS, ENV_PROXMOX]) await renderWorkTree(matrix, { cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    await renderWorkTree(platform, { cluster: PROD, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('matrix-example: bootstrap first, everything after it, cluster-secrets unsealed before any layer substitutes from it; verify passes', async () => {
    for (const cluster of [ENV_AWS, ENV_PROXMOX]) {
      const { order, dependsOn } = await reconcileOrder(matrix, `clusters/${cluster.name}`);
      assert.equal(order[0], 'bootstrap', cluster.name);
      for (const name of order.slice(1)) assert.ok(dependsOn.get(name)!.has('bootstrap'), `${cluster.name}: ${name} waits for bootstrap`);
      for (const name of ['platform', 'env-auth']) assert.ok(dependsOn.get(name)!.has('secrets'), `${cluster.name}: ${name} waits for the secrets layer`);
      assert.deepEqual(await findings(matrix, cluster.name), [], cluster.name);
    }
  });

  it('default: apps reconciles after database, whose PostgreSQL it connects to; verify passes', async () => {
    const { order, dependsOn } = await reconcileOrder(platform, 'clusters/eu-prod-1');
    assert.equal(order[0], 'infrastructure');
    assert.ok(dependsOn.get('apps')!.has('database'));
    assert.deepEqual(await findings(platform, 'eu-prod-1'), []);
  });

  it('defect: a SealedSecret in the root sync deadlocks a fresh cluster', async () => {
    await withEdit(
      matrix,
      'clusters/env-aws/flux/kustomization.yaml',
      (t) => t.replace('  - cluster-config.yaml\n', '  - cluster-config.yaml\n  - ../secrets/sealed\n'),
      async () => {
        assert.ok(
          (await findings(matrix, 'env-aws')).includes(
            'clusters/env-aws: SealedSecret flux-system/cluster-secrets: bitnami.com/SealedSecret is a custom resource in the root sync, which applies before any layer (its CRD comes from Kustomization flux-system/bootstrap): its dry run fails and no layer is ever created. Move it into a layer that depends on flux-system/bootstrap',
          ),
        );
      },
    );
  });

  it('defect: Cilium, the CNI, in a layer after platform -> dns -> platform-config', async () => {
    await withEdit(
      matrix,
      'bootstrap/aws/kustomization.yaml',
      (t) => t.replace('  - ../cilium-eni\n', ''),
      async () => {
        await withEdit(
          matrix,
          'aws/kustomization.yaml',
          (t) => t.replace('  - storage-class.yaml\n', '  - storage-class.yaml\n  - ../bootstrap/cilium-eni\n'),
          async () => {
            assert.deepEqual(
              (await findings(matrix, 'env-aws')).filter((f) => f.includes('CNI')),
              [
                'aws: HelmRelease kube-system/cilium: releases the CNI chart cilium from Kustomization flux-system/aws, after the bootstrap layer: no node is Ready until it runs, so nothing before it can start. Move it into bootstrap/aws (bootstrap layer flux-system/bootstrap)',
              ],
            );
          },
        );
      },
    );
  });

  it('defect: nothing installs the Gateway API CRDs the Gateways of platform-config need', async () => {
    await withEdit(
      matrix,
      'bootstrap/aws/kustomization.yaml',
      (t) => t.replace('  - ../gateway-api\n', ''),
      async () => {
        const lines = await findings(matrix, 'env-aws');
        assert.ok(
          lines.includes(
            'platform-config: Gateway gateway/gw-ext: gateway.networking.k8s.io/Gateway does not exist yet when Kustomization flux-system/platform-config applies it: no Kustomization of clusters/env-aws installs it: add its CRD to a layer flux-system/platform-config depends on, declare the chart that installs it in scaffold.yaml charts, or list it in scaffold.yaml provided.crds',
          ),
          lines.join('\n'),
        );
        assert.ok(
          lines.some((l) =>
            l.startsWith('clusters/env-aws/flux/bootstrap.yaml: Kustomization flux-system/bootstrap: does not install gateway.networking.k8s.io/Gateway'),
          ),
          lines.join('\n'),
        );
      },
    );
  });

  it('defect: Keycloak on AWS pointed at the in-cluster MySQL of env-data, which AWS clusters skip', async () => {
    await withEdit(
      matrix,
      'env-auth/keycloak.yaml',
      (t) => t.replace('hostname: ${mysql_host}', 'hostname: mysql-haproxy.data.svc'),
      async () => {
        assert.deepEqual(await findings(matrix, 'env-aws'), [
          "env-auth: HelmRelease auth/keycloak: mysql-haproxy.data.svc names Service data/mysql-haproxy, which nothing in the cluster's tree creates: it resolves to nothing on this cluster. Point it at a cluster-config variable (e.g. a managed service's endpoint per provider), or add the layer that runs it",
        ]);
        // On a self-hosted cluster, env-data runs it, before env-auth.
        assert.deepEqual(await findings(matrix, 'env-proxmox'), []);
      },
    );
    const config = (parse(await readFile(join(matrix, 'clusters/env-aws/flux/cluster-config.yaml'), 'utf8')) as { data: Record<string, string> }).data;
    assert.equal(config.mysql_host, 'mysql.data.internal');
  });

  it('defect: the cert-manager ServiceMonitor scrapes tcp-prometheus-servicemonitor, which chart v1.21 names http-metrics', async () => {
    await withEdit(
      platform,
      'base/infrastructure/kube-prometheus-stack.yaml',
      (t) => t.replace('- port: http-metrics', '- port: tcp-prometheus-servicemonitor'),
      async () => {
        assert.deepEqual(await findings(platform, 'eu-prod-1'), [
          'clusters/eu-prod-1/infrastructure: HelmRelease monitoring/kube-prometheus-stack values.prometheus.additionalServiceMonitors[1] (ServiceMonitor cert-manager): endpoints[0].port "tcp-prometheus-servicemonitor" is not a port of the Services it selects ("http-metrics"): nothing is scraped. Use one of those names',
        ]);
      },
    );
  });

  it('defect: apps does not wait for database', async () => {
    await withEdit(
      platform,
      'clusters/eu-prod-1/flux/apps.yaml',
      (t) => t.replace('    - name: database\n', ''),
      async () => {
        assert.deepEqual(await findings(platform, 'eu-prod-1'), [
          'clusters/eu-prod-1/apps: Deployment tcr/tcr-api: postgresql.database.svc.cluster.local is Service database/postgresql, applied by Kustomization flux-system/database, which Kustomization flux-system/apps does not depend on: it would start against nothing. Add dependsOn flux-system/database to Kustomization flux-system/apps',
        ]);
      },
    );
  });

  it('defect: the registry pull secret is for a registry no image comes from', async () => {
    const descriptor = parse(await readFile(join(platform, 'scaffold.yaml'), 'utf8')) as {
      credentials: { name: string; namespace: string; keys: Record<string, { registry?: string }> }[];
    };
    const pull = descriptor.credentials.find((c) => c.name === 'registry-pull-secret')!;
    const registry = pull.keys['.dockerconfigjson']!.registry!;
    const objects = parseAllDocuments(await kustomize.build(platform, 'clusters/eu-prod-1/apps')).map(
      (d) => d.toJS() as { kind?: string; spec?: { template?: { spec?: { imagePullSecrets?: { name: string }[]; containers: { image: string }[] } } } },
    );
    const images = objects.flatMap((o) => {
      const pod = o.kind === 'Deployment' ? o.spec?.template?.spec : undefined;
      return pod?.imagePullSecrets?.some((s) => s.name === pull.name) ? pod.containers.map((c) => c.image) : [];
    });
    assert.ok(images.length > 0);
    for (const image of images) assert.equal(image.split('/')[0], registry, `${image} is pulled with the secret for ${registry}`);
  });
});
