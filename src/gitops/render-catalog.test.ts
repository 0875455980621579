/**
 * renderCluster with a layer catalog in scaffold.yaml, and the options that go
 * with it (cluster attributes, the FluxInstance), on platforms other than the
 * matrix example (test/integration/matrix.test.ts covers that one row by row).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { renderWorkTree } from '../git/render-work-tree.js';
import { verifyWorkTree } from '../workspace/verify-work-tree.js';
import { ValidationError } from '../errors.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { platformDir } from '../package-paths.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { memoryRepoReader } from './repo-reader.js';
import { renderCluster, type RenderOptions } from './render-cluster.js';

const CLUSTER = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };
const GITOPS_PATH = 'clusters/eu-prod-1';
const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
const kustomize = new KubectlKustomize();

type Obj = Record<string, unknown> & { kind?: string; metadata?: { name?: string }; spec?: Record<string, unknown> };

function objectsOf(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter((o): o is Obj => typeof o === 'object' && o !== null);
}

async function readTree(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const rel = relative(root, join(entry.parentPath, entry.name)).split(sep).join('/');
    if (!rel.split('/').includes('.git')) out.set(rel, await readFile(join(root, rel), 'utf8'));
  }
  return out;
}

const random = (n: number) => new Uint8Array(n).map((_, i) => (i * 7) % 256);
const render = (files: ReadonlyMap<string, string>, overrides: Partial<RenderOptions> = {}) =>
  renderCluster(memoryRepoReader(files), { cluster: CLUSTER, pass: 'all', certificate, random, generatorVersion: 't', ...overrides });

/**
 * The default platform with its four layers expressed as an overlay catalog,
 * plus a role that skips the database (and the apps credential that shares
 * its password) and a shared layer only one DNS provider gets.
 */
const OVERLAY_CATALOG = `
attributes:
  role: { values: [full, lite], default: full }
  dns_provider: { values: [route53, cloudflare], default: route53, config: { cloudflare: { dns_api: cloudflare } } }
layers:
  - name: infrastructure
    overlay: infrastructure
    healthChecks:
      - { apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, name: sealed-secrets, namespace: kube-system }
      - { apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, name: cert-manager, namespace: cert-manager }
  - { name: cert-manager-config, overlay: cert-manager-config, dependsOn: [infrastructure], wait: true }
  - { name: database, overlay: database, dependsOn: [infrastructure], wait: true, when: { role: [full] } }
  - { name: apps, overlay: apps, dependsOn: [database], wait: true }
  - { name: dns-extra, path: "dns/{dns_provider}", dependsOn: [cert-manager-config], when: { dns_provider: [cloudflare] } }
`;

describe('a catalog of overlay layers over the default platform', () => {
  let tmp: string;
  let repo: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'render-catalog-'));
    const source = join(tmp, 'platform');
    await cp(platformDir(), source, { recursive: true });
    const descriptor = await readFile(join(source, 'scaffold.yaml'), 'utf8');
    await writeFile(join(source, 'scaffold.yaml'), descriptor.replace('kind: Platform\n', `kind: Platform\n${OVERLAY_CATALOG}`));
    await cp(join(source, 'base/cert-manager-config'), join(source, 'dns/cloudflare'), { recursive: true });
    await writeFile(
      join(source, 'dns/cloudflare/kustomization.yaml'),
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cluster-issuers.yaml\nnamePrefix: cf-\n',
    );
    repo = join(tmp, 'repo');
    await initPlatformRepository(repo, source);
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('renders the four layers from the catalog, each over its overlay, and passes verify', async () => {
    const { result } = await renderWorkTree(repo, { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: 't' });
    assert.deepEqual(
      result.layers.map((l) => `${l.name} ${l.path} <- ${l.dependsOn.join(',')}`),
      [
        `infrastructure ${GITOPS_PATH}/infrastructure <- `,
        `cert-manager-config ${GITOPS_PATH}/cert-manager-config <- infrastructure`,
        `database ${GITOPS_PATH}/database <- infrastructure`,
        `apps ${GITOPS_PATH}/apps <- database`,
      ],
    );
    assert.deepEqual(result.skippedLayers, ['dns-extra']);
    assert.deepEqual(result.attributes, { role: 'full', dns_provider: 'route53' });
    assert.ok(result.tree.has(`${GITOPS_PATH}/apps/hosts/tcr-api.yaml`));
    assert.ok(result.tree.has(`${GITOPS_PATH}/infrastructure/identity/external-dns.yaml`));
    // The supplied ones (a pull secret, a notification address) are omitted when nobody gives them.
    assert.deepEqual(
      result.credentials.map((c) => `${c.namespace}/${c.name} ${c.action}`),
      [
        'tcr/registry-pull-secret omitted',
        'tcr/tcr-database generated',
        'flux-system/flux-notification-address omitted',
        'database/postgresql-credentials generated',
        'database/rabbitmq-credentials generated',
      ],
    );
    const report = await verifyWorkTree(repo, { cluster: CLUSTER.name });
    assert.deepEqual(report.findings, []);
    assert.equal(report.kustomizationsChecked, 4);
  });

  it('skips a layer and its overlay for a role, rewiring its dependents, and refuses a credential tied to a skipped one', async () => {
    await assert.rejects(
      renderWorkTree(repo, { cluster: { ...CLUSTER, name: 'lite-1', role: 'lite' }, pass: 'all', certificate, generatorVersion: 't' }),
      (error: unknown) =>
        error instanceof ValidationError &&
        error.message ===
          'scaffold.yaml.credentials.tcr/tcr-database: takes database/postgresql-credentials/password from a credential of layer database, which this cluster does not get',
    );
    // Pass infrastructure has no credentials to tie; the layers it renders do not depend on the role.
    const { result } = await renderWorkTree(repo, { cluster: { ...CLUSTER, name: 'lite-1', role: 'lite' }, pass: 'infrastructure', generatorVersion: 't' });
    assert.deepEqual(
      result.layers.map((l) => l.name),
      ['infrastructure'],
    );
    assert.deepEqual(result.skippedLayers, ['database', 'dns-extra']);
  });

  it('adds the shared layer a DNS provider selects, and the cluster-config entries its value sets', async () => {
    const cluster = { ...CLUSTER, name: 'cf-1', dns_provider: 'cloudflare' };
    const { result } = await renderWorkTree(repo, { cluster, pass: 'all', certificate, generatorVersion: 't' });
    assert.deepEqual(result.layers.at(-1), { name: 'dns-extra', path: 'dns/cloudflare', dependsOn: ['cert-manager-config'] });
    const data = (parse(result.tree.get('clusters/cf-1/flux/cluster-config.yaml')!) as { data: Record<string, string> }).data;
    assert.equal(data.dns_provider, 'cloudflare');
    assert.equal(data.cluster_role, 'full');
    assert.equal(data.dns_api, 'cloudflare');
    const issuers = objectsOf(await kustomize.build(repo, 'dns/cloudflare')).map((o) => o.metadata!.name);
    assert.deepEqual(issuers, ['cf-letsencrypt-production', 'cf-letsencrypt-staging']);
    assert.deepEqual((await verifyWorkTree(repo, { cluster: 'cf-1' })).findings, []);
  });

  it('keeps the attributes a cluster was rendered with when a later render gives none', async () => {
    const cluster = { ...CLUSTER, name: 'cf-1' };
    const { result, changes } = await renderWorkTree(repo, { cluster, pass: 'all', certificate, generatorVersion: 't' });
    assert.deepEqual(result.attributes, { role: 'full', dns_provider: 'cloudflare' });
    assert.deepEqual(changes.written, []);
  });
});

describe('renderCluster: attributes, catalog layers and the FluxInstance, on the shipped platforms', () => {
  let platform: Map<string, string>;
  let matrix: Map<string, string>;

  before(async () => {
    platform = await readTree(platformDir());
    matrix = await readTree(platformDir('matrix-example'));
  });

  it('refuses an attribute the default platform does not select by, naming the field', async () => {
    await assert.rejects(
      render(platform, { cluster: { ...CLUSTER, role: 'env' } }),
      /^ValidationError: cluster\.role: this platform's scaffold\.yaml declares no attributes\.role/,
    );
  });

  it('writes the default platform exactly as without a catalog: no attribute in provenance or cluster-config', async () => {
    const { tree, attributes, skippedLayers } = await render(platform);
    assert.deepEqual(attributes, {});
    assert.deepEqual(skippedLayers, []);
    assert.deepEqual((parse(tree.get(`${GITOPS_PATH}/provenance.yaml`)!) as { cluster: unknown }).cluster, CLUSTER);
    assert.doesNotMatch(tree.get(`${GITOPS_PATH}/flux/cluster-config.yaml`)!, /cluster_role|infra_provider|dns_provider/);
  });

  it('adds a FluxInstance to the default platform, listed after its layers, with the sync source kind following the URL', async () => {
    const git = await render(platform, { fluxInstance: true, syncUrl: 'https://git.example.net/tcr/gitops.git', syncRef: 'refs/heads/prod' });
    assert.deepEqual((parse(git.tree.get(`${GITOPS_PATH}/flux/kustomization.yaml`)!) as { resources: string[] }).resources, [
      'cluster-config.yaml',
      'infrastructure.yaml',
      'cert-manager-config.yaml',
      'database.yaml',
      'apps.yaml',
      'flux-instance.yaml',
      'flux-operator.yaml',
    ]);
    const instance = parse(git.tree.get(`${GITOPS_PATH}/flux/flux-instance.yaml`)!) as { spec: { sync: unknown } };
    // The platform repository is private: scaffold.yaml names the Secret Flux pulls it with, even without --sync-secret.
    assert.deepEqual(instance.spec.sync, {
      kind: 'GitRepository',
      url: 'https://git.example.net/tcr/gitops.git',
      ref: 'refs/heads/prod',
      path: GITOPS_PATH,
      pullSecret: 'flux-system',
    });
    assert.match(git.tree.get(`${GITOPS_PATH}/flux/apps.yaml`)!, /sourceRef:\n {4}kind: GitRepository\n/);
    const oci = await render(platform, { fluxInstance: true, syncUrl: 'oci://registry.example.net/tcr/gitops' });
    assert.match(oci.tree.get(`${GITOPS_PATH}/flux/apps.yaml`)!, /sourceRef:\n {4}kind: OCIRepository\n {4}name: flux-system\n/);
    // Comments of the reference's layers are kept.
    assert.match(oci.tree.get(`${GITOPS_PATH}/flux/apps.yaml`)!, /^# Every TCR service/);
  });

  it('keeps a FluxInstance on a re-render without the option, and drops it when told', async () => {
    const first = await render(platform, { fluxInstance: true, syncUrl: 'https://git.example.net/tcr/gitops.git' });
    const again = await render(new Map([...platform, ...first.tree]));
    assert.equal(again.fluxInstance, true);
    assert.equal(again.tree.get(`${GITOPS_PATH}/flux/flux-instance.yaml`), first.tree.get(`${GITOPS_PATH}/flux/flux-instance.yaml`));
    const dropped = await render(new Map([...platform, ...first.tree]), { fluxInstance: false });
    assert.equal(dropped.fluxInstance, false);
    assert.ok(!dropped.tree.has(`${GITOPS_PATH}/flux/flux-instance.yaml`));
  });

  it("takes the reference's own FluxInstance as the template: same source, the new cluster's path", async () => {
    const first = await render(platform, {
      cluster: { ...CLUSTER, name: 'other' },
      fluxInstance: true,
      syncUrl: 'https://git.example.net/tcr/gitops.git',
      syncRef: 'refs/heads/prod',
    });
    const files = new Map(platform);
    files.set(
      'clusters/development/flux/flux-instance.yaml',
      first.tree.get('clusters/other/flux/flux-instance.yaml')!.replaceAll('clusters/other', 'clusters/development'),
    );
    files.set('clusters/development/flux/kustomization.yaml', `${platform.get('clusters/development/flux/kustomization.yaml')!}  - flux-instance.yaml\n`);
    const { tree, fluxInstance } = await render(files);
    assert.equal(fluxInstance, true);
    const sync = (parse(tree.get(`${GITOPS_PATH}/flux/flux-instance.yaml`)!) as { spec: { sync: unknown } }).spec.sync;
    assert.deepEqual(sync, {
      kind: 'GitRepository',
      url: 'https://git.example.net/tcr/gitops.git',
      ref: 'refs/heads/prod',
      path: GITOPS_PATH,
      pullSecret: 'flux-system',
    });
    assert.equal(
      (parse(tree.get(`${GITOPS_PATH}/flux/kustomization.yaml`)!) as { resources: string[] }).resources.filter((r) => r === 'flux-instance.yaml').length,
      1,
    );
    const without = await render(files, { fluxInstance: false });
    assert.ok(!without.tree.has(`${GITOPS_PATH}/flux/flux-instance.yaml`));
    assert.ok(!(parse(without.tree.get(`${GITOPS_PATH}/flux/kustomization.yaml`)!) as { resources: string[] }).resources.includes('flux-instance.yaml'));
  });

  it('needs a sync URL for a FluxInstance, from the option or scaffold.yaml', async () => {
    await assert.rejects(render(platform, { fluxInstance: true }), /^ValidationError: sync-url: a FluxInstance syncs the cluster from its repository/);
    const files = new Map(matrix);
    files.set(
      'scaffold.yaml',
      matrix
        .get('scaffold.yaml')!
        .replace('    pullSecret: flux-system\n', '    pullSecret: flux-system\n    url: "https://git.example.net/mojaloop/gitops.git"\n')
        .replace('fluxInstance:\n  enabled: false\n', 'fluxInstance:\n  enabled: true\n'),
    );
    const { fluxInstance, tree } = await render(files);
    assert.equal(fluxInstance, true);
    assert.match(tree.get(`${GITOPS_PATH}/flux/flux-instance.yaml`)!, /url: https:\/\/git\.example\.net\/mojaloop\/gitops\.git/);
  });

  it('names the layer and the path when the repository lacks a root the catalog selects', async () => {
    const files = new Map([...matrix].filter(([path]) => !path.startsWith('dns/designate/')));
    await assert.rejects(
      render(files, { cluster: { ...CLUSTER, dns_provider: 'designate' } }),
      (error: unknown) =>
        error instanceof ValidationError &&
        error.message ===
          "scaffold.yaml.layers.dns.path: dns/designate/ (from dns/{dns_provider}) has no kustomization.yaml in the repository: the platform lacks this layer for the cluster's attributes",
    );
  });

  it('refuses a first-pass layer substituting from the sealed Secret: nothing can unseal it yet', async () => {
    const files = new Map(matrix);
    files.set(
      'scaffold.yaml',
      matrix
        .get('scaffold.yaml')!
        .replace(
          '    path: bootstrap/{infra_provider}\n',
          '    path: bootstrap/{infra_provider}\n    substituteFrom:\n      - { kind: ConfigMap, name: cluster-config }\n      - { kind: Secret, name: cluster-secrets }\n',
        ),
    );
    // The first layer cannot wait for the layer that seals it.
    await assert.rejects(
      render(files, { pass: 'infrastructure' }),
      /^ValidationError: scaffold\.yaml\.layers\.bootstrap\.substituteFrom: Secret cluster-secrets is sealed by layer secrets, which bootstrap does not depend on/,
    );
  });

  it('renders the same bytes twice (ciphertexts apart), and the reference identity nowhere', async () => {
    const cluster = { ...CLUSTER, role: 'tooling', infra_provider: 'gcp', dns_provider: 'cloudflare' };
    const a = await render(matrix, { cluster });
    const b = await render(matrix, { cluster });
    const plain = (tree: ReadonlyMap<string, string>) => [...tree].filter(([path]) => !path.includes('/sealed/sealed-'));
    assert.deepEqual(plain(a.tree), plain(b.tree));
    assert.deepEqual([...a.tree.keys()], [...b.tree.keys()]);
    for (const [path, text] of a.tree) {
      if (path.endsWith('provenance.yaml') || path.includes('/sealed/sealed-')) continue;
      for (const old of ['development', 'dev.mojaloop.example.org', 'fra-dc1']) assert.ok(!text.includes(old), `${path} mentions ${old}`);
    }
    assert.deepEqual(
      a.layers.map((l) => l.path),
      [
        'bootstrap/gcp',
        'clusters/eu-prod-1/secrets',
        'platform',
        'dns/cloudflare',
        'platform-config',
        'gcp',
        'cc',
        'cc-config',
        'cc-routes',
        'cc-observability',
        'cc-observability-routes',
      ],
    );
  });
});
