import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AuthenticationError, ConflictError, NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import type { FluxGraph } from '../graph/flux-graph.js';
import type { CloneOptions, GitRemote, GitWorkspace } from '../run/ports.js';
import type { RunRecord } from '../run/run-record.js';
import { GitClusterGraphSource } from './git-cluster-graph-source.js';
import { gitSync } from '../../test/support/git.js';

const SHA = 'a'.repeat(40);

const GRAPH: FluxGraph = {
  nodes: [
    {
      name: 'infrastructure',
      namespace: 'flux-system',
      path: './clusters/eu-prod-1/infrastructure',
      dependsOn: [],
      healthChecks: [{ kind: 'HelmRelease', name: 'ingress-nginx', namespace: 'ingress-nginx' }],
      wait: false,
    },
    {
      name: 'apps',
      namespace: 'flux-system',
      path: './clusters/eu-prod-1/apps',
      dependsOn: [{ name: 'infrastructure', namespace: 'flux-system' }],
      healthChecks: [],
      wait: true,
    },
  ],
};

function runOf(patch: Partial<RunRecord> = {}): RunRecord {
  const now = new Date();
  return {
    id: 'run-1',
    action: 'scaffold',
    cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' },
    repositoryUrl: 'file:///srv/gitops.git',
    branch: 'main',
    reference: 'development',
    status: 'succeeded',
    step: 7,
    message: '',
    job: 'scaffold-run-1',
    gitopsPath: 'clusters/eu-prod-1',
    commits: [{ pass: 'all', sha: SHA }],
    attempt: 1,
    createdAt: now,
    updatedAt: now,
    createdBy: 'test',
    sealing: 'certificate',
    ...patch,
  };
}

/** Clones that make `clusters/<cluster>/` (unless told not to) and whose HEAD is the run's commit. */
class FakeGit implements GitRemote {
  readonly clones: CloneOptions[] = [];
  failWith: Error | undefined;
  withCluster = true;
  async clone(options: CloneOptions): Promise<GitWorkspace> {
    this.clones.push(options);
    if (this.failWith) throw this.failWith;
    // A real repository: the source reads the commit's objects, not the files.
    const tree = this.withCluster ? 'clusters/eu-prod-1' : 'base';
    await mkdir(join(options.dir, tree), { recursive: true });
    await writeFile(join(options.dir, tree, 'kustomization.yaml'), 'resources: []\n');
    gitSync(options.dir, 'init', '--quiet');
    gitSync(options.dir, 'add', '--all');
    gitSync(options.dir, 'commit', '--quiet', '-m', 'tree');
    return {
      dir: options.dir,
      head: async () => SHA,
      lastCommitTouching: async () => SHA,
      commit: async () => undefined,
      push: async () => ({ sha: SHA, attempts: 1 }),
      pushBranch: async () => ({ sha: SHA, attempts: 1 }),
      syncTo: async () => SHA,
      render: async () => {
        throw new Error('the graph source never renders');
      },
      reader: () => {
        throw new Error("the graph source reads the commit's objects, not the work tree");
      },
      passCommit: async () => undefined,
      dispose: async () => undefined,
    };
  }
}

describe('GitClusterGraphSource', () => {
  it('draws the run’s cluster from a sparse clone of base/ and clusters/<name>, as SVG and JSON', async () => {
    const git = new FakeGit();
    const reads: string[] = [];
    const source = new GitClusterGraphSource({ git, readGraph: async (_dir, cluster) => (reads.push(cluster), GRAPH) });
    const [svg, json] = await Promise.all([source.graph(runOf(), 'svg'), source.graph(runOf(), 'json')]);
    assert.match(svg, /<svg\b/);
    assert.match(svg, /id="node-flux-system-apps"/);
    assert.deepEqual(
      JSON.parse(json).nodes.map((n: { id: string }) => n.id),
      ['flux-system/apps', 'flux-system/infrastructure'],
    );
    // Both formats came from one clone, and later requests for the same commit from none.
    assert.equal(git.clones.length, 1);
    assert.deepEqual(git.clones[0]?.sparsePaths, ['base', 'clusters/eu-prod-1']);
    assert.equal(git.clones[0]?.url, 'file:///srv/gitops.git');
    await source.graph(runOf(), 'svg');
    assert.equal(git.clones.length, 1);
    assert.deepEqual(reads, ['eu-prod-1']);
  });

  it('reads again for another commit, and evicts the least recently used', async () => {
    const git = new FakeGit();
    const source = new GitClusterGraphSource({ git, readGraph: async () => GRAPH, cacheSize: 1 });
    const other = runOf({ id: 'run-2', commits: [{ pass: 'all', sha: SHA }], repositoryUrl: 'file:///srv/other.git' });
    await source.graph(runOf(), 'json');
    await source.graph(other, 'json');
    await source.graph(runOf(), 'json');
    assert.equal(git.clones.length, 3);
  });

  it('does not cache a run without a commit (its tree is the branch head)', async () => {
    const git = new FakeGit();
    const source = new GitClusterGraphSource({ git, readGraph: async () => GRAPH });
    await source.graph(runOf({ commits: [] }), 'json');
    await source.graph(runOf({ commits: [] }), 'json');
    assert.equal(git.clones.length, 2);
  });

  it('says what is missing or wrong', async () => {
    const git = new FakeGit();
    const source = new GitClusterGraphSource({ git, readGraph: async () => GRAPH });
    await assert.rejects(
      source.graph(runOf({ gitopsPath: undefined }), 'svg'),
      (error) => error instanceof NotFoundError && /no gitops_path yet/.test(error.message),
    );
    assert.equal(git.clones.length, 0);

    git.withCluster = false;
    await assert.rejects(
      source.graph(runOf({ commits: [] }), 'svg'),
      (error) => error instanceof NotFoundError && /clusters\/eu-prod-1 is not in the repository/.test(error.message),
    );

    git.withCluster = true;
    const broken = new GitClusterGraphSource({ git, readGraph: async () => Promise.reject(new ValidationError('kustomize: accumulating resources')) });
    await assert.rejects(
      broken.graph(runOf(), 'svg'),
      (error) => error instanceof ConflictError && /does not build: kustomize: accumulating resources/.test(error.message),
    );
    // A failure is not cached.
    await assert.rejects(broken.graph(runOf(), 'svg'), ConflictError);
    assert.equal(git.clones.length, 3);
  });

  it('reports a repository it cannot read as unavailable, never as the caller’s authentication failing', async () => {
    const git = new FakeGit();
    git.failWith = new AuthenticationError('the remote refused the credentials');
    const source = new GitClusterGraphSource({ git, readGraph: async () => GRAPH });
    await assert.rejects(source.graph(runOf(), 'svg'), (error) => error instanceof UnavailableError && /credentials are not kept/.test(error.message));
    git.failWith = new Error('spawn failed');
    await assert.rejects(source.graph(runOf(), 'svg'), UnavailableError);
  });
});
