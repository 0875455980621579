/**
 * planRemoval in memory, fast: what a removal deletes, keeps and rewrites for
 * a flux-bootstrap cluster and a FluxInstance cluster, and (generated hostile
 * input) that it never deletes a file the generator did not write.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { shippedPlatformFiles } from '../git/shipped-platform-files.js';
import { renderCluster } from '../gitops/render-cluster.js';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import { parseYamlDocuments, toYaml } from '../gitops/yaml.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { fluxBootstrapFiles } from '../../test/support/flux-bootstrap.js';
import { isRecord } from '../model/is-record.js';
import { planRemoval } from './plan-removal.js';
import { formatObjectRef } from './prune-forecast.js';

const random = (size: number) => randomBytes(size);

describe('planRemoval', () => {
  let files: Map<string, string>;
  before(async () => {
    files = await shippedPlatformFiles();
    const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
    const render = async (name: string, fluxInstance: boolean) => {
      const result = await renderCluster(memoryRepoReader(files), {
        cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' },
        pass: 'all',
        certificate,
        random,
        generatorVersion: 'test',
        ...(fluxInstance ? { fluxInstance: true, syncUrl: 'https://github.com/example/fleet.git' } : {}),
      });
      for (const [path, text] of result.tree) files.set(path, text);
    };
    // Bootstrap first, then render again so the entry point lists flux-system (as the runner's second pass does).
    for (const [rel, text] of fluxBootstrapFiles('boot')) files.set(`clusters/boot/${rel}`, text);
    await render('boot', false);
    await render('inst', true);
  });

  const entry = (plan: Awaited<ReturnType<typeof planRemoval>>) =>
    parseYamlDocuments(plan.write.get(`${plan.gitopsPath}/kustomization.yaml`)!, 'entry')[0] as { resources: string[] };

  it('a bootstrap cluster keeps flux-system/ listed at the sync path, and says what the sync and each layer delete', async () => {
    const plan = await planRemoval(memoryRepoReader(files), 'boot', 'development');
    assert.equal(plan.flux, 'bootstrap');
    assert.deepEqual(entry(plan).resources, ['flux-system'], 'the sync path still lists Flux itself, so Flux stays installed');
    assert.ok(!plan.remove.includes('clusters/boot/kustomization.yaml'), 'the entry point is rewritten, not deleted');
    assert.ok(plan.kept.every((p) => p.startsWith('clusters/boot/flux-system/')));
    assert.deepEqual(plan.layers.map((l) => [l.name, l.path, l.prunes]).sort(), [
      ['apps', 'clusters/boot/apps', true],
      ['cert-manager-config', 'clusters/boot/cert-manager-config', true],
      ['database', 'clusters/boot/database', true],
      ['infrastructure', 'clusters/boot/infrastructure', true],
    ]);
    const sync = plan.syncDeletes.map(formatObjectRef);
    assert.ok(sync.includes('Kustomization flux-system/database'));
    assert.ok(sync.includes('ConfigMap flux-system/cluster-config'));
  });

  it('a FluxInstance cluster keeps the instance and its sync path, instead of a missing path that prunes nothing', async () => {
    const plan = await planRemoval(memoryRepoReader(files), 'inst', 'development');
    assert.equal(plan.flux, 'flux-instance');
    // The operator's own HelmRelease stays too: pruning it would uninstall the operator that runs Flux.
    assert.deepEqual(entry(plan).resources, ['flux/flux-instance.yaml', 'flux/flux-operator.yaml']);
    assert.deepEqual(plan.kept, ['clusters/inst/flux/flux-instance.yaml', 'clusters/inst/flux/flux-operator.yaml']);
    assert.ok(!plan.remove.includes('clusters/inst/flux/flux-instance.yaml'));
    assert.ok(!plan.syncDeletes.some((o) => o.name === 'flux-operator'), 'the operator is not pruned');
    assert.ok(plan.remove.includes('clusters/inst/flux/kustomization.yaml'));
    assert.ok(!plan.syncDeletes.some((o) => o.kind === 'FluxInstance'), 'Flux itself is not pruned');
    assert.equal(plan.layers.length, 4);
  });

  it("the entry point keeps listing a person's root that stays, and drops a root whose files are all removed", async () => {
    // An entry point listing a generated layer directly (apps/) and a directory of someone else's (monitoring/).
    const edited = new Map(files)
      .set(
        'clusters/boot/kustomization.yaml',
        toYaml({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: ['./flux', 'flux-system', './apps/', 'monitoring'] }),
      )
      .set('clusters/boot/monitoring/kustomization.yaml', 'resources: []\n');
    const plan = await planRemoval(memoryRepoReader(edited), 'boot', 'development');
    assert.ok(
      plan.remove.some((p) => p.startsWith('clusters/boot/apps/')),
      "apps/ is the generator's and goes",
    );
    // Listing apps/ after its files are gone would fail the sync's build ("path not found"), and it would prune nothing.
    assert.deepEqual(entry(plan).resources, ['flux-system', 'monitoring']);
  });

  it("a FluxInstance file the generator did not write is a person's: kept, and the cluster is still reported as bootstrapped", async () => {
    const path = 'clusters/boot/flux/flux-instance.yaml';
    const edited = new Map(files).set(path, 'apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: { name: flux, namespace: flux-system }\n');
    const plan = await planRemoval(memoryRepoReader(edited), 'boot', 'development');
    assert.equal(plan.flux, 'bootstrap', 'Flux runs from flux-system/, not from a FluxInstance the generator wrote');
    assert.ok(plan.kept.includes(path));
    assert.ok(!plan.remove.includes(path));
  });

  it('a layer that does not prune is reported as leaving everything', async () => {
    const edited = new Map(files);
    const path = 'clusters/inst/flux/database.yaml';
    edited.set(path, files.get(path)!.replace('prune: true', 'prune: false'));
    const plan = await planRemoval(memoryRepoReader(edited), 'inst', 'development');
    assert.deepEqual(
      plan.layers.filter((l) => !l.prunes).map((l) => l.name),
      ['database'],
    );
  });

  /** `files` with the provenance of cluster `inst` rewritten by `edit`. */
  const withProvenance = (edit: (provenance: Record<string, unknown>) => void): Map<string, string> => {
    const path = 'clusters/inst/provenance.yaml';
    const provenance = parseYamlDocuments(files.get(path)!, path)[0];
    assert.ok(isRecord(provenance));
    edit(provenance);
    return new Map(files).set(path, toYaml(provenance));
  };

  it('plans nothing for the reference environment, a cluster that does not exist, or one it cannot tell it wrote', async () => {
    await assert.rejects(planRemoval(memoryRepoReader(files), 'development', 'development'), ValidationError, 'the template of every cluster is never removed');
    await assert.rejects(planRemoval(memoryRepoReader(files), 'nowhere', 'development'), NotFoundError);
    // Written by hand: no provenance, so nothing in it is the generator's.
    const byHand = new Map(files).set('clusters/hand/kustomization.yaml', 'resources: [apps]\n').set('clusters/hand/apps/a.yaml', 'kind: ConfigMap\n');
    await assert.rejects(
      planRemoval(memoryRepoReader(byHand), 'hand', 'development'),
      (error: unknown) => error instanceof ConflictError && /not generated by gitops-scaffolder/.test(error.message),
    );
    // An older generator's provenance, without the list of what it wrote: which files are its own is unknown.
    const unlisted = withProvenance((provenance) => delete provenance.files);
    await assert.rejects(
      planRemoval(memoryRepoReader(unlisted), 'inst', 'development'),
      (error: unknown) => error instanceof ConflictError && /does not list the files/.test(error.message),
    );
  });

  it("a provenance naming files outside the cluster or a neighbour's removes only the cluster's own files", async () => {
    const before = await planRemoval(memoryRepoReader(files), 'inst', 'development');
    const hostile = withProvenance((provenance) => {
      provenance.files = [
        ...(provenance.files as string[]),
        '../boot/kustomization.yaml',
        '../../platform/base/x.yaml',
        '/etc/passwd',
        'clusters/boot/flux/apps.yaml',
      ];
    });
    const plan = await planRemoval(memoryRepoReader(hostile), 'inst', 'development');
    assert.deepEqual(plan.remove, before.remove);
    assert.ok(plan.remove.every((p) => p.startsWith('clusters/inst/')));
    assert.ok(!plan.remove.some((p) => p.startsWith('clusters/boot/')));
  });

  it('never deletes a file the generator did not write, whatever its name (property)', async () => {
    const segment = fc.constantFrom(
      'flux',
      'database',
      'sealed',
      'apps',
      'hosts',
      'flux-system',
      'x',
      'provenance.yaml',
      'kustomization.yaml',
      'flux-instance.yaml',
    );
    const extraPath = fc
      .tuple(
        fc.array(segment, { minLength: 0, maxLength: 3 }),
        fc.constantFrom('provenance.yaml.bak', 'kustomization.yml', 'sealed-x.yaml', 'notes.md', 'flux-instance.yaml', 'a.yaml'),
      )
      .map(([dirs, file]) => ['clusters/inst', ...dirs, file].join('/'));
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(extraPath, { maxLength: 6 }), async (extras) => {
        const tree = new Map(files);
        const added = extras.filter((p) => !tree.has(p));
        for (const p of added) tree.set(p, 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: mine }\n');
        const plan = await planRemoval(memoryRepoReader(tree), 'inst', 'development');
        for (const p of added) {
          assert.ok(!plan.remove.includes(p), `${p} is not the generator's`);
          assert.ok(plan.kept.includes(p));
        }
        assert.ok([...plan.remove, ...plan.write.keys()].every((p) => p.startsWith('clusters/inst/')));
      }),
      { numRuns: 60 },
    );
  });
});
