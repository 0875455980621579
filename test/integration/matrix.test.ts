/**
 * Spec 001's deployment matrix, rendered: each row's cluster, rendered from the
 * shipped matrix-example platform, gets exactly the listed Kustomizations in
 * the listed order, wired as the spec's dependency diagrams draw them, and
 * passes verify (real kubectl kustomize, the CRD schemas). Plus the FluxInstance
 * against the Flux Operator's CRD, and the cluster-secrets substitution Secret:
 * sealed, strict, and reported by verify as notes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { renderWorkTree } from '../../src/git/render-work-tree.js';
import { verifyWorkTree } from '../../src/workspace/verify-work-tree.js';
import { initPlatformRepository } from '../../src/git/seed-repository.js';
import type { RenderResult } from '../../src/gitops/render-cluster.js';
import { KubectlKustomize } from '../../src/kustomize/kubectl-kustomize.js';
import { platformDir } from '../../src/package-paths.js';
import { scopeLabel } from '../../src/sealing/seal.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { unsealValue } from '../../src/sealing/unseal.js';
import { assertExit, runCli } from '../support/cli.js';
import { crdValidator, objectsOf as objectsOfText } from '../support/shared-crds.js';
import { SEALED_WITH_ANNOTATION, sealedWithOf } from '../../src/gitops/sealed-with.js';

/**
 * Spec 001, "Deployment matrix", as written there: cluster, infra, DNS,
 * Kustomizations (in order), each chain after the bootstrap layer (the CNI,
 * the Gateway API CRDs, Sealed Secrets: bootstrap/<infra>) and the cluster's
 * sealed cluster-secrets (clusters/<name>/secrets), which everything depends on.
 */
const MATRIX = `
Tooling on Proxmox | proxmox | digitalocean | bootstrap -> secrets -> platform -> dns/digitalocean -> platform-config -> talos -> cc -> cc-config -> cc-routes, cc-observability -> cc-observability-routes
Tooling on AWS | aws | route53 | bootstrap -> secrets -> platform -> dns/route53 -> platform-config -> aws -> cc -> cc-config -> cc-routes, cc-observability -> cc-observability-routes
Env on Proxmox | proxmox | digitalocean | bootstrap -> secrets -> platform -> dns/digitalocean -> platform-config -> talos -> env -> env-data -> env-auth -> env-auth-config -> env-app, env-observability-agent
Env on AWS | aws | route53 | bootstrap -> secrets -> platform -> dns/route53 -> platform-config -> aws -> env -> env-auth -> env-auth-config -> env-app, env-observability-agent
Env on GCP | gcp | clouddns | bootstrap -> secrets -> platform -> dns/clouddns -> platform-config -> gcp -> env -> env-auth -> env-auth-config -> env-app, env-observability-agent
Env on DOKS | digitalocean | digitalocean | bootstrap -> secrets -> platform -> dns/digitalocean -> platform-config -> env -> env-auth -> env-auth-config -> env-app, env-observability-agent
`;

interface Row {
  readonly title: string;
  readonly cluster: { name: string; domain: string; region: string; role: string; infra_provider: string; dns_provider: string };
  /** The Kustomizations' paths in the listed order. */
  readonly order: readonly string[];
}

const REGIONS: Readonly<Record<string, string>> = { proxmox: 'fra-dc2', aws: 'eu-west-1', gcp: 'europe-west4', digitalocean: 'nl-ams3' };

/**
 * The Flux Kustomizations the bootstrap layer applies besides the layers: the
 * Gateway API CRDs (gateway-api, gateway-api-tlsroute) where the platform
 * does not manage them (GKE does), and cilium-gateway-api, which holds
 * Cilium's release until they are Ready, where Cilium is released.
 */
const NESTED: Readonly<Record<string, number>> = { proxmox: 3, aws: 3, gcp: 0, digitalocean: 2 };

const ROWS: Row[] = MATRIX.trim()
  .split('\n')
  .map((line) => {
    const [title, infra, dns, chain] = line.split('|').map((cell) => cell.trim()) as [string, string, string, string];
    const name = title.toLowerCase().replace(/ on /, '-');
    return {
      title,
      cluster: {
        name,
        domain: `${name}.mojaloop.example.net`,
        region: REGIONS[infra]!,
        role: title.startsWith('Tooling') ? 'tooling' : 'env',
        infra_provider: infra,
        dns_provider: dns,
      },
      order: chain.split(/ -> |, /).map((p) => (p === 'bootstrap' ? `bootstrap/${infra}` : p === 'secrets' ? `clusters/${name}/secrets` : p)),
    };
  });

/**
 * The edges of spec 001's flowcharts (Tooling Cluster; App Environment,
 * self-hosted and managed cloud; the DOKS note), as `layer <- dependency`, with
 * `vendor` and `dns` standing for the row's vendor and dns/<provider> layers.
 */
function expectedEdges(row: Row): string[] {
  const vendor = row.order.find((p) => ['talos', 'aws', 'gcp'].includes(p));
  const edges = ['secrets <- bootstrap', 'platform <- secrets', 'dns <- platform', 'platform-config <- dns'];
  if (vendor) edges.push(`${vendor} <- platform-config`);
  const afterVendor = vendor ?? 'platform-config';
  if (row.cluster.role === 'tooling') {
    edges.push(
      `cc <- ${afterVendor}`,
      'cc-config <- cc',
      'cc-routes <- cc-config',
      'cc-observability <- cc-config',
      'cc-observability-routes <- cc-observability',
    );
  } else {
    edges.push(`env <- ${afterVendor}`);
    if (row.order.includes('env-data')) edges.push('env-data <- env', 'env-auth <- env-data');
    else edges.push('env-auth <- env');
    edges.push('env-auth-config <- env-auth', 'env-app <- env-auth-config', 'env-observability-agent <- platform-config');
  }
  return edges.sort();
}

type Obj = Record<string, unknown> & {
  kind?: string;
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
};

const objectsOf = (text: string): Obj[] => objectsOfText<Obj>(text);

const controller = createTestCertificate();
const certificate = parseSealingCertificate(controller.certificatePem);
const kustomize = new KubectlKustomize();

describe("spec 001's deployment matrix, rendered from the matrix-example platform", () => {
  let tmp: string;
  let repo: string;
  const results = new Map<string, RenderResult>();

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'matrix-'));
    repo = join(tmp, 'gitops');
    await initPlatformRepository(repo, platformDir('matrix-example'));
    for (const row of ROWS) {
      const { result } = await renderWorkTree(repo, { cluster: row.cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
      results.set(row.title, result);
    }
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  for (const row of ROWS) {
    describe(row.title, () => {
      it(`renders exactly ${row.order.join(', ')}, in that order`, async () => {
        const result = results.get(row.title)!;
        assert.deepEqual(
          result.layers.map((l) => l.path),
          row.order,
        );
        // flux/kustomization.yaml lists them in the same order, after the Flux objects.
        const listed = (parse(await readFile(join(repo, result.gitopsPath, 'flux/kustomization.yaml'), 'utf8')) as { resources: string[] }).resources;
        // No SealedSecret in the root sync: it would fail its dry run before bootstrap installs the CRD.
        assert.deepEqual(listed, ['cluster-config.yaml', ...result.layers.map((l) => `${l.name}.yaml`)]);
        // What Flux gets: the cluster's root build holds exactly these Kustomizations.
        const kustomizations = objectsOf(await kustomize.build(repo, result.gitopsPath)).filter((o) => o.kind === 'Kustomization');
        assert.deepEqual(kustomizations.map((k) => String(k.spec!.path).replace(/^\.\//, '')).sort(), [...row.order].sort());
      });

      it("wires dependsOn as spec 001's dependency diagrams draw it, every dependency before its dependents", async () => {
        const result = results.get(row.title)!;
        const pathOf = new Map(result.layers.map((l) => [l.name, l.path]));
        const label = (name: string) => (/^(dns|bootstrap)\//.test(pathOf.get(name)!) || name === 'secrets' ? name : pathOf.get(name)!);
        const edges = result.layers.flatMap((l) => l.dependsOn.map((d) => `${label(l.name)} <- ${label(d)}`)).sort();
        assert.deepEqual(edges, expectedEdges(row));
        result.layers.forEach((layer, index) => {
          for (const dep of layer.dependsOn)
            assert.ok(result.layers.findIndex((l) => l.name === dep) < index, `${layer.name} comes before its dependency ${dep}`);
        });
        const root = objectsOf(await kustomize.build(repo, result.gitopsPath));
        for (const layer of result.layers) {
          const k = root.find((o) => o.kind === 'Kustomization' && o.metadata!.name === layer.name)!;
          assert.deepEqual(
            k.spec!.dependsOn ?? [],
            layer.dependsOn.map((name) => ({ name })),
            layer.name,
          );
        }
      });

      it('passes verify with no finding', async () => {
        const report = await verifyWorkTree(repo, { cluster: row.cluster.name });
        assert.deepEqual(report.findings, []);
        // The layers and the Kustomizations the bootstrap layer applies.
        const checked = row.order.length + NESTED[row.cluster.infra_provider]!;
        assert.equal(report.kustomizationsChecked, checked);
        assert.equal(report.summary, `${checked} Flux Kustomization(s) checked; substitution wiring is consistent`);
      });

      it('records the role and both providers in cluster-config and provenance', async () => {
        const result = results.get(row.title)!;
        const data = (parse(await readFile(join(repo, result.gitopsPath, 'flux/cluster-config.yaml'), 'utf8')) as { data: Record<string, string> }).data;
        assert.equal(data.cluster_name, row.cluster.name);
        assert.equal(data.cluster_domain, row.cluster.domain);
        assert.equal(data.cluster_role, row.cluster.role);
        assert.equal(data.infra_provider, row.cluster.infra_provider);
        assert.equal(data.dns_provider, row.cluster.dns_provider);
        // The provider model: what differs by provider in value, not in layers.
        const storage: Record<string, string> = { proxmox: 'openebs-hostpath', aws: 'gp3', gcp: 'standard-rwo', digitalocean: 'do-block-storage' };
        assert.equal(data.storage_class, storage[row.cluster.infra_provider]);
        const provenance = parse(await readFile(join(repo, result.gitopsPath, 'provenance.yaml'), 'utf8')) as { cluster: Record<string, string> };
        assert.deepEqual(provenance.cluster, row.cluster);
      });
    });
  }

  it('verifies the whole repository, the reference environment included', async () => {
    const report = await verifyWorkTree(repo);
    assert.deepEqual(report.findings, []);
    // The reference environment (development, on proxmox): 12 layers and 3 nested.
    assert.equal(report.kustomizationsChecked, ROWS.reduce((n, r) => n + r.order.length + NESTED[r.cluster.infra_provider]!, 0) + 15);
  });
});

describe('cluster-secrets: the substitution Secret of spec 001, sealed', () => {
  let tmp: string;
  let repo: string;
  const cluster = {
    name: 'tooling-aws',
    domain: 'tooling.mojaloop.example.net',
    region: 'eu-west-1',
    role: 'tooling',
    infra_provider: 'aws',
    dns_provider: 'route53',
  };

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'matrix-secrets-'));
    repo = join(tmp, 'gitops');
    await initPlatformRepository(repo, platformDir('matrix-example'));
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('leaves it out of the first pass, which only brings up the bootstrap layer', async () => {
    const { result } = await renderWorkTree(repo, { cluster, pass: 'infrastructure', generatorVersion: '0.0.0-test' });
    assert.deepEqual(
      result.layers.map((l) => l.name),
      ['bootstrap'],
    );
    assert.deepEqual(result.credentials, []);
    assert.deepEqual((parse(result.tree.get(`${result.gitopsPath}/flux/kustomization.yaml`)!) as { resources: string[] }).resources, [
      'cluster-config.yaml',
      'bootstrap.yaml',
    ]);
    const report = await verifyWorkTree(repo, { cluster: cluster.name });
    assert.deepEqual(report.findings, []);
  });

  it("seals it in the second pass with the cluster's key, strict scope, applied by the secrets layer after bootstrap", async () => {
    const { result } = await renderWorkTree(repo, { cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    assert.deepEqual(
      result.credentials.map((c) => `${c.namespace}/${c.name} ${c.file} ${c.action}`),
      [
        'flux-system/cluster-secrets secrets/sealed/sealed-cluster-secrets.yaml generated',
        'flux-system/flux-notification-address secrets/sealed/sealed-flux-notification-address.yaml omitted',
      ],
    );
    const text = await readFile(join(repo, result.gitopsPath, 'secrets/sealed/sealed-cluster-secrets.yaml'), 'utf8');
    const sealed = parse(text) as Obj & { spec: { encryptedData: Record<string, string>; template: { type: string } } };
    assert.equal(sealed.kind, 'SealedSecret');
    // The SealedSecret records the certificate it was sealed with, so a later rotation can tell.
    assert.deepEqual(sealed.metadata, {
      name: 'cluster-secrets',
      namespace: 'flux-system',
      annotations: { [SEALED_WITH_ANNOTATION]: sealedWithOf(certificate) },
    });
    assert.equal(sealed.spec.template.type, 'Opaque');
    const label = scopeLabel('strict', 'flux-system', 'cluster-secrets');
    const values = Object.fromEntries(
      Object.entries(sealed.spec.encryptedData).map(([k, c]) => [k, unsealValue({ privateKey: controller.privateKey, label, ciphertext: c }).toString('utf8')]),
    );
    assert.deepEqual(Object.keys(values).sort(), [
      'grafana_admin_password',
      'harbor_admin_password',
      'keycloak_admin_password',
      'minio_root_password',
      'mysql_root_password',
      'redis_password',
    ]);
    for (const value of Object.values(values)) assert.match(value, /^[A-Za-z0-9]{32}$/);
    // Nothing of it in plain text anywhere in the work tree.
    for (const entry of await readdir(repo, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || join(entry.parentPath, entry.name).includes('/.git/')) continue;
      const content = await readFile(join(entry.parentPath, entry.name), 'utf8');
      for (const value of Object.values(values))
        assert.ok(!content.includes(value) && !content.includes(Buffer.from(value).toString('base64')), `${entry.name} holds a plaintext credential`);
    }
    const root = objectsOf(await kustomize.build(repo, result.gitopsPath));
    // Not in the root sync (its CRD does not exist before bootstrap), but in the secrets layer.
    assert.ok(!root.some((o) => o.kind === 'SealedSecret'));
    assert.ok(
      objectsOf(await kustomize.build(repo, `${result.gitopsPath}/secrets`)).some((o) => o.kind === 'SealedSecret' && o.metadata!.name === 'cluster-secrets'),
    );
    // Only the layers that list it substitute from it.
    const fromSecret = root
      .filter((o) => o.kind === 'Kustomization' && JSON.stringify((o.spec!.postBuild as { substituteFrom: unknown[] }).substituteFrom).includes('"Secret"'))
      .map((o) => o.metadata!.name)
      .sort();
    assert.deepEqual(fromSecret, ['cc-config', 'cc-observability']);
    for (const k of root.filter((o) => o.kind === 'Kustomization')) {
      assert.deepEqual((k.spec!.postBuild as { substituteFrom: unknown[] }).substituteFrom[0], { kind: 'ConfigMap', name: 'cluster-config' });
    }
  });

  it('verify passes, and reports each variable left to the Secret as a note naming the Secret', async () => {
    const report = await verifyWorkTree(repo, { cluster: cluster.name });
    assert.deepEqual(report.findings, []);
    const secretNotes = report.notes.filter((n) => n.includes('Secret flux-system/cluster-secrets'));
    const variables = secretNotes.map((n) => n.match(/\$\{([a-z_]+)\}/)![1]).sort();
    assert.deepEqual([...new Set(variables)], ['grafana_admin_password', 'harbor_admin_password', 'minio_root_password']);
    assert.ok(
      secretNotes.includes(
        'clusters/tooling-aws/flux/cc-config.yaml: Kustomization flux-system/cc-config: ${harbor_admin_password} (used by Secret harbor/harbor-values) may come from Secret flux-system/cluster-secrets, whose keys cannot be checked offline',
      ),
      secretNotes.join('\n'),
    );
  });

  it('keeps the sealed values on a re-render', async () => {
    const before = await readFile(join(repo, 'clusters/tooling-aws/secrets/sealed/sealed-cluster-secrets.yaml'), 'utf8');
    const { result, changes } = await renderWorkTree(repo, { cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    assert.deepEqual(changes.written, []);
    assert.equal(result.credentials[0]!.action, 'kept');
    assert.equal(await readFile(join(repo, 'clusters/tooling-aws/secrets/sealed/sealed-cluster-secrets.yaml'), 'utf8'), before);
  });
});

describe('Flux managed by the Flux Operator: the FluxInstance', () => {
  let tmp: string;
  let repo: string;
  const validator = crdValidator();
  const cluster = {
    name: 'env-gcp',
    domain: 'env-gcp.mojaloop.example.net',
    region: 'europe-west4',
    role: 'env',
    infra_provider: 'gcp',
    dns_provider: 'clouddns',
  };

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'matrix-flux-instance-'));
    repo = join(tmp, 'gitops');
    await initPlatformRepository(repo, platformDir('matrix-example'));
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('syncs the cluster path from Git and validates against the Flux Operator CRD', async () => {
    const { result } = await renderWorkTree(repo, {
      cluster,
      pass: 'all',
      certificate,
      generatorVersion: '0.0.0-test',
      fluxInstance: true,
      syncUrl: 'https://git.example.net/platform/gitops.git',
      syncRef: 'refs/heads/main',
    });
    assert.equal(result.fluxInstance, true);
    const instance = parse(await readFile(join(repo, 'clusters/env-gcp/flux/flux-instance.yaml'), 'utf8')) as Obj;
    assert.deepEqual(instance, {
      apiVersion: 'fluxcd.controlplane.io/v1',
      kind: 'FluxInstance',
      metadata: { name: 'flux', namespace: 'flux-system' },
      spec: {
        distribution: { version: '2.x', registry: 'ghcr.io/fluxcd', artifact: 'oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests' },
        components: ['source-controller', 'kustomize-controller', 'helm-controller', 'notification-controller'],
        cluster: { networkPolicy: true },
        // spec 004's tuning (src/gitops/flux-tuning.ts); 2.x installs controllers that have the gate.
        kustomize: {
          patches: [
            {
              target: { kind: 'Deployment', name: 'source-controller' },
              patch: '- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --concurrent=10\n',
            },
            {
              target: { kind: 'Deployment', name: 'kustomize-controller' },
              patch:
                '- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --concurrent=6\n' +
                '- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --requeue-dependency=10s\n' +
                '- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --feature-gates=CancelHealthCheckOnNewRevision=true\n',
            },
            {
              target: { kind: 'Deployment', name: 'helm-controller' },
              patch: '- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --feature-gates=CancelHealthCheckOnNewRevision=true\n',
            },
          ],
        },
        // The platform repository is private: scaffold.yaml names the Secret Flux pulls it with.
        sync: {
          kind: 'GitRepository',
          url: 'https://git.example.net/platform/gitops.git',
          ref: 'refs/heads/main',
          path: 'clusters/env-gcp',
          pullSecret: 'flux-system',
        },
      },
    });
    assert.deepEqual(await validator.validate(instance), { status: 'checked', issues: [] });
    // The CRD check is live: a misspelt field and a name other than flux are caught.
    const wrong = {
      ...instance,
      metadata: { name: 'flux-system', namespace: 'flux-system' },
      spec: { ...instance.spec, sync: { kind: 'GitRepository', url: 'x', ref: 'y', paht: 'z' } },
    };
    const check = await validator.validate(wrong);
    assert.equal(check.status, 'checked');
    const fields = check.status === 'checked' ? check.issues.map((i) => i.field) : [];
    assert.ok(fields.includes('metadata.name'), fields.join(', '));
    assert.ok(
      fields.some((f) => f.startsWith('spec.sync')),
      fields.join(', '),
    );

    // The root sync applies it too (Flux keeps its own installation true), and verify passes.
    const root = objectsOf(await kustomize.build(repo, result.gitopsPath));
    assert.ok(root.some((o) => o.kind === 'FluxInstance' && o.metadata!.name === 'flux'));
    const report = await verifyWorkTree(repo, { cluster: cluster.name });
    assert.deepEqual(report.findings, []);
    assert.ok(!report.notes.some((n) => n.includes('FluxInstance')), 'the FluxInstance was not validated');
  });

  it('keeps the FluxInstance on a re-render that does not ask for it again', async () => {
    const { result, changes } = await renderWorkTree(repo, { cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    assert.equal(result.fluxInstance, true);
    assert.deepEqual(changes.written, []);
  });

  it('syncs from an OCI artifact of the repository, the layers reading the OCIRepository it creates', async () => {
    const { result } = await renderWorkTree(repo, {
      cluster,
      pass: 'all',
      certificate,
      generatorVersion: '0.0.0-test',
      fluxInstance: true,
      syncUrl: 'oci://registry.example.net/platform/gitops',
    });
    const instance = parse(result.tree.get('clusters/env-gcp/flux/flux-instance.yaml')!) as { spec: { sync: Record<string, string> } };
    assert.deepEqual(instance.spec.sync, {
      kind: 'OCIRepository',
      url: 'oci://registry.example.net/platform/gitops',
      ref: 'latest',
      path: 'clusters/env-gcp',
      pullSecret: 'flux-system',
    });
    assert.deepEqual(await validator.validate(instance), { status: 'checked', issues: [] });
    for (const layer of result.layers) {
      const k = parse(result.tree.get(`clusters/env-gcp/flux/${layer.name}.yaml`)!) as { spec: { sourceRef: unknown } };
      assert.deepEqual(k.spec.sourceRef, { kind: 'OCIRepository', name: 'flux-system', namespace: 'flux-system' }, layer.name);
    }
    assert.deepEqual((await verifyWorkTree(repo, { cluster: cluster.name })).findings, []);
  });
});

describe('generate-gitops-env with the matrix-example platform', () => {
  let tmp: string;
  let repo: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'matrix-cli-'));
    repo = join(tmp, 'gitops');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('init --platform matrix-example seeds it; render takes --role, --infra-provider, --dns-provider and --flux-instance', async () => {
    const init = await runCli(['init', repo, '--platform', 'matrix-example']);
    assertExit(init, 0);
    assert.deepEqual((await readdir(join(repo, 'dns'))).sort(), ['clouddns', 'cloudflare', 'designate', 'digitalocean', 'external-dns', 'rfc2136', 'route53']);
    const render = await runCli([
      'render',
      '--repo',
      repo,
      '--cluster',
      'env-aws',
      '--domain',
      'env-aws.mojaloop.example.net',
      '--region',
      'eu-west-1',
      '--role',
      'env',
      '--infra-provider',
      'aws',
      '--dns-provider',
      'route53',
      '--pass',
      'infrastructure',
      '--flux-instance',
      '--sync-url',
      'ssh://git@git.example.net/platform/gitops.git',
      '--sync-secret',
      'platform-deploy-key',
    ]);
    assertExit(render, 0);
    assert.equal(render.stdout, 'clusters/env-aws\n');
    assert.match(render.stderr, /^ {2}attributes: role env, infra_provider aws, dns_provider route53$/m);
    assert.match(render.stderr, /^ {2}layers: bootstrap \(bootstrap\/aws\)$/m);
    assert.match(render.stderr, /flux-instance\.yaml/);
    assert.match(
      render.stderr,
      /^ {2}Flux pulls ssh:\/\/git@git\.example\.net\/platform\/gitops\.git with the credentials of Secret flux-system\/platform-deploy-key: create it before applying the FluxInstance/m,
    );
    const instance = parse(await readFile(join(repo, 'clusters/env-aws/flux/flux-instance.yaml'), 'utf8')) as { spec: { sync: { pullSecret?: string } } };
    assert.equal(instance.spec.sync.pullSecret, 'platform-deploy-key');
    const verify = await runCli(['verify', '--repo', repo, '--cluster', 'env-aws']);
    assertExit(verify, 0);
  });

  it('refuses a value the catalog does not know, listing the known ones, and writes nothing', async () => {
    const result = await runCli([
      'render',
      '--repo',
      repo,
      '--cluster',
      'env-x',
      '--domain',
      'env-x.example.net',
      '--region',
      'eu-west-1',
      '--infra-provider',
      'azure',
      '--pass',
      'infrastructure',
    ]);
    assertExit(result, 2);
    assert.match(
      result.stderr,
      /^error: --infra-provider: "azure" is not an infrastructure provider this platform knows: one of proxmox, openstack, aws, gcp, digitalocean$/m,
    );
    assert.ok(!existsSync(join(repo, 'clusters/env-x')));
  });

  it('refuses --sync-url without --flux-instance, and --flux-instance without a sync URL', async () => {
    const base = ['render', '--repo', repo, '--cluster', 'env-y', '--domain', 'env-y.example.net', '--region', 'eu-west-1', '--pass', 'infrastructure'];
    const noFlag = await runCli([...base, '--sync-url', 'https://git.example.net/x.git']);
    assertExit(noFlag, 2);
    assert.match(noFlag.stderr, /^error: --sync-url: .*add --flux-instance$/m);
    const noUrl = await runCli([...base, '--flux-instance']);
    assertExit(noUrl, 2);
    assert.match(noUrl.stderr, /^error: --sync-url: a FluxInstance syncs the cluster from its repository/m);
  });

  it('says a FluxInstance without a pull Secret pulls anonymously, and refuses one over SSH, which has no anonymous access', async () => {
    const base = [
      'render',
      '--repo',
      repo,
      '--cluster',
      'env-anon',
      '--domain',
      'env-anon.example.net',
      '--region',
      'eu-west-1',
      '--role',
      'env',
      '--infra-provider',
      'aws',
      '--dns-provider',
      'route53',
      '--pass',
      'infrastructure',
      '--flux-instance',
    ];
    // A platform whose scaffold.yaml names no fluxInstance.sync.pullSecret (the shipped ones name flux-system).
    const scaffold = join(repo, 'scaffold.yaml');
    const original = await readFile(scaffold, 'utf8');
    assert.match(original, /^ {4}pullSecret: flux-system$/m);
    try {
      await writeFile(scaffold, original.replace(/^ {4}pullSecret: flux-system$/m, '    interval: 10m'));
      const ssh = await runCli([...base, '--sync-url', 'ssh://git@git.example.net/platform/gitops.git']);
      assertExit(ssh, 2);
      assert.match(
        ssh.stderr,
        /^error: sync-secret: Flux pulls ssh:\/\/git@git\.example\.net\/platform\/gitops\.git over SSH, which always needs a key: name the Secret in flux-system/m,
      );
      assert.ok(!existsSync(join(repo, 'clusters/env-anon')));
      const https = await runCli([...base, '--sync-url', 'https://git.example.net/platform/gitops.git']);
      assertExit(https, 0);
      assert.match(
        https.stderr,
        /^ {2}the FluxInstance names no pull Secret: Flux pulls https:\/\/git\.example\.net\/platform\/gitops\.git anonymously, which works only for a public repository \(name one with --sync-secret/m,
      );
      const instance = parse(await readFile(join(repo, 'clusters/env-anon/flux/flux-instance.yaml'), 'utf8')) as { spec: { sync: { pullSecret?: string } } };
      assert.equal(instance.spec.sync.pullSecret, undefined);
    } finally {
      await writeFile(scaffold, original);
      await rm(join(repo, 'clusters/env-anon'), { recursive: true, force: true });
    }
  });

  it('init refuses a platform that is not shipped', async () => {
    const result = await runCli(['init', join(tmp, 'other'), '--platform', '../default']);
    assertExit(result, 2);
    assert.match(result.stderr, /^error: --platform: "\.\.\/default" is not a shipped platform: one of default, matrix-example$/m);
  });
});
