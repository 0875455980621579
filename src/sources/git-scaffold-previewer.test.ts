import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeFluxBootstrap } from '../../test/support/flux-bootstrap.js';
import { CliGitRemote } from '../git/cli-git-remote.js';
import { ensureSeededBareRepository } from '../git/seed-repository.js';
import { platformDir } from '../package-paths.js';
import { DRY_RUN_CLONE_FAILURE, GitScaffoldPreviewer } from './git-scaffold-previewer.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ValidationError } from '../errors.js';
import { closedPort } from '../../test/support/net.js';
import { startRecordingServer } from '../../test/support/recording-server.js';
import { capturingLogger } from '../../test/support/runner.js';
import { gitSync as git } from '../../test/support/git.js';
import type { GitRemote } from '../run/ports.js';

describe('GitScaffoldPreviewer on a cluster path that flux bootstrap wrote flux-system/ into', () => {
  let root: string;
  let url: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'previewer-'));
    const bare = join(root, 'gitops.git');
    await ensureSeededBareRepository(bare, platformDir());
    git(root, 'clone', '--quiet', bare, 'work');
    await writeFluxBootstrap(join(root, 'work'), 'eu-prod-1');
    git(join(root, 'work'), 'add', '--all');
    git(join(root, 'work'), 'commit', '--quiet', '-m', 'flux bootstrap');
    git(join(root, 'work'), 'push', '--quiet', 'origin', 'HEAD');
    url = pathToFileURL(bare).href;
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('shows flux-system/ neither removed nor changed, and the entry point listing it', async () => {
    const previewer = new GitScaffoldPreviewer({ git: new CliGitRemote(), generatorVersion: '0.0.0-test' });
    const preview = await previewer.preview({
      cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' },
      repositoryUrl: url,
      branch: 'main',
      reference: 'development',
      secrets: {},
    });
    assert.deepEqual(
      preview.files.filter((f) => f.change === 'removed'),
      [],
    );
    assert.deepEqual(
      preview.files.filter((f) => f.path.includes('/flux-system/')),
      [],
    );
    const entry = preview.files.find((f) => f.path === 'clusters/eu-prod-1/kustomization.yaml');
    assert.equal(entry?.change, 'added');
    assert.match(entry?.content ?? '', /^resources:\n {2}- flux\n {2}- flux-system\n/m);
  });
});

describe('GitScaffoldPreviewer on a repository it cannot clone', () => {
  it('answers a refused port, a silent host, a host answering 500 and one answering 200 to anything with one message, and logs the reason', async () => {
    const logger = capturingLogger();
    // A short network timeout stands in for a firewall that drops packets.
    const previewer = new GitScaffoldPreviewer({ git: new CliGitRemote({ networkTimeoutMs: 1_500 }), generatorVersion: '0.0.0-test', logger });
    const failing = await startRecordingServer(() => ({ status: 500, headers: { 'content-type': 'text/html' }, body: '<h1>admin console</h1>' }));
    const anything = await startRecordingServer(() => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<h1>admin console</h1>' }));
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const urls = [
        `http://127.0.0.1:${await closedPort()}/p.git`,
        `http://127.0.0.1:${(silent.address() as AddressInfo).port}/p.git`,
        `${failing.baseUrl}/p.git`,
        `${anything.baseUrl}/p.git`,
      ];
      const answers: string[] = [];
      for (const repositoryUrl of urls) {
        await assert.rejects(
          previewer.preview({
            cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' },
            repositoryUrl,
            branch: 'main',
            reference: 'development',
            secrets: {},
          }),
          (error: Error) => {
            assert.ok(error instanceof ValidationError, `${repositoryUrl}: ${String(error)}`);
            answers.push(JSON.stringify({ message: error.message, issues: error.issues }));
            return true;
          },
        );
      }
      assert.deepEqual(
        new Set(answers),
        new Set([JSON.stringify({ message: `repository: ${DRY_RUN_CLONE_FAILURE}`, issues: [{ field: 'repository', message: DRY_RUN_CLONE_FAILURE }] })]),
      );
      const logged = logger.lines.filter((l) => l.fields['event'] === 'dry_run_clone_failed');
      assert.deepEqual(
        logged.map((l) => l.fields['repository']),
        urls,
        'each failure is logged with its URL',
      );
    } finally {
      await failing.stop();
      await anything.stop();
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('GitScaffoldPreviewer logging a failed clone with credentials', () => {
  it('keeps the token out of the log, whatever git said', async () => {
    const token = 'plain-token-value-7f3a9c';
    const logger = capturingLogger();
    const git = {
      clone: async () => {
        throw new Error(`fatal: could not read from https://git.example.net/fleet.git (sent ${token}): HTTP 500`);
      },
    } as unknown as GitRemote;
    const previewer = new GitScaffoldPreviewer({ git, generatorVersion: '0.0.0-test', logger });
    await assert.rejects(
      previewer.preview({
        cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' },
        repositoryUrl: 'https://git.example.net/fleet.git',
        branch: 'main',
        reference: 'development',
        secrets: { repositoryCredentials: { username: 'bot', token } },
      }),
      ValidationError,
    );
    const logged = logger.text();
    assert.match(logged, /dry_run_clone_failed/);
    assert.match(logged, /HTTP 500/);
    assert.ok(!logged.includes(token), logged);
  });
});
