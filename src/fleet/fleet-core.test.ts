/**
 * The fleet core over the reference platform in memory: registry kinds and
 * freshness, what an upgrade refuses and reports, what a removal owns.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { renderCluster } from '../gitops/render-cluster.js';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import { platformDir } from '../package-paths.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { readClusterRegistry } from './cluster-registry.js';
import { resourceSetInputs, clusterView } from './cluster-view.js';
import { planRemoval } from './plan-removal.js';
import { planUpgrade } from './plan-upgrade.js';

const OLD = 'a'.repeat(40);
const NEW = 'b'.repeat(40);
const random = (size: number) => randomBytes(size);

/** The reference platform plus two clusters rendered from commit OLD, and a hand-made directory. */
async function fleetFiles(): Promise<Map<string, string>> {
  const platform = new FsRepoReader(platformDir());
  const files = new Map<string, string>();
  for (const path of await platform.list('')) files.set(path, (await platform.read(path)) ?? '');
  const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
  for (const name of ['eu-1', 'eu-2']) {
    const result = await renderCluster(memoryRepoReader(files), {
      cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' },
      pass: 'all',
      certificate,
      random,
      generatorVersion: 'test',
      platformCommit: OLD,
    });
    for (const [path, text] of result.tree) files.set(path, text);
  }
  files.set('clusters/by-hand/kustomization.yaml', 'resources: []\n');
  return files;
}

describe('the fleet core', () => {
  let files: Map<string, string>;
  before(async () => {
    files = await fleetFiles();
  });

  it('tells generated clusters from the reference and hand-made directories, and behind from up to date', async () => {
    const reader = memoryRepoReader(files);
    const behind = await readClusterRegistry(reader, { reference: 'development', platformCommit: NEW });
    assert.deepEqual(
      behind.map((c) => [c.name, c.kind, c.freshness, c.renderedFrom]),
      [
        ['by-hand', 'unmanaged', 'not_applicable', undefined],
        ['development', 'reference', 'not_applicable', undefined],
        ['eu-1', 'generated', 'behind', OLD],
        ['eu-2', 'generated', 'behind', OLD],
      ],
    );
    const current = await readClusterRegistry(reader, { reference: 'development', platformCommit: OLD });
    assert.deepEqual(
      current.filter((c) => c.kind === 'generated').map((c) => c.freshness),
      ['up_to_date', 'up_to_date'],
    );
    const outsideGit = await readClusterRegistry(reader, { reference: 'development' });
    assert.deepEqual(
      outsideGit.filter((c) => c.kind === 'generated').map((c) => c.freshness),
      ['unknown', 'unknown'],
    );
    const inputs = resourceSetInputs(behind.map((c) => clusterView(c, NEW))).inputs;
    assert.deepEqual(
      inputs.map((i) => i.id),
      ['eu-1', 'eu-2'],
    );
  });

  it('upgrades nothing that is already current, and reports a cluster it cannot render without touching the others', async () => {
    const same = await planUpgrade(memoryRepoReader(files), { reference: 'development', platformCommit: OLD, generatorVersion: 'test', random });
    assert.deepEqual(
      same.map((u) => [u.name, u.status]),
      [
        ['eu-1', 'up_to_date'],
        ['eu-2', 'up_to_date'],
      ],
    );

    // A sealed credential lost by hand cannot be sealed again without the cluster's certificate.
    const damaged = new Map(files);
    damaged.delete('clusters/eu-2/database/sealed/sealed-postgresql-credentials.yaml');
    const plans = await planUpgrade(memoryRepoReader(damaged), { reference: 'development', platformCommit: NEW, generatorVersion: 'test', random });
    assert.deepEqual(
      plans.map((u) => [u.name, u.status]),
      [
        ['eu-1', 'changed'],
        ['eu-2', 'failed'],
      ],
    );
    assert.deepEqual(plans[0]!.modified, ['clusters/eu-1/provenance.yaml']);
    assert.equal(plans[0]!.credentialsKept, 3, 'postgresql, rabbitmq and tcr-database: no registry pull secret without registry auth');
    assert.match(plans[1]!.message ?? '', /render this cluster with --cert/);
  });

  it('refuses to upgrade the reference, a hand-made directory or a cluster that does not exist', async () => {
    const plan = (clusters: string[]) => planUpgrade(memoryRepoReader(files), { reference: 'development', clusters, generatorVersion: 'test', random });
    await assert.rejects(plan(['development']), ValidationError);
    await assert.rejects(plan(['by-hand']), (e: Error) => e instanceof ValidationError && /no provenance\.yaml/.test(e.message));
    await assert.rejects(plan(['nowhere']), NotFoundError);
  });

  it('plans a named cluster without reading any other cluster (a batch run plans one at a time)', async () => {
    const inner = memoryRepoReader(files);
    const read: string[] = [];
    const counting = { ...inner, read: (path: string) => (read.push(path), inner.read(path)), list: (dir: string) => (read.push(`${dir}/`), inner.list(dir)) };
    const [plan] = await planUpgrade(counting, { reference: 'development', clusters: ['eu-1'], platformCommit: NEW, generatorVersion: 'test', random });
    assert.deepEqual([plan?.name, plan?.status], ['eu-1', 'changed']);
    assert.deepEqual(
      read.filter((path) => path.startsWith('clusters/') && !path.startsWith('clusters/eu-1/') && !path.startsWith('clusters/development/')),
      [],
    );
  });

  it('removes only the files provenance lists, and refuses what it cannot prove it wrote', async () => {
    const withOwn = new Map(files);
    withOwn.set('clusters/eu-1/flux-system/gotk-sync.yaml', 'kind: Kustomization\n');
    withOwn.set('clusters/eu-1/notes.md', 'ours\n');
    const removal = await planRemoval(memoryRepoReader(withOwn), 'eu-1', 'development');
    assert.deepEqual(removal.kept, ['clusters/eu-1/flux-system/gotk-sync.yaml', 'clusters/eu-1/notes.md']);
    assert.equal(removal.fluxBootstrap, true);
    assert.deepEqual(removal.spec, { name: 'eu-1', domain: 'eu-1.example.net', region: 'eu-west-1' }, 'the run is recorded with the identity provenance holds');
    assert.ok(removal.remove.includes('clusters/eu-1/provenance.yaml'));
    assert.ok(removal.remove.every((p) => p.startsWith('clusters/eu-1/')));
    await assert.rejects(planRemoval(memoryRepoReader(files), 'development', 'development'), ValidationError);
    await assert.rejects(planRemoval(memoryRepoReader(files), 'by-hand', 'development'), ConflictError);
    await assert.rejects(planRemoval(memoryRepoReader(files), 'nowhere', 'development'), NotFoundError);
    await assert.rejects(planRemoval(memoryRepoReader(files), '../base', 'development'), ValidationError);
    const older = new Map(files);
    older.set('clusters/eu-2/provenance.yaml', files.get('clusters/eu-2/provenance.yaml')!.replace(/\nfiles:[\s\S]*$/, '\n'));
    await assert.rejects(
      planRemoval(memoryRepoReader(older), 'eu-2', 'development'),
      (e: Error) => e instanceof ConflictError && /upgrade it first|run upgrade/.test(e.message),
    );
  });
});
