/**
 * Fleet lifecycle through `generate-gitops-env` as a user runs it, against a
 * real Git work tree: three scaffolded clusters, the reference environment
 * changed (an overlay patch edited), then `clusters`, `upgrade --dry-run`,
 * `upgrade` and `remove`. What is checked is what a user sees: exit codes,
 * stdout, the files and the commits left behind.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { assertExit, runCli } from '../support/cli.js';
import { crdValidator } from '../support/shared-crds.js';
import { writeFluxBootstrap } from '../support/flux-bootstrap.js';
import { git } from '../support/git.js';

const CLUSTERS = ['eu-1', 'eu-2', 'us-1'] as const;
const PATCH = 'apps/tcr-api-replicas.yaml';
const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false'];

/** Every sealed credential file of the repository, by path, with its bytes. */
async function sealedFiles(repo: string): Promise<Map<string, string>> {
  const paths = (await git(repo, 'ls-files', '--', 'clusters/*/*/sealed/sealed-*.yaml')).split('\n').filter(Boolean);
  return new Map(await Promise.all(paths.map(async (p) => [p, await readFile(join(repo, p), 'utf8')] as const)));
}

/** Commits everything in the work tree. */
async function commit(repo: string, message: string): Promise<void> {
  await git(repo, 'add', '--all');
  await git(repo, ...IDENTITY, 'commit', '--quiet', '-m', message);
}

describe('generate-gitops-env clusters, upgrade and remove', () => {
  let tmp: string;
  let repo: string;
  let renderedFrom: string;
  let current: string;
  let sealedBefore: Map<string, string>;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'fleet-cli-'));
    repo = join(tmp, 'gitops');
    const cert = join(tmp, 'cert.pem');
    await writeFile(cert, createTestCertificate().certificatePem);
    assertExit(await runCli(['init', repo]), 0);
    for (const name of CLUSTERS) {
      assertExit(await runCli(['render', '--repo', repo, '--cluster', name, '--domain', `${name}.example.net`, '--region', 'eu-west-1', '--cert', cert]), 0);
    }
    await commit(repo, 'Scaffold three clusters');
    renderedFrom = await git(repo, 'rev-parse', 'HEAD~1');
    // The platform changes: the reference's carried-over overlay patch is edited.
    const patch = join(repo, 'clusters/development', PATCH);
    await writeFile(patch, (await readFile(patch, 'utf8')).replace('value: 3', 'value: 5'));
    await commit(repo, 'Run five API replicas');
    current = await git(repo, 'rev-parse', 'HEAD');
    sealedBefore = await sealedFiles(repo);
    // Three: rendered without --registry-auth, no registry pull secret is sealed (none is ever invented).
    for (const name of CLUSTERS) assert.equal([...sealedBefore.keys()].filter((p) => p.startsWith(`clusters/${name}/`)).length, 3);
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('clusters lists the three as behind, with the commit each was rendered from', async () => {
    const result = await runCli(['clusters', '--repo', repo, '-o', 'json']);
    assertExit(result, 0);
    const views = JSON.parse(result.stdout) as {
      name: string;
      kind: string;
      status: string;
      up_to_date?: boolean;
      behind?: { rendered_from: string; current: string };
      domain?: string;
    }[];
    assert.deepEqual(
      views.map((v) => [v.name, v.kind, v.status]),
      [['development', 'reference', 'not_applicable'], ...CLUSTERS.map((n) => [n, 'generated', 'behind'])],
    );
    for (const view of views.filter((v) => v.kind === 'generated')) {
      assert.equal(view.up_to_date, false);
      assert.deepEqual(view.behind, { rendered_from: renderedFrom, current });
      assert.equal(view.domain, `${view.name}.example.net`);
    }
    const table = await runCli(['clusters', '--repo', repo]);
    assertExit(table, 0);
    assert.match(table.stdout, /^NAME +KIND +STATUS/);
    assert.match(table.stdout, /^eu-1 +generated +behind +eu-1\.example\.net +eu-west-1/m);
  });

  it('clusters -o resourceset prints the generated clusters as ResourceSet inputs the Flux Operator CRD accepts', async () => {
    const result = await runCli(['clusters', '--repo', repo, '-o', 'resourceset']);
    assertExit(result, 0);
    const { inputs } = parse(result.stdout) as { inputs: Record<string, string>[] };
    // The reference environment is not the fleet.
    assert.deepEqual(
      inputs.map((i) => [i.id, i.name, i.gitops_path, i.domain, i.region, i.status, i.platform_commit]),
      CLUSTERS.map((n) => [n, n, `clusters/${n}`, `${n}.example.net`, 'eu-west-1', 'behind', renderedFrom]),
    );
    // The same inputs, as a ResourceSet's spec would hold them, against the operator's CRD.
    const validator = crdValidator();
    const resourceSet = {
      apiVersion: 'fluxcd.controlplane.io/v1',
      kind: 'ResourceSet',
      metadata: { name: 'fleet', namespace: 'flux-system' },
      spec: { inputs, resourcesTemplate: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: << inputs.name >>\n  namespace: flux-system\n' },
    };
    assert.deepEqual(await validator.validate(resourceSet), { status: 'checked', issues: [] });
    const one = await runCli(['clusters', '--repo', repo, '--cluster', 'eu-1', '-o', 'resourceset']);
    assertExit(one, 2);
    assert.match(one.stderr, /resourceset lists the fleet: leave out --cluster/);
  });

  it('upgrade --dry-run names exactly the three clusters with the edited patch, and writes nothing', async () => {
    const result = await runCli(['upgrade', '--repo', repo, '--dry-run']);
    assertExit(result, 0);
    const heads = result.stdout.split('\n').filter((l) => /^\S/.test(l));
    assert.deepEqual(
      heads,
      CLUSTERS.map((n) => `${n}: would change: 0 added, 2 modified, 0 removed (3 sealed credential(s) kept)`),
    );
    for (const name of CLUSTERS) {
      assert.match(result.stdout, new RegExp(`^  M clusters/${name}/${PATCH}$`, 'm'));
      assert.match(result.stdout, new RegExp(`^  M clusters/${name}/provenance.yaml$`, 'm'));
    }
    assert.match(result.stderr, /==> 3 cluster\(s\): 3 would change, 0 up to date, 0 failed/);
    assert.equal(await git(repo, 'status', '--porcelain'), '');
  });

  it('upgrade writes the change, keeps every sealed credential byte for byte, and a second upgrade writes nothing', async () => {
    const result = await runCli(['upgrade', '--repo', repo], { timeoutMs: 180_000 });
    assertExit(result, 0);
    assert.match(result.stderr, /==> 3 cluster\(s\): 3 upgraded, 0 up to date, 0 failed/);
    const changed = (await git(repo, 'status', '--porcelain', '--untracked-files=all'))
      .split('\n')
      .map((l) => l.trim())
      .sort();
    assert.deepEqual(changed, CLUSTERS.flatMap((n) => [`M clusters/${n}/${PATCH}`, `M clusters/${n}/provenance.yaml`]).sort());
    for (const name of CLUSTERS) {
      assert.match(await readFile(join(repo, 'clusters', name, PATCH), 'utf8'), /value: 5/);
      assert.match(await readFile(join(repo, 'clusters', name, 'provenance.yaml'), 'utf8'), new RegExp(`platformCommit: ${current}`));
    }
    assert.deepEqual(await sealedFiles(repo), sealedBefore);

    await commit(repo, 'Upgrade the fleet');
    const head = await git(repo, 'rev-parse', 'HEAD');
    const again = await runCli(['upgrade', '--repo', repo]);
    assertExit(again, 0);
    assert.equal(again.stdout, CLUSTERS.map((n) => `${n}: up to date\n`).join(''));
    assert.equal(await git(repo, 'status', '--porcelain'), '');
    assert.equal(await git(repo, 'rev-parse', 'HEAD'), head);

    const listed = JSON.parse((await runCli(['clusters', '--repo', repo, '-o', 'json'])).stdout) as { status: string; kind: string }[];
    assert.deepEqual(
      listed.filter((v) => v.kind === 'generated').map((v) => v.status),
      ['up_to_date', 'up_to_date', 'up_to_date'],
    );
  });

  it('upgrade --cluster limits the run and refuses the reference environment', async () => {
    const one = await runCli(['upgrade', '--repo', repo, '--dry-run', '--cluster', 'eu-2']);
    assertExit(one, 0);
    assert.equal(one.stdout, 'eu-2: up to date\n');
    const reference = await runCli(['upgrade', '--repo', repo, '--cluster', 'development']);
    assertExit(reference, 2);
    assert.match(reference.stderr, /development is the reference environment/);
  });

  it('remove deletes only the generated files of one cluster, reports flux-system/, and leaves the others and base/ untouched', async () => {
    await writeFluxBootstrap(repo, 'eu-2');
    await commit(repo, 'flux bootstrap eu-2');
    const tree = async (rev: string, path: string) => git(repo, 'rev-parse', `${rev}:${path}`);
    const untouched = ['base', 'clusters/development', 'clusters/eu-1', 'clusters/us-1', 'scaffold.yaml'];
    const before = await Promise.all(untouched.map((p) => tree('HEAD', p)));

    const result = await runCli(['remove', '--repo', repo, '--cluster', 'eu-2', '--commit']);
    assertExit(result, 0);
    assert.match(result.stdout, /^D clusters\/eu-2\/provenance\.yaml$/m);
    assert.match(result.stderr, /clusters\/eu-2\/flux-system\/ was written by flux bootstrap/);
    assert.match(result.stderr, /Committed [0-9a-f]{12}\./);
    assert.deepEqual(await Promise.all(untouched.map((p) => tree('HEAD', p))), before);
    assert.equal(await git(repo, 'status', '--porcelain'), '');
    const left = (await git(repo, 'ls-files', '--', 'clusters/eu-2')).split('\n');
    // The entry point stays, rewritten to list only flux-system/: the sync path Flux reads still builds.
    assert.deepEqual(left, [
      'clusters/eu-2/flux-system/gotk-components.yaml',
      'clusters/eu-2/flux-system/gotk-sync.yaml',
      'clusters/eu-2/flux-system/kustomization.yaml',
      'clusters/eu-2/kustomization.yaml',
    ]);
    assert.deepEqual((parse(await readFile(join(repo, 'clusters/eu-2/kustomization.yaml'), 'utf8')) as { resources: string[] }).resources, ['flux-system']);
    assert.match(await git(repo, 'log', '-1', '--format=%s'), /^Remove cluster eu-2$/);
    const changedByCommit = (await git(repo, 'show', '--name-only', '--format=', 'HEAD')).split('\n');
    assert.ok(changedByCommit.every((p) => p.startsWith('clusters/eu-2/') && !p.startsWith('clusters/eu-2/flux-system/')));
  });

  it('remove refuses the reference environment and a cluster that does not exist', async () => {
    const reference = await runCli(['remove', '--repo', repo, '--cluster', 'development']);
    assertExit(reference, 2);
    assert.match(reference.stderr, /reference environment/);
    const missing = await runCli(['remove', '--repo', repo, '--cluster', 'nowhere']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /clusters\/nowhere does not exist/);
  });
});
