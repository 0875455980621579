/**
 * Broken connections to the remote, as a busy forge or a flaky network makes
 * them: real git against a real git daemon, through a loopback proxy that
 * resets the connections a test chooses. A look at the remote (`ls-remote`,
 * `fetch`) is made again; a push is not, since only the remote knows whether
 * one that broke landed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnavailableError } from '../errors.js';
import type { GitWorkspace } from '../run/ports.js';
import { type GitDaemon, createBareRepository, startGitDaemon } from '../../test/support/git-server.js';
import { type FaultyProxy, startFaultyProxy } from '../../test/support/faulty-proxy.js';
import { git } from '../../test/support/git.js';
import { capturingLogger } from '../../test/support/runner.js';
import { CliGitRemote } from './cli-git-remote.js';
import { type GitResult, isTransientNetworkFailure } from './git-process.js';
import type { QueueAuth } from './queue-auth.js';

const AUTHOR = { name: 'Scaffold Bot', email: 'bot@example.invalid' };
/** The service's key, shared with its runners: pass commits are MAC'd and their pushes fenced, as a runner Job's are. */
const AUTH: QueueAuth = { key: Buffer.from('0123456789abcdef'.repeat(4)), shared: true, attempt: 1 };

describe('broken connections to the remote', () => {
  let scratch: string;
  let served: string;
  let daemon: GitDaemon;
  let proxy: FaultyProxy;
  let counter = 0;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gs-transient-'));
    served = join(scratch, 'served');
    await createBareRepository(join(served, 'fleet.git'), {
      seed: async (work) => {
        await mkdir(join(work, 'clusters/development'), { recursive: true });
        await writeFile(join(work, 'clusters/development/kustomization.yaml'), 'resources: []\n');
      },
    });
    daemon = await startGitDaemon({ baseDir: served });
    proxy = await startFaultyProxy(Number(new URL(daemon.url('fleet.git')).port));
  });

  after(async () => {
    await proxy?.stop();
    await daemon?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  /** A clone through the proxy (nothing cut), with a commit for `cluster` on top: a pass commit when `pass` is given. */
  async function committed(cluster: string, pass?: string): Promise<{ ws: GitWorkspace; lines: ReturnType<typeof capturingLogger>['lines'] }> {
    const logger = capturingLogger();
    const remote = new CliGitRemote({ logger, queueAuth: AUTH, backoff: { baseMs: 5, maxMs: 50 } });
    proxy.cutNext(0);
    const ws = await remote.clone({
      url: `git://127.0.0.1:${proxy.port}/fleet.git`,
      branch: 'main',
      dir: join(scratch, `work-${++counter}`),
      sparsePaths: [`clusters/${cluster}`],
    });
    await mkdir(join(ws.dir, 'clusters', cluster), { recursive: true });
    await writeFile(join(ws.dir, 'clusters', cluster, 'kustomization.yaml'), `# ${cluster}\n`);
    const trailers: Record<string, string> =
      pass === undefined ? {} : { 'Scaffold-Id': `run-${cluster}`, 'Scaffold-Pass': pass, 'Scaffold-Cluster': cluster, 'Scaffold-Reference': 'development' };
    assert.ok(await ws.commit({ paths: [`clusters/${cluster}`], message: `Scaffold ${cluster}`, trailers, author: AUTHOR }));
    return { ws, lines: logger.lines };
  }

  const tip = async () => (await git(join(served, 'fleet.git'), 'rev-parse', 'main')).trim();
  const retries = (lines: ReturnType<typeof capturingLogger>['lines']) =>
    lines.filter((line) => /lost its connection to the remote; trying again/.test(line.msg));

  it('lands a pass commit whose first look at the remote was cut twice, and says so twice', async () => {
    const { ws, lines } = await committed('alpha', 'infrastructure');
    proxy.cutNext(2);
    const result = await ws.push();
    assert.equal(result.sha, await tip());
    const said = retries(lines);
    assert.equal(said.length, 2);
    assert.deepEqual(
      said.map((line) => line.fields['git']),
      ['ls-remote', 'ls-remote'],
    );
    assert.match(String(said[0]?.fields['reason']), /Connection reset|hung up|Could not read/);
  });

  it('gives up on a remote that keeps cutting after three more looks, with the reason, and pushes nothing', async () => {
    const { ws } = await committed('beta', 'infrastructure');
    const before = await tip();
    proxy.cutNext(Infinity);
    const connections = proxy.connections;
    await assert.rejects(ws.push(), (error: unknown) => {
      assert.ok(error instanceof UnavailableError, String(error));
      assert.match(error.message, /git ls-remote failed .*(Connection reset|hung up|Could not read)/s);
      return true;
    });
    assert.equal(proxy.connections - connections, 4);
    proxy.cutNext(0);
    assert.equal(await tip(), before);
  });

  it('does not send a push again whose connection was cut', async () => {
    // No pass trailers: a plain push, the first thing this push sends.
    const { ws } = await committed('gamma');
    const before = await tip();
    proxy.cutNext(1);
    const connections = proxy.connections;
    await assert.rejects(ws.push(), UnavailableError);
    assert.equal(proxy.connections - connections, 1);
    proxy.cutNext(0);
    assert.equal(await tip(), before);
  });

  it('tells a broken connection from a refusal that asking again cannot cure', () => {
    const failed = (stderr: string): GitResult => ({ exitCode: 128, stdout: '', stderr });
    for (const stderr of [
      'fatal: read error: Connection reset by peer\n',
      'fatal: the remote end hung up unexpectedly\n',
      'fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n',
      'error: RPC failed; HTTP 503 curl 22 The requested URL returned error: 503\nfatal: expected flush after ref listing\n',
      'fatal: early EOF\nfatal: index-pack failed\n',
    ])
      assert.equal(isTransientNetworkFailure(failed(stderr)), true, stderr);
    for (const stderr of [
      'git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.\n',
      "fatal: Authentication failed for 'https://example.invalid/fleet.git/'\n",
      'fatal: remote error: access denied or repository not exported: /fleet.git\n',
      "remote: Repository not found.\nfatal: repository 'https://example.invalid/fleet.git/' not found\n",
      "fatal: unable to access 'https://example.invalid/': The requested URL returned error: 403\n",
      "fatal: unable to access 'https://example.invalid/': Could not resolve host: example.invalid\n",
      "fatal: unable to access 'https://example.invalid/': SSL certificate problem: unable to get local issuer certificate\n",
    ])
      assert.equal(isTransientNetworkFailure(failed(stderr)), false, stderr);
  });
});
