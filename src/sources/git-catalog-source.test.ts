import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AuthenticationError, UnavailableError } from '../errors.js';
import { CliGitRemote } from '../git/cli-git-remote.js';
import { ensureSeededBareRepository } from '../git/seed-repository.js';
import { platformDir } from '../package-paths.js';
import type { CloneOptions, GitRemote, GitWorkspace } from '../run/ports.js';
import { GitCatalogSource } from './git-catalog-source.js';
import { closedPort } from '../../test/support/net.js';
import { startRecordingServer } from '../../test/support/recording-server.js';
import { capturingLogger } from '../../test/support/runner.js';

let root: string;
let matrixUrl: string;
let defaultUrl: string;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'catalog-source-'));
  await ensureSeededBareRepository(join(root, 'matrix.git'), platformDir('matrix-example'));
  await ensureSeededBareRepository(join(root, 'default.git'), platformDir('default'));
  matrixUrl = pathToFileURL(join(root, 'matrix.git')).href;
  defaultUrl = pathToFileURL(join(root, 'default.git')).href;
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Counts clones, passing them on to real git. */
class CountingGit implements GitRemote {
  readonly clones: CloneOptions[] = [];
  readonly #git = new CliGitRemote();
  failWith: Error | undefined;
  async clone(options: CloneOptions): Promise<GitWorkspace> {
    this.clones.push(options);
    if (this.failWith) throw this.failWith;
    return this.#git.clone(options);
  }
}

describe('GitCatalogSource', () => {
  it("reads matrix-example's attributes, values and defaults from scaffold.yaml with a top-level-only sparse clone", async () => {
    const git = new CountingGit();
    const source = new GitCatalogSource({ git, workRoot: root });
    const catalog = await source.catalog({ repositoryUrl: matrixUrl, branch: 'main' });
    assert.deepEqual(catalog.attributes, [
      { name: 'role', values: ['tooling', 'env'], default: 'env' },
      { name: 'infra_provider', values: ['proxmox', 'openstack', 'aws', 'gcp', 'digitalocean'], default: 'proxmox' },
      { name: 'dns_provider', values: ['digitalocean', 'cloudflare', 'route53', 'clouddns', 'rfc2136', 'designate'], default: 'digitalocean' },
    ]);
    assert.deepEqual(git.clones[0]?.sparsePaths, []);
    assert.equal(git.clones[0]?.sparseTopLevelExcept, undefined);
  });

  it('answers no attributes for the default platform, which has no layer catalog, and for a branch without scaffold.yaml', async () => {
    const source = new GitCatalogSource({ git: new CliGitRemote(), workRoot: root });
    assert.deepEqual(await source.catalog({ repositoryUrl: defaultUrl, branch: 'main' }), { attributes: [] });
    assert.deepEqual(await source.catalog({ repositoryUrl: matrixUrl, branch: 'no-such-branch' }), { attributes: [] });
  });

  it('reuses an answer for the same repository and branch until it expires, and shares a read in progress', async () => {
    let now = 1_000;
    const git = new CountingGit();
    const source = new GitCatalogSource({ git, workRoot: root, ttlMs: 5_000, now: () => now });
    const [a, b] = await Promise.all([
      source.catalog({ repositoryUrl: matrixUrl, branch: 'main' }),
      source.catalog({ repositoryUrl: matrixUrl, branch: 'main' }),
    ]);
    assert.deepEqual(a, b);
    assert.equal(git.clones.length, 1, 'concurrent callers share one clone');
    await source.catalog({ repositoryUrl: matrixUrl, branch: 'main' });
    assert.equal(git.clones.length, 1, 'cached');
    await source.catalog({ repositoryUrl: defaultUrl, branch: 'main' });
    assert.equal(git.clones.length, 2, 'another repository is read');
    now += 5_001;
    await source.catalog({ repositoryUrl: matrixUrl, branch: 'main' });
    assert.equal(git.clones.length, 3, 'read again after the TTL');
  });

  it('reports a refused or unreadable repository as unavailable, and does not cache the failure', async () => {
    const git = new CountingGit();
    const source = new GitCatalogSource({ git, workRoot: root });
    git.failWith = new AuthenticationError('authentication failed');
    await assert.rejects(
      source.catalog({ repositoryUrl: matrixUrl, branch: 'main' }),
      (error: unknown) => error instanceof UnavailableError && /readable without credentials/.test(error.message),
    );
    git.failWith = undefined;
    assert.equal((await source.catalog({ repositoryUrl: matrixUrl, branch: 'main' })).attributes.length, 3);
    await assert.rejects(
      new GitCatalogSource({ git: new CliGitRemote(), workRoot: root }).catalog({
        repositoryUrl: pathToFileURL(join(root, 'missing.git')).href,
        branch: 'main',
      }),
      (error: unknown) => error instanceof Error && !(error instanceof AuthenticationError),
    );
  });

  it("answers a failed clone in its own words, not git's: a refused port and a host that answers alike; git's answer goes to the log without credentials", async () => {
    const logger = capturingLogger();
    const source = new GitCatalogSource({ git: new CliGitRemote({ logger }), workRoot: root, logger });
    const notGit = await startRecordingServer(() => ({ status: 500, headers: { 'content-type': 'text/html' }, body: '<h1>internal admin console</h1>' }));
    try {
      const messages: string[] = [];
      for (const url of [`http://127.0.0.1:${await closedPort()}/p.git`, `${notGit.baseUrl}/p.git`]) {
        await assert.rejects(source.catalog({ repositoryUrl: url, branch: 'main' }), (error: Error) => {
          messages.push(`${error.constructor.name}: ${error.message}`);
          return true;
        });
      }
      assert.equal(new Set(messages).size, 1, messages.join(' | '));
      assert.doesNotMatch(messages[0]!, /refused|admin console|127\.0\.0\.1|Failed to connect|HTTP/i);
      const logged = logger.lines.filter((l) => l.fields['event'] === 'repository_read_failed');
      assert.ok(logged.length >= 2, 'each failure is logged');
      assert.ok(logged.every((l) => typeof l.fields['repository'] === 'string' && String(l.fields['repository']).startsWith('http://127.0.0.1:')));
    } finally {
      await notGit.stop();
    }
  });
});
