/**
 * Removing a cluster from a real Git work tree, built with real `kubectl
 * kustomize`: what stays on the cluster (the stateful namespaces and volumes,
 * protected in the built output), what the sync path builds to afterwards for
 * a flux-bootstrap and a FluxInstance cluster, and `deleteData`'s two commits.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
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
