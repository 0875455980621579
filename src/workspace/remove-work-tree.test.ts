/**
 * Removing a cluster from a real Git work tree, built with real `kubectl
 * kustomize`: what stays on the cluster (the stateful namespaces and volumes,
 * protected in the built output), what the sync path builds to afterwards for
 * a flux-bootstrap and a FluxInstance cluster, and `deleteData`'s two commits.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { renderWorkTree } from '../git/render-work-tree.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { formatObjectRef, objectRefOf, pruneProtected } from '../fleet/prune-forecast.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { platformDir } from '../package-paths.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { fluxPathBuilder } from '../verify/flux-path-build.js';
import { git } from '../../test/support/git.js';
import { writeFluxBootstrap } from '../../test/support/flux-bootstrap.js';
import { removeWorkTree } from './remove-work-tree.js';

const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid'];
const builder = new KubectlKustomize();

/** The objects a repository path builds to, as kustomize-controller builds it. */
async function built(repo: string, path: string): Promise<Record<string, unknown>[]> {
  const result = await fluxPathBuilder({ reader: new FsRepoReader(repo), builder, repoRoot: repo })(path);
  assert.ok(result.ok, result.ok ? '' : result.error);
  return [...result.objects];
}

describe('removeWorkTree', () => {
  let tmp: string;
  let repo: string;
  const certificate = parseSealingCertificate(createTestCertificate().certificatePem);

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'remove-work-tree-'));
    repo = join(tmp, 'gitops');
    await initPlatformRepository(repo, platformDir());
    const render = (name: string, extra = {}) =>
      renderWorkTree(repo, {
        cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' },
        pass: 'all',
        certificate,
        generatorVersion: 'test',
        ...extra,
      });
    for (const name of ['boot', 'wipe']) {
      await writeFluxBootstrap(repo, name);
      await render(name);
    }
    await render('inst', { fluxInstance: true, syncUrl: 'https://github.com/example/fleet.git' });
    await git(repo, 'add', '--all');
    await git(repo, ...IDENTITY, 'commit', '--quiet', '-m', 'three clusters');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('builds every namespace holding volumes, and every object that owns them, protected from prune', async () => {
    const objects = [...(await built(repo, 'clusters/boot/database')), ...(await built(repo, 'clusters/boot/apps'))];
    const protectedRefs = objects.filter(pruneProtected).map((o) => formatObjectRef(objectRefOf(o)!));
    for (const expected of ['Namespace database', 'Namespace tcr', 'StatefulSet database/postgresql', 'StatefulSet database/rabbitmq'])
      assert.ok(protectedRefs.includes(expected), expected);
    // Any object holding a volume claim, and its namespace, must be protected: a future stateful workload too.
    const holdsVolumes = (o: Record<string, unknown>) =>
      o.kind === 'PersistentVolumeClaim' ||
      (o.kind === 'StatefulSet' && JSON.stringify((o.spec as Record<string, unknown>)?.volumeClaimTemplates ?? []) !== '[]');
    for (const object of objects.filter(holdsVolumes)) {
      const ref = objectRefOf(object)!;
      assert.ok(pruneProtected(object), `${formatObjectRef(ref)} holds volumes`);
      assert.ok(protectedRefs.includes(`Namespace ${ref.namespace}`), `namespace ${ref.namespace} holds volumes`);
    }
  });

  it('removes a bootstrap cluster: Flux stays, the layers are pruned, the data stays', async () => {
    const outcome = await removeWorkTree(repo, { cluster: 'boot', commit: true });
    const database = outcome.prune!.find((l) => l.name === 'database')!;
    assert.deepEqual(database.protected.map(formatObjectRef).sort(), [
      'Namespace database',
      'StatefulSet database/postgresql',
      'StatefulSet database/rabbitmq',
    ]);
    assert.ok(database.deleted.map(formatObjectRef).includes('SealedSecret database/postgresql-credentials'));
    assert.deepEqual(outcome.prune!.find((l) => l.name === 'apps')!.protected.map(formatObjectRef), ['Namespace tcr']);
    // What the bootstrap sync applies now: Flux itself, nothing of the layers.
    const sync = (await built(repo, 'clusters/boot')).map((o) => formatObjectRef(objectRefOf(o)!));
    assert.ok(sync.includes('Kustomization flux-system/flux-system'));
    assert.ok(!sync.some((ref) => /Kustomization flux-system\/(database|apps|infrastructure)/.test(ref)));
    assert.match(
      await git(repo, 'log', '-1', '--format=%B'),
      /Layer database deletes \d+ object\(s\) and keeps 3 marked kustomize\.toolkit\.fluxcd\.io\/prune: disabled/,
    );
  });

  it('removes a FluxInstance cluster the same way: the sync path still builds, to the FluxInstance only', async () => {
    const outcome = await removeWorkTree(repo, { cluster: 'inst', commit: true });
    assert.equal(outcome.flux, 'flux-instance');
    const sync = (await built(repo, 'clusters/inst')).map((o) => formatObjectRef(objectRefOf(o)!));
    assert.deepEqual(
      sync,
      ['FluxInstance flux-system/flux', 'HelmRelease flux-system/flux-operator', 'OCIRepository flux-system/flux-operator'],
      'the sync finds its path (no "path not found"), prunes the layers, and keeps Flux',
    );
    assert.deepEqual(outcome.prune!.find((l) => l.name === 'database')!.protected.length, 3);
  });

  it('deletes data only when asked, in two commits: the protection is lifted first, then the cluster removed', async () => {
    await assert.rejects(
      removeWorkTree(repo, { cluster: 'wipe', deleteData: true }),
      (e: Error) => e instanceof ValidationError && /needs --commit/.test(e.message),
    );
    const before = await git(repo, 'rev-parse', 'HEAD');
    const outcome = await removeWorkTree(repo, { cluster: 'wipe', commit: true, deleteData: true });
    assert.deepEqual(await git(repo, 'rev-list', `${before}..HEAD`).then((l) => l.split('\n').length), 2);
    assert.equal(await git(repo, 'rev-parse', 'HEAD~1'), outcome.liftCommit);
    assert.deepEqual([...(outcome.lifted ?? [])].sort(), ['clusters/wipe/apps/kustomization.yaml', 'clusters/wipe/database/kustomization.yaml']);
    // At the lift commit, the layers build with nothing protected: Flux applies that, then the removal prunes it all.
    const lift = join(tmp, 'at-lift');
    await git(repo, 'worktree', 'add', '--quiet', '--detach', lift, outcome.liftCommit!);
    const layers = [...(await built(lift, 'clusters/wipe/database')), ...(await built(lift, 'clusters/wipe/apps'))];
    assert.deepEqual(
      layers.filter(pruneProtected).map((o) => formatObjectRef(objectRefOf(o)!)),
      [],
    );
    assert.ok(
      layers.some((o) => o.kind === 'StatefulSet'),
      'the objects are still applied, only unmarked',
    );
    assert.deepEqual(await git(lift, 'diff', '--name-only', `${before}`, 'HEAD').then((l) => l.split('\n').sort()), [
      'clusters/wipe/apps/kustomization.yaml',
      'clusters/wipe/database/kustomization.yaml',
    ]);
    assert.match(await git(repo, 'log', '-1', '--format=%s'), /^Remove cluster wipe/);
    assert.match(await git(repo, 'log', '-1', '--format=%s', 'HEAD~1'), /^Lift the prune protection of cluster wipe/);
  });
});

/**
 * Deleting data lifts the protection in the overlay each protected layer
 * applies, so that overlay must be one the removal owns and deletes: lifting
 * it in a shared or a neighbour's overlay would unmark every other cluster's
 * data there, and their next prune would delete databases nobody named. And it
 * must know what is protected: a layer that does not build is refused, never skipped.
 */
describe('removeWorkTree refusing to delete data it cannot lift for this cluster alone', () => {
  let tmp: string;
  let repo: string;
  const certificate = parseSealingCertificate(createTestCertificate().certificatePem);

  /** Rewrites the cluster's database layer Kustomization to apply `path` instead of its own overlay. */
  async function pointDatabaseLayerAt(cluster: string, path: string): Promise<void> {
    const own = `./clusters/${cluster}/database`;
    const flux = new FsRepoReader(repo);
    const files = (await flux.list(`clusters/${cluster}/flux`)).filter((f) => f.endsWith('.yaml'));
    const layerFiles = [];
    for (const file of files) if ((await flux.read(file))?.includes(`path: ${own}\n`)) layerFiles.push(file);
    assert.equal(layerFiles.length, 1, `one file applies ${own}: ${files.join(', ')}`);
    const text = await readFile(join(repo, layerFiles[0]!), 'utf8');
    await writeFile(join(repo, layerFiles[0]!), text.replace(`path: ${own}\n`, `path: ${path}\n`));
  }

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'remove-work-tree-refuse-'));
    repo = join(tmp, 'gitops');
    await initPlatformRepository(repo, platformDir());
    for (const name of ['keep', 'neighbour', 'shared', 'broken']) {
      await writeFluxBootstrap(repo, name);
      await renderWorkTree(repo, {
        cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' },
        pass: 'all',
        certificate,
        generatorVersion: 'test',
      });
    }
    // Its database layer applies the overlay of the cluster 'keep'.
    await pointDatabaseLayerAt('neighbour', './clusters/keep/database');
    // Its database layer applies the shared base every cluster's overlay builds on.
    await pointDatabaseLayerAt('shared', './base/database');
    // Its database overlay does not build: what it protects cannot be told.
    const overlay = join(repo, 'clusters/broken/database/kustomization.yaml');
    const text = await readFile(overlay, 'utf8');
    assert.match(text, /^resources:\n/m);
    await writeFile(overlay, text.replace(/^resources:\n/m, 'resources:\n  - no-such-file.yaml\n'));
    await git(repo, 'add', '--all');
    await git(repo, ...IDENTITY, 'commit', '--quiet', '-m', 'four clusters');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  /** removeWorkTree(cluster, deleteData) must fail with `message`, committing and changing nothing. */
  async function refused(cluster: string, message: RegExp): Promise<void> {
    const head = await git(repo, 'rev-parse', 'HEAD');
    await assert.rejects(
      removeWorkTree(repo, { cluster, commit: true, deleteData: true }),
      (e: unknown) => e instanceof ValidationError && e.issues[0]?.field === 'delete-data' && message.test(e.message),
    );
    assert.equal(await git(repo, 'rev-parse', 'HEAD'), head, 'nothing committed');
    assert.equal(await git(repo, 'status', '--porcelain'), '', 'nothing written');
  }

  it("refuses when a protected layer applies a neighbour's overlay: lifting it there would unmark the neighbour's data", async () => {
    const overlay = await readFile(join(repo, 'clusters/keep/database/kustomization.yaml'), 'utf8');
    await refused('neighbour', /layer database applies clusters\/keep\/database, which is not an overlay gitops-scaffolder wrote for neighbour/);
    assert.equal(await readFile(join(repo, 'clusters/keep/database/kustomization.yaml'), 'utf8'), overlay);
    // The neighbour's data is still protected in what its layer builds.
    const objects = await built(repo, 'clusters/keep/database');
    assert.deepEqual(
      objects
        .filter(pruneProtected)
        .map((o) => formatObjectRef(objectRefOf(o)!))
        .sort(),
      ['Namespace database', 'StatefulSet database/postgresql', 'StatefulSet database/rabbitmq'],
    );
  });

  it('refuses when a protected layer applies a shared directory (base/) that no removal owns', async () => {
    const shared = await readFile(join(repo, 'base/database/kustomization.yaml'), 'utf8');
    await refused('shared', /layer database applies base\/database, which is not an overlay gitops-scaffolder wrote for shared/);
    assert.equal(await readFile(join(repo, 'base/database/kustomization.yaml'), 'utf8'), shared);
  });

  it('refuses when a layer does not build: what it protects cannot be told, so it is not skipped', async () => {
    await refused('broken', /cannot tell what is protected in clusters\/broken\/database: the path does not build/);
  });

  it('still removes a cluster whose layers all apply its own overlays', async () => {
    const outcome = await removeWorkTree(repo, { cluster: 'keep', commit: true, deleteData: true });
    assert.deepEqual([...(outcome.lifted ?? [])].sort(), ['clusters/keep/apps/kustomization.yaml', 'clusters/keep/database/kustomization.yaml']);
    assert.match(await git(repo, 'log', '-1', '--format=%s', 'HEAD~1'), /^Lift the prune protection of cluster keep/);
  });
});
