/**
 * The generator as a user would notice it: a new cluster rendered into a real
 * Git work tree made from the shipped reference platform, checked with the real
 * `kubectl kustomize`, the real verify (CRD schemas) and the Sealed Secrets
 * controller's own decryption.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { drawClusterGraph } from '../workspace/draw-cluster-graph.js';
import { renderWorkTree } from '../git/render-work-tree.js';
import { verifyWorkTree } from '../workspace/verify-work-tree.js';
import { ValidationError } from '../errors.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { platformDir } from '../package-paths.js';
import { scopeLabel } from '../sealing/seal.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { unsealValue } from '../sealing/unseal.js';
import { fluxBootstrapFiles, writeFluxBootstrap } from '../../test/support/flux-bootstrap.js';
import { memoryRepoReader } from './repo-reader.js';
import { renderCluster, type RenderOptions } from './render-cluster.js';
import { gitSync as git } from '../../test/support/git.js';

const CLUSTER = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };
const GITOPS_PATH = 'clusters/eu-prod-1';
const REFERENCE = { name: 'development', domain: 'dev.tantilium.example.com', region: 'eu-central-1' };
const LAYERS = ['apps', 'cert-manager-config', 'database', 'infrastructure'];

const controller = createTestCertificate();
const certificate = parseSealingCertificate(controller.certificatePem);
const kustomize = new KubectlKustomize();

type Obj = Record<string, unknown> & { kind?: string; metadata?: { name?: string; namespace?: string; labels?: Record<string, string> } };

/** Every file below `below` (repository-relative), `.git` excluded. */
async function readTree(root: string, below = ''): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let entries;
  try {
    entries = await readdir(join(root, below), { recursive: true, withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const rel = relative(root, join(entry.parentPath, entry.name)).split(sep).join('/');
    if (rel.split('/').includes('.git')) continue;
    out.set(rel, await readFile(join(root, rel), 'utf8'));
  }
  return new Map([...out].sort(([a], [b]) => a.localeCompare(b)));
}

function objectsOf(yamlText: string): Obj[] {
  return parseAllDocuments(yamlText)
    .map((d) => d.toJS() as unknown)
    .filter((o): o is Obj => typeof o === 'object' && o !== null);
}

/**
 * Flux's postBuild substitution: `${var}` becomes the value of `var` when it is
 * defined; `$${…}` is an escape and becomes a literal `${…}`. Undefined
 * variables are left as they are, so a test can see them.
 * @returns the substituted text and the variables that stayed unescaped `${…}`
 */
function substitute(text: string, vars: Readonly<Record<string, string>>): { text: string; unresolved: string[] } {
  const escaped = '\uE000';
  const out = text.replace(/\$(\$?)\{([^}]*)\}/g, (match, escape: string, name: string) => {
    if (escape) return `${escaped}{${name}}`;
    return Object.hasOwn(vars, name) ? vars[name]! : match;
  });
  // Whatever is still written `${` did not come from an escape: Flux would fail on it, or blank it.
  return { text: out.replaceAll(escaped, '$'), unresolved: [...new Set(out.match(/\$\{[^}\n]*\}?/g) ?? [])] };
}

function clusterConfigOf(files: ReadonlyMap<string, string>): Record<string, string> {
  return (parse(files.get(`${GITOPS_PATH}/flux/cluster-config.yaml`)!) as { data: Record<string, string> }).data;
}

/** Decrypts every sealed value of the cluster with the controller's private key (strict scope). */
function unsealTree(files: ReadonlyMap<string, string>): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const [path, text] of files) {
    if (!/\/sealed\/sealed-[^/]+\.yaml$/.test(path)) continue;
    const sealed = parse(text) as { kind: string; metadata: { name: string; namespace: string }; spec: { encryptedData: Record<string, string> } };
    assert.equal(sealed.kind, 'SealedSecret', path);
    const data: Record<string, string> = {};
    for (const [key, ciphertext] of Object.entries(sealed.spec.encryptedData)) {
      const label = scopeLabel('strict', sealed.metadata.namespace, sealed.metadata.name);
      data[key] = unsealValue({ privateKey: controller.privateKey, label, ciphertext }).toString('utf8');
    }
    out.set(`${sealed.metadata.namespace}/${sealed.metadata.name}`, data);
  }
  return out;
}

/** Every plaintext a leak could show: each value, its base64, and the parts of a docker config. */
function secretsOf(values: ReadonlyMap<string, Record<string, string>>): string[] {
  const secrets: string[] = [];
  for (const data of values.values()) {
    for (const [key, value] of Object.entries(data)) {
      secrets.push(value, Buffer.from(value).toString('base64'));
      if (key === '.dockerconfigjson') {
        for (const entry of Object.values((JSON.parse(value) as { auths: Record<string, { password?: string; auth?: string }> }).auths)) {
          if (entry.password) secrets.push(entry.password, Buffer.from(entry.password).toString('base64'));
          if (entry.auth) secrets.push(entry.auth);
        }
      }
    }
  }
  return secrets;
}

const isSealedFile = (path: string) => /\/sealed\/sealed-[^/]+\.yaml$/.test(path);

/** A sealed file with its ciphertexts blanked out: what must be identical between two renders. */
const withoutCiphertexts = (text: string) => text.replace(/^( {4}[^:\n]+: )[A-Za-z0-9+/=]{40,}$/gm, '$1<sealed>');

describe('a new cluster rendered into a fresh copy of the reference platform', () => {
  let tmp: string;
  let repo: string;
  let baseBefore: Map<string, string>;
  let infraPass: Awaited<ReturnType<typeof renderWorkTree>>;
  let infraFiles: Map<string, string>;
  let fullPass: Awaited<ReturnType<typeof renderWorkTree>>;
  let files: Map<string, string>;
  const built = new Map<string, string>();

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'render-cluster-'));
    repo = join(tmp, 'repo');
    await initPlatformRepository(repo, platformDir());
    baseBefore = await readTree(repo, 'base');
    infraPass = await renderWorkTree(repo, { cluster: CLUSTER, pass: 'infrastructure', generatorVersion: '0.0.0-test' });
    infraFiles = await readTree(repo, GITOPS_PATH);
    fullPass = await renderWorkTree(repo, { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    files = await readTree(repo, GITOPS_PATH);
    const root = await kustomize.build(repo, GITOPS_PATH);
    built.set(GITOPS_PATH, root);
    for (const flux of objectsOf(root).filter((o) => o.kind === 'Kustomization')) {
      const path = String((flux.spec as { path: string }).path).replace(/^\.\//, '');
      built.set(path, await kustomize.build(repo, path));
    }
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('passes verify: every Flux Kustomization checked, substitution wiring consistent', async () => {
    const report = await verifyWorkTree(repo, { cluster: CLUSTER.name });
    assert.deepEqual(report.findings, []);
    assert.equal(report.kustomizationsChecked, 4);
    assert.equal(report.summary, '4 Flux Kustomization(s) checked; substitution wiring is consistent');
  });

  it('builds every Flux Kustomization path with kubectl kustomize, one per layer', () => {
    assert.deepEqual([...built.keys()].sort(), [GITOPS_PATH, ...LAYERS.map((l) => `${GITOPS_PATH}/${l}`)].sort());
    for (const [path, text] of built) assert.ok(objectsOf(text).length > 0, `${path} builds to nothing`);
  });

  it('leaves no unescaped ${var} once the cluster-config data is substituted, as Flux postBuild would', () => {
    const vars = clusterConfigOf(files);
    for (const [path, text] of built) {
      if (path === GITOPS_PATH) continue;
      const { unresolved } = substitute(text, vars);
      assert.deepEqual(unresolved, [], `${path} uses variables cluster-config does not define`);
    }
    // The check is live: without one key of the ConfigMap, its uses show up.
    const { storage_class: _dropped, ...fewer } = vars;
    assert.deepEqual(substitute(built.get(`${GITOPS_PATH}/database`)!, fewer).unresolved, ['${storage_class}']);
    // The dashboards' `$${…}` escapes survive substitution as Grafana's own `${…}`.
    const { text } = substitute(built.get(`${GITOPS_PATH}/infrastructure`)!, vars);
    assert.match(text, /"uid": "\$\{datasource\}"/);
  });

  it('puts every Ingress host and TLS host of the apps layer under the cluster domain, with every rule keeping its paths', async () => {
    const { text } = substitute(built.get(`${GITOPS_PATH}/apps`)!, clusterConfigOf(files));
    const ingresses = objectsOf(text).filter((o) => o.kind === 'Ingress');
    assert.equal(ingresses.length, 7);
    const baseApps = objectsOf(await kustomize.build(repo, 'base/apps')).filter((o) => o.kind === 'Ingress');
    for (const ingress of ingresses) {
      const name = ingress.metadata!.name!;
      const spec = ingress.spec as { ingressClassName: string; rules: { host: string; http: { paths: unknown[] } }[]; tls: { hosts: string[] }[] };
      const baseSpec = baseApps.find((b) => b.metadata!.name === name)!.spec as typeof spec;
      assert.equal(spec.ingressClassName, 'nginx', name);
      assert.equal(spec.rules.length, baseSpec.rules.length, name);
      spec.rules.forEach((rule, i) => {
        assert.ok(rule.host.endsWith('.eu-prod-1.example.net'), `${name} rule host ${rule.host}`);
        assert.equal(rule.host, baseSpec.rules[i]!.host.replace(/\.base\.invalid$/, '.eu-prod-1.example.net'));
        assert.ok(rule.http.paths.length > 0, `${name} rule ${rule.host} lost its paths`);
        assert.deepEqual(rule.http, baseSpec.rules[i]!.http, `${name} rule ${rule.host} paths changed`);
      });
      for (const host of spec.tls.flatMap((t) => t.hosts)) assert.ok(host.endsWith('.eu-prod-1.example.net'), `${name} TLS host ${host}`);
    }
    const hosts = ingresses.flatMap((i) => (i.spec as { rules: { host: string }[] }).rules.map((r) => r.host)).sort();
    assert.deepEqual(
      hosts,
      ['api', 'builds', 'console', 'docs', 'hooks', 'metering', 'registry', 'scheduler'].map((h) => `${h}.eu-prod-1.example.net`),
    );
  });

  it('points external-dns at the cluster domain, name and region', () => {
    for (const substituted of [false, true]) {
      const raw = built.get(`${GITOPS_PATH}/infrastructure`)!;
      const text = substituted ? substitute(raw, clusterConfigOf(files)).text : raw;
      const release = objectsOf(text).find((o) => o.kind === 'HelmRelease' && o.metadata!.name === 'external-dns')!;
      const values = (release.spec as { values: { domainFilters: string[]; txtOwnerId: string; env: { name: string; value: string }[]; provider: unknown } })
        .values;
      assert.deepEqual(values.domainFilters, ['eu-prod-1.example.net']);
      assert.equal(values.txtOwnerId, 'eu-prod-1');
      assert.deepEqual(values.env, [{ name: 'AWS_DEFAULT_REGION', value: 'eu-west-1' }]);
      assert.deepEqual(values.provider, { name: 'aws' }, 'the rest of the base values is kept');
    }
  });

  it('writes the cluster-config ConfigMap with the identity, the carried-over settings and the watch label', () => {
    const configMap = parse(files.get(`${GITOPS_PATH}/flux/cluster-config.yaml`)!) as Obj & { data: Record<string, string> };
    assert.equal(configMap.kind, 'ConfigMap');
    assert.deepEqual(configMap.metadata, { name: 'cluster-config', namespace: 'flux-system', labels: { 'reconcile.fluxcd.io/watch': 'Enabled' } });
    assert.deepEqual(configMap.data, {
      cluster_name: 'eu-prod-1',
      cluster_domain: 'eu-prod-1.example.net',
      cluster_region: 'eu-west-1',
      acme_email: 'platform-team@tantilium.example.com',
      storage_class: 'gp3',
      ingress_class: 'nginx',
    });
    const fromRoot = objectsOf(built.get(GITOPS_PATH)!).find((o) => o.kind === 'ConfigMap')!;
    assert.equal(fromRoot.metadata!.labels!['reconcile.fluxcd.io/watch'], 'Enabled');
  });

  it('orders Flux as designed: infrastructure first, the others after it; each layer keeps converging and waits for readiness', () => {
    const kustomizations = objectsOf(built.get(GITOPS_PATH)!).filter((o) => o.kind === 'Kustomization');
    assert.deepEqual(kustomizations.map((k) => k.metadata!.name).sort(), LAYERS);
    for (const k of kustomizations) {
      const name = k.metadata!.name!;
      const spec = k.spec as Record<string, unknown> & { dependsOn?: { name: string }[]; healthChecks?: unknown[]; postBuild: { substituteFrom: unknown[] } };
      assert.equal(k.apiVersion, 'kustomize.toolkit.fluxcd.io/v1', name);
      if (name === 'infrastructure') assert.equal(spec.dependsOn, undefined);
      // apps connects to PostgreSQL at startup: it waits for database too.
      else if (name === 'apps') assert.deepEqual(spec.dependsOn, [{ name: 'infrastructure' }, { name: 'database' }], name);
      else assert.deepEqual(spec.dependsOn, [{ name: 'infrastructure' }], name);
      assert.equal(spec.prune, true, name);
      for (const field of ['interval', 'retryInterval', 'timeout']) assert.match(String(spec[field]), /^\d+(ms|s|m|h)$/, `${name}.${field}`);
      assert.ok((Array.isArray(spec.healthChecks) && spec.healthChecks.length > 0) || spec.wait === true, `${name} neither has healthChecks nor waits`);
      assert.equal(spec.path, `./clusters/eu-prod-1/${name}`);
      assert.deepEqual(spec.sourceRef, { kind: 'GitRepository', name: 'flux-system', namespace: 'flux-system' });
      assert.deepEqual(spec.postBuild.substituteFrom, [{ kind: 'ConfigMap', name: 'cluster-config' }]);
    }
    assert.deepEqual(
      fullPass.result.layers.map((l) => l.name),
      ['infrastructure', 'database', 'apps', 'cert-manager-config'],
    );
  });

  it('wrote, in pass infrastructure, only the entry point, provenance, flux/ (ConfigMap + infrastructure) and the infrastructure overlay', () => {
    assert.equal(infraPass.result.pass, 'infrastructure');
    assert.deepEqual(
      [...infraFiles.keys()],
      [
        `${GITOPS_PATH}/flux/cluster-config.yaml`,
        `${GITOPS_PATH}/flux/infrastructure.yaml`,
        `${GITOPS_PATH}/flux/kustomization.yaml`,
        `${GITOPS_PATH}/infrastructure/identity/external-dns.yaml`,
        `${GITOPS_PATH}/infrastructure/identity/kustomization.yaml`,
        `${GITOPS_PATH}/infrastructure/ingress-nginx-replicas.yaml`,
        `${GITOPS_PATH}/infrastructure/kustomization.yaml`,
        `${GITOPS_PATH}/kustomization.yaml`,
        `${GITOPS_PATH}/provenance.yaml`,
      ],
    );
    assert.deepEqual(infraPass.result.credentials, []);
    assert.ok(![...infraFiles.values()].some((text) => text.includes('SealedSecret')));
    assert.deepEqual((parse(infraFiles.get(`${GITOPS_PATH}/flux/kustomization.yaml`)!) as { resources: string[] }).resources, [
      'cluster-config.yaml',
      'infrastructure.yaml',
    ]);
    assert.equal((parse(infraFiles.get(`${GITOPS_PATH}/provenance.yaml`)!) as { pass: string }).pass, 'infrastructure');
    // The second pass then adds the other layers without touching what the first wrote.
    for (const [path, text] of infraFiles) {
      if (path.endsWith('/provenance.yaml') || path.endsWith('/flux/kustomization.yaml')) continue;
      assert.equal(files.get(path), text, `${path} changed between the passes`);
    }
  });

  it("seals credentials that decrypt with the cluster's key to values of the declared length and charset", () => {
    const values = unsealTree(files);
    // No --registry-auth: no pull secret at all (public images), never an invented one.
    assert.deepEqual([...values.keys()].sort(), ['database/postgresql-credentials', 'database/rabbitmq-credentials', 'tcr/tcr-database']);
    assert.equal(fullPass.result.credentials.find((c) => c.name === 'registry-pull-secret')!.action, 'omitted');
    for (const [path, text] of files)
      assert.ok(!text.includes('tcr-pull') && !path.includes('registry-pull-secret'), `${path} holds a pull secret nobody supplied`);
    const pg = values.get('database/postgresql-credentials')!;
    const rabbit = values.get('database/rabbitmq-credentials')!;
    assert.deepEqual(Object.keys(pg).sort(), ['password', 'postgres-password']);
    for (const value of [pg.password!, pg['postgres-password']!, rabbit['rabbitmq-password']!]) assert.match(value, /^[A-Za-z0-9]{32}$/);
    assert.match(rabbit['rabbitmq-erlang-cookie']!, /^[A-Za-z0-9]{64}$/);
    assert.deepEqual(values.get('tcr/tcr-database'), { DATABASE_PASSWORD: pg.password });

    // The apps and database layers actually apply them (the sealed/ kustomizations are wired in).
    const appSecrets = objectsOf(built.get(`${GITOPS_PATH}/apps`)!)
      .filter((o) => o.kind === 'SealedSecret')
      .map((o) => o.metadata!.name)
      .sort();
    const dbSecrets = objectsOf(built.get(`${GITOPS_PATH}/database`)!)
      .filter((o) => o.kind === 'SealedSecret')
      .map((o) => o.metadata!.name)
      .sort();
    assert.deepEqual(appSecrets, ['tcr-database']);
    assert.deepEqual(dbSecrets, ['postgresql-credentials', 'rabbitmq-credentials']);
  });

  it('writes no plaintext credential anywhere in the work tree', async () => {
    const secrets = secretsOf(unsealTree(files));
    assert.ok(secrets.length >= 10);
    const everything = await readTree(repo);
    for (const [path, text] of everything) {
      for (const secret of secrets) assert.ok(!text.includes(secret), `${path} contains a plaintext credential`);
    }
  });

  it("leaves no trace of the reference's name, domain or region, except provenance's reference field", () => {
    for (const [path, text] of files) {
      const lines = path.endsWith('/provenance.yaml') ? text.split('\n').filter((l) => l !== 'reference: development') : text.split('\n');
      for (const old of [REFERENCE.name, REFERENCE.domain, REFERENCE.region]) {
        assert.ok(!path.includes(old), path);
        const line = lines.find((l) => l.includes(old));
        assert.equal(line, undefined, `${path} still mentions ${old}`);
      }
    }
    assert.match(files.get(`${GITOPS_PATH}/provenance.yaml`)!, /^reference: development$/m);
  });

  it("never edits base/ or anything outside the new cluster's directory", async () => {
    assert.deepEqual(await readTree(repo, 'base'), baseBefore);
    assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=normal'), '?? clusters/eu-prod-1/\n');
  });

  it('records provenance: the generator, the reference, the platform commit, the pass and every file it wrote', () => {
    assert.deepEqual(parse(files.get(`${GITOPS_PATH}/provenance.yaml`)!), {
      generator: 'gitops-scaffolder',
      generatorVersion: '0.0.0-test',
      reference: 'development',
      platformCommit: git(repo, 'rev-parse', 'HEAD').trim(),
      pass: 'all',
      cluster: CLUSTER,
      files: [...files.keys()]
        .map((p) => p.slice(GITOPS_PATH.length + 1))
        .filter((p) => p !== 'provenance.yaml')
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    });
  });

  it('draws the Flux graph of the four layers in every format', async () => {
    const json = JSON.parse(await drawClusterGraph(repo, CLUSTER.name, 'json')) as {
      nodes: { id: string; name: string }[];
      edges: { from: string; to: string }[];
      order: string[];
      cycles: unknown[];
    };
    assert.deepEqual(json.nodes.map((n) => n.name).sort(), LAYERS);
    assert.deepEqual(json.edges.map((e) => `${e.from} -> ${e.to}`).sort(), [
      'flux-system/database -> flux-system/apps',
      ...['apps', 'cert-manager-config', 'database'].map((l) => `flux-system/infrastructure -> flux-system/${l}`),
    ]);
    assert.equal(json.order[0], 'flux-system/infrastructure');
    assert.deepEqual(json.cycles, []);

    const mermaid = await drawClusterGraph(repo, CLUSTER.name, 'mermaid');
    assert.match(mermaid, /^flowchart /);
    for (const l of ['apps', 'cert_manager_config', 'database']) assert.ok(mermaid.includes(`k_flux_system_infrastructure --> k_flux_system_${l}`), l);

    const dot = await drawClusterGraph(repo, CLUSTER.name, 'dot');
    assert.match(dot, /^digraph /);
    for (const l of ['apps', 'cert-manager-config', 'database']) assert.ok(dot.includes(`"flux-system/infrastructure" -> "flux-system/${l}"`), l);

    const svg = await drawClusterGraph(repo, CLUSTER.name, 'svg');
    assert.match(svg, /<svg[\s>]/);
    assert.match(svg.trimEnd(), /<\/svg>$/);
    for (const l of LAYERS) assert.ok(svg.includes(`id="node-flux-system-${l}"`), `svg lacks ${l}`);
    for (const l of ['apps', 'cert-manager-config', 'database'])
      assert.ok(svg.includes(`id="edge-flux-system-infrastructure--flux-system-${l}"`), `svg lacks the edge to ${l}`);
  });
});

describe('re-rendering an existing cluster', () => {
  let tmp: string;
  let repo: string;
  let firstValues: Map<string, Record<string, string>>;
  const options = { cluster: CLUSTER, certificate, generatorVersion: '0.0.0-test' } as const;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'render-converge-'));
    repo = join(tmp, 'repo');
    await initPlatformRepository(repo, platformDir());
    await renderWorkTree(repo, { ...options, pass: 'infrastructure' });
    await renderWorkTree(repo, { ...options, pass: 'all' });
    firstValues = unsealTree(await readTree(repo, GITOPS_PATH));
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'eu-prod-1');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('changes no byte when rendered again with the same arguments, keeping every credential', async () => {
    const { result, changes } = await renderWorkTree(repo, { ...options, pass: 'all' });
    assert.deepEqual(changes.written, []);
    assert.deepEqual(changes.removed, []);
    assert.deepEqual(result.credentials.map((c) => c.action).sort(), ['kept', 'kept', 'kept', 'omitted', 'omitted']);
    assert.equal(git(repo, 'status', '--porcelain'), '');
    assert.equal(git(repo, 'diff', 'HEAD'), '');
  });

  it('keeps every layer when asked for pass infrastructure on a cluster that has its full tree', async () => {
    const { result } = await renderWorkTree(repo, { cluster: CLUSTER, generatorVersion: '0.0.0-test', pass: 'infrastructure' });
    assert.equal(result.pass, 'all');
    assert.deepEqual(result.layers.map((l) => l.name).sort(), LAYERS);
    assert.equal(git(repo, 'status', '--porcelain'), '');
  });

  it('puts back a deleted file on the next render, and keeps a file it did not write', async () => {
    await rm(join(repo, GITOPS_PATH, 'apps/hosts/tcr-docs.yaml'));
    await writeFile(join(repo, GITOPS_PATH, 'apps/hosts/stray.yaml'), 'stray: true\n');
    const { changes } = await renderWorkTree(repo, { ...options, pass: 'all' });
    assert.deepEqual(changes.written, [`${GITOPS_PATH}/apps/hosts/tcr-docs.yaml`]);
    assert.deepEqual(changes.removed, []);
    assert.equal(await readFile(join(repo, GITOPS_PATH, 'apps/hosts/stray.yaml'), 'utf8'), 'stray: true\n');
    await rm(join(repo, GITOPS_PATH, 'apps/hosts/stray.yaml'));
    assert.equal(git(repo, 'status', '--porcelain'), '');
  });

  it('removes a file it wrote before and no longer produces', async () => {
    const withInstance = await renderWorkTree(repo, { ...options, pass: 'all', fluxInstance: true, syncUrl: 'https://git.example.net/fleet.git' });
    assert.ok(withInstance.changes.written.includes(`${GITOPS_PATH}/flux/flux-instance.yaml`));
    const { result, changes } = await renderWorkTree(repo, { ...options, pass: 'all', fluxInstance: false });
    // The operator's HelmRelease goes with it (on the cluster it is never pruned: the operator stays installed).
    assert.deepEqual(result.stale, [`${GITOPS_PATH}/flux/flux-instance.yaml`, `${GITOPS_PATH}/flux/flux-operator.yaml`]);
    assert.deepEqual(changes.removed, [`${GITOPS_PATH}/flux/flux-instance.yaml`, `${GITOPS_PATH}/flux/flux-operator.yaml`]);
    assert.equal(git(repo, 'status', '--porcelain'), '');
  });

  it('seals every credential anew with --rotate-credentials, still consistent', async () => {
    const { result } = await renderWorkTree(repo, { ...options, pass: 'all', rotateCredentials: true });
    // Rotation invents no pull secret either.
    assert.deepEqual(result.credentials.map((c) => c.action).sort(), ['generated', 'generated', 'generated', 'omitted', 'omitted']);
    const changed = git(repo, 'diff', '--name-only').trim().split('\n').sort();
    assert.deepEqual(changed, [
      `${GITOPS_PATH}/apps/sealed/sealed-tcr-database.yaml`,
      `${GITOPS_PATH}/database/sealed/sealed-postgresql-credentials.yaml`,
      `${GITOPS_PATH}/database/sealed/sealed-rabbitmq-credentials.yaml`,
    ]);
    const values = unsealTree(await readTree(repo, GITOPS_PATH));
    for (const [secret, data] of values) {
      for (const [key, value] of Object.entries(data)) assert.notEqual(value, firstValues.get(secret)![key], `${secret} ${key} was not rotated`);
    }
    assert.equal(values.get('tcr/tcr-database')!.DATABASE_PASSWORD, values.get('database/postgresql-credentials')!.password);
  });
});

describe('a cluster path that flux bootstrap wrote flux-system/ into', () => {
  let tmp: string;
  let repo: string;
  let bootstrap: Map<string, string>;
  const options = { cluster: CLUSTER, certificate, generatorVersion: '0.0.0-test' } as const;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'render-bootstrap-'));
    repo = join(tmp, 'repo');
    await initPlatformRepository(repo, platformDir());
    // Bootstrapped before the first render: no provenance yet.
    bootstrap = await writeFluxBootstrap(repo, CLUSTER.name);
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'flux bootstrap');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  async function assertBootstrapKept(): Promise<void> {
    for (const [path, text] of bootstrap) assert.equal(await readFile(join(repo, path), 'utf8'), text, `${path} changed`);
    const root = parse(await readFile(join(repo, GITOPS_PATH, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    assert.deepEqual(root.resources, ['flux', 'flux-system']);
  }

  it('keeps flux-system/ byte for byte and listed in the entry point, through both passes, and verifies clean', async () => {
    for (const pass of ['infrastructure', 'all'] as const) {
      const { result, changes } = await renderWorkTree(repo, { ...options, pass });
      assert.deepEqual(changes.removed, [], pass);
      assert.deepEqual(result.stale, [], pass);
      assert.deepEqual(result.foreignRoots, ['flux-system'], pass);
      await assertBootstrapKept();
    }
    // The entry point builds with Flux itself in it, so the sync keeps it.
    const built = objectsOf(await kustomize.build(repo, GITOPS_PATH));
    assert.ok(built.some((o) => o.kind === 'Deployment' && o.metadata?.name === 'kustomize-controller'));
    assert.ok(built.some((o) => o.kind === 'Kustomization' && o.metadata?.name === 'flux-system'));
    const report = await verifyWorkTree(repo, { cluster: CLUSTER.name });
    assert.deepEqual(report.findings, [], report.summary);
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'eu-prod-1');
    const again = await renderWorkTree(repo, { ...options, pass: 'all' });
    assert.deepEqual(again.changes.written, []);
    assert.equal(git(repo, 'status', '--porcelain'), '');
  });

  it('removes, after a generator that recorded no file list, only what that generator could have written', async () => {
    const provenancePath = join(repo, GITOPS_PATH, 'provenance.yaml');
    const provenance = await readFile(provenancePath, 'utf8');
    await writeFile(provenancePath, provenance.replace(/^files:\n(?: {2}- .*\n)*/m, ''));
    assert.doesNotMatch(await readFile(provenancePath, 'utf8'), /^files:/m);
    await writeFile(join(repo, GITOPS_PATH, 'flux/old-layer.yaml'), 'old: true\n');
    await writeFile(join(repo, GITOPS_PATH, 'apps/hosts/old-host.yaml'), 'old: true\n');
    await writeFile(join(repo, GITOPS_PATH, 'NOTES.md'), "ours, not the generator's\n");
    const { changes } = await renderWorkTree(repo, { ...options, pass: 'all' });
    assert.deepEqual(changes.removed, [`${GITOPS_PATH}/apps/hosts/old-host.yaml`, `${GITOPS_PATH}/flux/old-layer.yaml`]);
    assert.equal(await readFile(join(repo, GITOPS_PATH, 'NOTES.md'), 'utf8'), "ours, not the generator's\n");
    await assertBootstrapKept();
    assert.deepEqual(git(repo, 'status', '--porcelain').split('\n').filter(Boolean), [`?? ${GITOPS_PATH}/NOTES.md`]);
  });
});

describe('rendering the same spec into two fresh copies of the platform', () => {
  let tmp: string;
  const trees: Map<string, string>[] = [];

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'render-determinism-'));
    // Two fresh copies of one platform commit: init one, clone it.
    await initPlatformRepository(join(tmp, 'a'), platformDir());
    git(tmp, 'clone', '--quiet', join(tmp, 'a'), join(tmp, 'b'));
    for (const copy of ['a', 'b']) {
      await renderWorkTree(join(tmp, copy), { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
      trees.push(await readTree(join(tmp, copy), GITOPS_PATH));
    }
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('gives byte-identical files apart from the sealed ciphertexts', () => {
    const [a, b] = trees as [Map<string, string>, Map<string, string>];
    assert.deepEqual([...a.keys()], [...b.keys()]);
    for (const [path, text] of a) {
      if (isSealedFile(path)) {
        assert.equal(withoutCiphertexts(b.get(path)!), withoutCiphertexts(text), path);
        assert.notEqual(b.get(path), text, `${path}: ciphertexts are random by design`);
      } else {
        assert.equal(b.get(path), text, path);
      }
    }
  });
});

describe('renderCluster on reference environments that are less tidy than the shipped one', () => {
  let tmp: string;
  let platform: Map<string, string>;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'render-edge-'));
    platform = await readTree(platformDir());
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  /** The shipped platform with some files replaced (content) or removed (null), on disk. */
  async function platformCopy(name: string, changes: Readonly<Record<string, string | null>>): Promise<string> {
    const dir = join(tmp, name);
    await cp(platformDir(), dir, { recursive: true });
    for (const [path, content] of Object.entries(changes)) {
      if (content === null) await rm(join(dir, path));
      else await writeFile(join(dir, path), content);
    }
    return dir;
  }

  const renderMemory = (files: ReadonlyMap<string, string>, overrides: Partial<RenderOptions> = {}) =>
    renderCluster(memoryRepoReader(files), {
      cluster: CLUSTER,
      pass: 'all',
      certificate,
      random: (n) => new Uint8Array(n).map((_, i) => i),
      generatorVersion: 't',
      ...overrides,
    });

  it("renders a cluster whose domain is below the reference's domain", async () => {
    const cluster = { ...CLUSTER, domain: 'eu.dev.tantilium.example.com' };
    const { tree } = await renderMemory(platform, { cluster });
    assert.match(tree.get(`${GITOPS_PATH}/flux/cluster-config.yaml`)!, /^ {2}cluster_domain: eu\.dev\.tantilium\.example\.com$/m);
    assert.match(tree.get(`${GITOPS_PATH}/apps/hosts/tcr-console.yaml`)!, /value: console\.eu\.dev\.tantilium\.example\.com$/m);
  });

  it("renders a cluster whose domain contains the reference's name, without replacing it again", async () => {
    const cluster = { ...CLUSTER, domain: 'development.example.net' };
    const { tree } = await renderMemory(platform, { cluster });
    assert.match(tree.get(`${GITOPS_PATH}/infrastructure/identity/external-dns.yaml`)!, /- development\.example\.net$/m);
    assert.match(tree.get(`${GITOPS_PATH}/flux/cluster-config.yaml`)!, /^ {2}cluster_name: eu-prod-1$/m);
  });

  it("does not carry over the reference cluster's own flux-system/ (its flux bootstrap), and keeps the new cluster's", async () => {
    const files = new Map(platform);
    for (const [rel, text] of fluxBootstrapFiles('development')) files.set(`clusters/development/${rel}`, text);
    files.set('clusters/development/kustomization.yaml', 'resources:\n  - flux\n  - flux-system\n');
    const fresh = await renderMemory(files);
    assert.deepEqual(
      [...fresh.tree.keys()].filter((p) => p.includes('flux-system')),
      [],
    );
    assert.match(fresh.tree.get(`${GITOPS_PATH}/kustomization.yaml`)!, /^resources:\n {2}- flux\n$/m);
    const own = fluxBootstrapFiles(CLUSTER.name);
    for (const [rel, text] of own) files.set(`${GITOPS_PATH}/${rel}`, text);
    const bootstrapped = await renderMemory(files);
    assert.deepEqual(
      [...bootstrapped.tree.keys()].filter((p) => p.includes('flux-system')),
      [],
    );
    assert.deepEqual(bootstrapped.stale, []);
    assert.deepEqual(bootstrapped.foreignRoots, ['flux-system']);
  });

  it('carries the region and the name over inside DNS names of an overlay (an S3 endpoint, a service address)', async () => {
    const files = new Map(platform);
    files.set(
      'clusters/development/database/backup-target.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: backup-target\n  namespace: database\ndata:\n  endpoint: https://s3.eu-central-1.amazonaws.com\n  bucket: backups\n  peer: postgresql.development.svc.cluster.local\n',
    );
    const { tree } = await renderMemory(files);
    assert.equal(
      tree.get(`${GITOPS_PATH}/database/backup-target.yaml`),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: backup-target\n  namespace: database\ndata:\n  endpoint: https://s3.eu-west-1.amazonaws.com\n  bucket: backups\n  peer: postgresql.eu-prod-1.svc.cluster.local\n',
    );
  });

  it('renames a carried-over file named after the reference, together with the reference to it', async () => {
    const files = new Map(platform);
    files.set(
      'clusters/development/apps/development.yaml',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: tcr-docs\n  namespace: tcr\nspec:\n  replicas: 1\n',
    );
    files.set(
      'clusters/development/apps/kustomization.yaml',
      files.get('clusters/development/apps/kustomization.yaml')!.replace('patches:\n', 'patches:\n  - path: development.yaml\n'),
    );
    const { tree } = await renderMemory(files);
    assert.ok(tree.has(`${GITOPS_PATH}/apps/eu-prod-1.yaml`));
    assert.ok(![...tree.keys()].some((p) => p.includes('development')));
    assert.match(tree.get(`${GITOPS_PATH}/apps/kustomization.yaml`)!, /^ {2}- path: eu-prod-1\.yaml$/m);
  });

  it("gives an overlay's own Ingress, written with the reference's domain, a host patch that builds", async () => {
    const dir = await platformCopy('overlay-ingress', {
      'clusters/development/apps/status-ingress.yaml': [
        'apiVersion: networking.k8s.io/v1',
        'kind: Ingress',
        'metadata:',
        '  name: tcr-status',
        '  namespace: tcr',
        'spec:',
        '  ingressClassName: ${ingress_class}',
        '  tls:',
        '    - hosts: [status.dev.tantilium.example.com]',
        '      secretName: tcr-status-tls',
        '  rules:',
        '    - host: status.dev.tantilium.example.com',
        '      http:',
        '        paths:',
        '          - { path: /, pathType: Prefix, backend: { service: { name: tcr-console, port: { name: http } } } }',
        '',
      ].join('\n'),
      'clusters/development/apps/kustomization.yaml': platform
        .get('clusters/development/apps/kustomization.yaml')!
        .replace('  - sealed\n', '  - sealed\n  - status-ingress.yaml\n'),
    });
    await renderWorkTree(dir, { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: 't' });
    const ingress = objectsOf(await kustomize.build(dir, `${GITOPS_PATH}/apps`)).find((o) => o.kind === 'Ingress' && o.metadata!.name === 'tcr-status')!;
    const spec = ingress.spec as { rules: { host: string; http: { paths: unknown[] } }[]; tls: { hosts: string[] }[] };
    assert.equal(spec.rules[0]!.host, 'status.eu-prod-1.example.net');
    assert.equal(spec.rules[0]!.http.paths.length, 1);
    assert.deepEqual(spec.tls[0]!.hosts, ['status.eu-prod-1.example.net']);
  });

  it('keeps the other env entries of external-dns when it sets the region (lists are replaced whole)', async () => {
    const base = platform.get('base/infrastructure/external-dns.yaml')!;
    const dir = await platformCopy('external-dns-env', {
      'base/infrastructure/external-dns.yaml': base.replace(
        '      - name: AWS_DEFAULT_REGION\n        value: ${cluster_region}\n',
        '      - name: AWS_DEFAULT_REGION\n        value: ${cluster_region}\n      - name: EXTERNAL_DNS_AWS_ZONE_TYPE\n        value: public\n',
      ),
    });
    await renderWorkTree(dir, { cluster: CLUSTER, pass: 'infrastructure', generatorVersion: 't' });
    const release = objectsOf(await kustomize.build(dir, `${GITOPS_PATH}/infrastructure`)).find(
      (o) => o.kind === 'HelmRelease' && o.metadata!.name === 'external-dns',
    )!;
    assert.deepEqual((release.spec as { values: { env: unknown } }).values.env, [
      { name: 'AWS_DEFAULT_REGION', value: 'eu-west-1' },
      { name: 'EXTERNAL_DNS_AWS_ZONE_TYPE', value: 'public' },
    ]);
  });

  it('gives external-dns its identity whole when the base release sets no values (a JSON patch cannot add below a missing member)', async () => {
    const base = parse(platform.get('base/infrastructure/external-dns.yaml')!) as { spec: { values?: unknown } };
    delete base.spec.values;
    const dir = await platformCopy('external-dns-no-values', { 'base/infrastructure/external-dns.yaml': stringify(base) });
    await renderWorkTree(dir, { cluster: CLUSTER, pass: 'infrastructure', generatorVersion: 't' });
    const release = objectsOf(await kustomize.build(dir, `${GITOPS_PATH}/infrastructure`)).find(
      (o) => o.kind === 'HelmRelease' && o.metadata!.name === 'external-dns',
    )!;
    assert.deepEqual((release.spec as { values: unknown }).values, {
      domainFilters: ['eu-prod-1.example.net'],
      txtOwnerId: 'eu-prod-1',
      env: [{ name: 'AWS_DEFAULT_REGION', value: 'eu-west-1' }],
    });
  });

  it('drops a generated component the new cluster does not get, so the layer still builds', async () => {
    const kustomization = platform.get('base/infrastructure/kustomization.yaml')!;
    const dir = await platformCopy('no-external-dns', {
      'base/infrastructure/external-dns.yaml': null,
      'base/infrastructure/kustomization.yaml': kustomization.replace('  - external-dns.yaml\n', ''),
    });
    const { result } = await renderWorkTree(dir, { cluster: CLUSTER, pass: 'infrastructure', generatorVersion: 't' });
    assert.ok(![...result.tree.keys()].some((p) => p.includes('/identity/')));
    assert.doesNotMatch(result.tree.get(`${GITOPS_PATH}/infrastructure/kustomization.yaml`)!, /^\s*- identity$/m);
    assert.ok(objectsOf(await kustomize.build(dir, `${GITOPS_PATH}/infrastructure`)).length > 0);
  });

  it("accepts `./`-prefixed entries in the reference's flux/kustomization.yaml", async () => {
    const files = new Map(platform);
    files.set(
      'clusters/development/flux/kustomization.yaml',
      files.get('clusters/development/flux/kustomization.yaml')!.replace(/^ {2}- (\S+)$/gm, '  - ./$1'),
    );
    const infra = await renderMemory(files, { pass: 'infrastructure' });
    assert.deepEqual((parse(infra.tree.get(`${GITOPS_PATH}/flux/kustomization.yaml`)!) as { resources: string[] }).resources, [
      'cluster-config.yaml',
      'infrastructure.yaml',
    ]);
    const all = await renderMemory(files);
    assert.deepEqual((parse(all.tree.get(`${GITOPS_PATH}/flux/kustomization.yaml`)!) as { resources: string[] }).resources, [
      'cluster-config.yaml',
      'infrastructure.yaml',
      'cert-manager-config.yaml',
      'database.yaml',
      'apps.yaml',
    ]);
  });

  it('names the field for each bad spec, and for a missing reference', async () => {
    const cases: [Partial<RenderOptions>, RegExp][] = [
      [{ cluster: { ...CLUSTER, name: '../evil' } }, /^cluster\.name: /],
      [{ cluster: { ...CLUSTER, name: 'development' } }, /^cluster\.name: must differ from the reference environment "development"/],
      [{ cluster: { ...CLUSTER, domain: 'localhost' } }, /^cluster\.domain: /],
      [{ cluster: { ...CLUSTER, region: 'EU_WEST' } }, /^cluster\.region: /],
      [{ reference: 'Staging' }, /^reference: /],
      [{ pass: 'all', certificate: undefined }, /^cert: sealing .* needs the cluster's Sealed Secrets certificate/],
    ];
    for (const [overrides, message] of cases) {
      await assert.rejects(
        renderMemory(platform, overrides),
        (error: unknown) => error instanceof ValidationError && message.test(error.message),
        String(message),
      );
    }
    await assert.rejects(renderMemory(platform, { reference: 'staging' }), /reference environment clusters\/staging\/ does not exist/);
  });
});
