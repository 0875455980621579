/**
 * verify on a public Flux repository it did not generate: a copy of
 * test/fixtures/flux2-kustomize-helm-example (the layout of
 * fluxcd/flux2-kustomize-helm-example: flux bootstrap's flux-system/, Flux
 * Kustomizations in plain files at the cluster path, no kustomization.yaml
 * there, no scaffold.yaml, no flux/ directory, no provenance). Real git, real
 * kubectl kustomize, real CRD schemas; through the CLI and the library. graph
 * too, which builds the cluster path the same way.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyWorkTree } from '../../src/workspace/verify-work-tree.js';
import { assertExit, runCli } from '../support/cli.js';
import { gitSync as git } from '../support/git.js';

const FIXTURE = new URL('../fixtures/flux2-kustomize-helm-example', import.meta.url);

/** What the example does that the generated tree's rules forbid: sensible, and the only findings. */
function expectedFindings(env: string): string[] {
  return [
    `clusters/${env}/apps.yaml: Kustomization flux-system/apps: spec.retryInterval not set: every Kustomization sets prune, interval, retryInterval and timeout`,
    `clusters/${env}/infrastructure.yaml: Kustomization flux-system/infra-configs: neither spec.healthChecks nor spec.wait: true is set: "applied" would not mean "ready" before dependents start`,
  ];
}

describe('verify (and graph) on a repository in the shape of flux2-kustomize-helm-example', () => {
  let tmp: string;
  let repo: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'flux-example-'));
    repo = join(tmp, 'repo');
    await cp(FIXTURE, repo, { recursive: true });
    git(repo, 'init', '--quiet', '--initial-branch=main');
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'flux2-kustomize-helm-example');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('CLI: follows flux-system, infrastructure and apps of staging and reports only what breaks the rules', async () => {
    const result = await runCli(['verify', '--repo', repo, '--cluster', 'staging']);
    assertExit(result, 1);
    assert.deepEqual(result.stdout.trimEnd().split('\n'), expectedFindings('staging'));
    assert.match(result.stderr, /==> 4 Flux Kustomization\(s\) checked; 2 finding\(s\)/);
  });

  it('library: the same findings; every cluster at once finds both environments', async () => {
    const staging = await verifyWorkTree(repo, { cluster: 'staging' });
    assert.deepEqual(staging.findings, expectedFindings('staging'));
    assert.equal(staging.kustomizationsChecked, 4);
    const all = await verifyWorkTree(repo);
    assert.deepEqual(all.findings, [...expectedFindings('production'), ...expectedFindings('staging')]);
    assert.equal(all.kustomizationsChecked, 8);
  });

  it('graph draws the Flux Kustomizations of the cluster path Flux generates an entry point for', async () => {
    const result = await runCli(['graph', '--repo', repo, '--cluster', 'staging', '--format', 'json']);
    assertExit(result, 0);
    const graph = JSON.parse(result.stdout) as { nodes: { name: string }[]; edges: { from: string; to: string }[] };
    assert.deepEqual(graph.nodes.map((n) => n.name).sort(), ['apps', 'flux-system', 'infra-configs', 'infra-controllers']);
    assert.deepEqual(graph.edges.map((e) => `${e.from} -> ${e.to}`).sort(), [
      'flux-system/infra-configs -> flux-system/apps',
      'flux-system/infra-controllers -> flux-system/infra-configs',
    ]);
  });

  it('passes once the two Kustomizations meet the rules, and still catches a broken overlay behind the generated entry point', async () => {
    const apps = join(repo, 'clusters/staging/apps.yaml');
    const infra = join(repo, 'clusters/staging/infrastructure.yaml');
    await writeFile(apps, (await readFile(apps, 'utf8')).replace('  interval: 10m0s\n', '  interval: 10m0s\n  retryInterval: 1m\n'));
    await writeFile(
      infra,
      (await readFile(infra, 'utf8')).replace(
        '  path: ./infrastructure/configs\n  prune: true\n',
        '  path: ./infrastructure/configs\n  prune: true\n  wait: true\n',
      ),
    );
    try {
      const clean = await runCli(['verify', '--repo', repo, '--cluster', 'staging']);
      assertExit(clean, 0);
      assert.match(clean.stderr, /==> 4 Flux Kustomization\(s\) checked; substitution wiring is consistent/);

      const overlay = join(repo, 'apps/staging/kustomization.yaml');
      await writeFile(overlay, (await readFile(overlay, 'utf8')).replace('../base/podinfo', '../base/podinf0'));
      const broken = await verifyWorkTree(repo, { cluster: 'staging' });
      assert.equal(broken.findings.length, 1, broken.findings.join('\n'));
      assert.match(broken.findings[0]!, /^clusters\/staging\/apps\.yaml: Kustomization flux-system\/apps: spec\.path \.\/apps\/staging does not build: /);
    } finally {
      git(repo, 'checkout', '--quiet', '--', '.');
    }
  });
});
