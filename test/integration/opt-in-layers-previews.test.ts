/**
 * Opt-in layers and previews per pull request on the shipped platforms
 * (issue 25): each platform rendered with previews and an optional layer
 * switched on validates against the real CRDs of ../shared/crds, builds with
 * real kubectl kustomize and passes verify; switched off, the optional layer
 * ships suspended and the graph says so; and each verify rule meant for these
 * files fails the tree it is meant to fail.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ValidationError } from '../../src/errors.js';
import { renderWorkTree } from '../../src/git/render-work-tree.js';
import { initPlatformRepository } from '../../src/git/seed-repository.js';
import { fluxGraphOf } from '../../src/graph/flux-graph.js';
import { renderJson } from '../../src/graph/render-json.js';
import { KubectlKustomize } from '../../src/kustomize/kubectl-kustomize.js';
import { platformDir } from '../../src/package-paths.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { verifyWorkTree } from '../../src/workspace/verify-work-tree.js';
import { crdValidator, objectsOf as objectsOfText } from '../support/shared-crds.js';

type Obj = Record<string, unknown> & {
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  rules?: unknown[];
};

const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
const kustomize = new KubectlKustomize();
const validator = crdValidator();
const objectsOf = (text: string): Obj[] => objectsOfText<Obj>(text);

const PLATFORMS = {
  default: {
    cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' },
    syncUrl: 'https://github.com/acme/platform.git',
    providerType: 'GitHubPullRequest',
    optional: [] as string[],
  },
  'matrix-example': {
    cluster: { name: 'env-aws', domain: 'env-aws.example.net', region: 'eu-west-1', role: 'env', infra_provider: 'aws', dns_provider: 'route53' },
    syncUrl: 'https://gitlab.com/acme/platform.git',
    providerType: 'GitLabMergeRequest',
    optional: ['env-observability-agent'],
  },
} as const;

for (const [platform, setup] of Object.entries(PLATFORMS)) {
  describe(`${platform}: previews and opt-in layers switched on`, () => {
    let tmp: string;
    let repo: string;
    const dir = `clusters/${setup.cluster.name}`;
    const read = async (rel: string) => readFile(join(repo, dir, rel), 'utf8');
    const render = (enable_layers?: string[]) =>
      renderWorkTree(repo, {
        cluster: { ...setup.cluster, ...(enable_layers ? { enable_layers } : {}) },
        pass: 'all',
        certificate,
        generatorVersion: 't',
        fluxInstance: true,
        syncUrl: setup.syncUrl,
      });

    before(async () => {
      tmp = await mkdtemp(join(tmpdir(), 'opt-in-previews-'));
      repo = join(tmp, 'gitops');
      await initPlatformRepository(repo, platformDir(platform));
      await render(['previews', ...setup.optional]);
    });
    after(async () => {
      await rm(tmp, { recursive: true, force: true });
    });

    it('validates against the shared CRDs, builds with kustomize and passes verify', async () => {
      const built = objectsOf(await kustomize.build(repo, `${dir}/previews`));
      assert.deepEqual(built.map((o) => o.kind).sort(), ['ClusterRole', 'ClusterRoleBinding', 'ResourceSet', 'ResourceSetInputProvider', 'ServiceAccount']);
      for (const object of [...built, ...objectsOf(await read('flux/previews.yaml'))]) {
        const check = await validator.validate(object);
        assert.notEqual(check.status, 'unknown-kind', `no schema for ${object.kind}`);
        assert.deepEqual(check.status === 'unknown-kind' ? [] : check.issues, [], `${object.kind} ${object.metadata.name}`);
      }
      const report = await verifyWorkTree(repo, { cluster: setup.cluster.name });
      assert.deepEqual(report.findings, []);
    });

    it("lists the forge's labelled requests with a limit, and renders per request a Namespace, a GitRepository at its commit and a Kustomization into the namespace", async () => {
      const built = objectsOf(await kustomize.build(repo, `${dir}/previews`));
      const provider = built.find((o) => o.kind === 'ResourceSetInputProvider')!;
      assert.equal(provider.spec!.type, setup.providerType);
      assert.deepEqual(provider.spec!.filter, { labels: ['preview'], limit: platform === 'default' ? 5 : 3 });
      const set = built.find((o) => o.kind === 'ResourceSet')!;
      assert.equal(set.spec!.serviceAccountName, 'preview-deployer');
      const [namespace, repository, kustomization] = set.spec!.resources as Obj[];
      assert.equal(namespace!.metadata.name, 'preview-pr-<< inputs.id >>');
      assert.deepEqual((repository!.spec as { ref: unknown }).ref, { commit: '<< inputs.sha >>' });
      assert.equal(kustomization!.spec!.targetNamespace, 'preview-pr-<< inputs.id >>');
      const role = built.find((o) => o.kind === 'ClusterRole')!;
      assert.deepEqual(
        (role.rules as { apiGroups: string[]; resources: string[] }[]).map((r) => `${r.apiGroups.join()}/${r.resources.join()}`),
        ['/namespaces', 'source.toolkit.fluxcd.io/gitrepositories', 'kustomize.toolkit.fluxcd.io/kustomizations'],
      );
    });

    it('ships an opt-in layer suspended where the cluster does not enable it, shown as suspended in the graph, and verify still passes', async () => {
      const { result } = await render([]);
      assert.equal(existsSync(join(repo, dir, 'previews')), false, 'previews are rendered only where the cluster opts in');
      for (const name of setup.optional) {
        const [layer] = objectsOf(await read(`flux/${name}.yaml`));
        assert.equal(layer!.spec!.suspend, true);
        assert.equal(layer!.metadata.annotations?.['gitops-scaffolder.io/optional-layer'], 'true');
      }
      const layers = await Promise.all(result.layers.map(async (l) => ({ object: objectsOf(await read(`flux/${l.name}.yaml`))[0] })));
      const nodes = (JSON.parse(renderJson(fluxGraphOf(layers))) as { nodes: { name: string; suspended?: boolean }[] }).nodes;
      assert.deepEqual(
        nodes.filter((n) => n.suspended).map((n) => n.name),
        setup.optional,
      );
      assert.deepEqual((await verifyWorkTree(repo, { cluster: setup.cluster.name })).findings, []);
      await render(['previews', ...setup.optional]);
    });

    it('refuses a layer name the platform does not have, naming the optional ones', async () => {
      await assert.rejects(render(['no-such-layer']), (error: unknown) => {
        assert.ok(error instanceof ValidationError);
        assert.equal(error.issues[0]!.field, 'cluster.enable_layers');
        assert.match(
          error.issues[0]!.message,
          new RegExp(
            `"no-such-layer" is not a layer of this platform; the optional layers it can enable: ${[...setup.optional, 'previews'].sort().join(', ')}`,
          ),
        );
        return true;
      });
    });
  });
}

describe('verify on a rendered previews tree, each rule failing its fixture', () => {
  let tmp: string;
  let pristine: string;
  const cluster = PLATFORMS['matrix-example'].cluster;
  const dir = `clusters/${cluster.name}`;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'opt-in-previews-rules-'));
    pristine = join(tmp, 'pristine');
    await initPlatformRepository(pristine, platformDir('matrix-example'));
    // env-observability-agent left suspended, previews on.
    await renderWorkTree(pristine, {
      cluster: { ...cluster, enable_layers: ['previews'] },
      pass: 'all',
      certificate,
      generatorVersion: 't',
      fluxInstance: true,
      syncUrl: PLATFORMS['matrix-example'].syncUrl,
    });
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
    return [...(await verifyWorkTree(copy, { cluster: cluster.name })).findings];
  }

  it('passes untouched', async () => {
    assert.deepEqual((await verifyWorkTree(pristine, { cluster: cluster.name })).findings, []);
  });

  it('flags an always-on layer that depends on the suspended opt-in layer', async () => {
    const findings = await findingsAfter('flux/env-app.yaml', ([k]) => {
      (k!.spec!.dependsOn as { name: string }[]).push({ name: 'env-observability-agent' });
    });
    assert.deepEqual(findings, [
      `${dir}/flux/env-app.yaml: Kustomization flux-system/env-app: dependsOn flux-system/env-observability-agent, which is suspended (spec.suspend: true, an opt-in layer not enabled here): Flux holds this one back as DependencyNotReady and it never becomes Ready. Enable that layer on this cluster, make this layer optional too, or drop the dependency`,
    ]);
  });

  it('flags a preview ServiceAccount whose role grants more than namespaces, gitrepositories and kustomizations', async () => {
    const findings = await findingsAfter('previews/rbac.yaml', (objects) => {
      objects.find((o) => o.kind === 'ClusterRole')!.rules!.push({ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] });
    });
    assert.deepEqual(findings, [
      `${dir}/previews: ResourceSet flux-system/previews: ServiceAccount flux-system/preview-deployer's ClusterRole gitops-scaffolder-preview-deployer grants secrets: a preview's role must grant exactly namespaces, gitrepositories.source.toolkit.fluxcd.io and kustomizations.kustomize.toolkit.fluxcd.io`,
    ]);
  });

  it("checks the operator's << inputs.* >> after Flux's ${var}: an input the provider does not export, a rendered value its schema refuses, an undefined variable", async () => {
    const findings = await findingsAfter('previews/resource-set.yaml', ([set]) => {
      const [namespace, , kustomization] = set!.spec!.resources as Obj[];
      namespace!.metadata.labels = { 'gitops-scaffolder.io/preview': '<< inputs.id >>' };
      (kustomization!.spec!.postBuild as { substitute: Record<string, string> }).substitute.preview_host = 'pr-<< inputs.id >>.${preview_zone}';
      (kustomization!.metadata as Record<string, unknown>).name = 'preview-<< inputs.number >>';
    });
    assert.deepEqual(findings, [
      `${dir}/flux/previews.yaml: Kustomization flux-system/previews: \${preview_zone} (used by ResourceSet flux-system/previews) is not defined by postBuild.substitute, ConfigMap flux-system/cluster-config: Flux 2.9+ fails the reconcile (strict substitution)`,
      `${dir}/previews: ResourceSet flux-system/previews: << inputs.number >> names an input its input sets do not have (ResourceSetInputProvider flux-system/preview-requests (GitLabMergeRequest) export author, branch, id, sha, title): the operator fails to render it`,
    ]);
    const unquoted = await findingsAfter('previews/resource-set.yaml', ([set]) => {
      const [namespace] = set!.spec!.resources as Obj[];
      namespace!.metadata.labels = { 'gitops-scaffolder.io/preview': '<< inputs.id >>' };
    });
    assert.deepEqual(unquoted, [
      `${dir}/previews: Namespace preview-pr-42 (rendered by ResourceSet flux-system/previews with sample inputs): metadata.labels["gitops-scaffolder.io/preview"]: must be string (got number 42)`,
    ]);
  });
});
