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
import { GitScaffoldPreviewer } from './git-scaffold-previewer.js';
import { gitSync as git } from '../../test/support/git.js';

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
    assert.deepEqual(preview.files.filter((f) => f.change === 'removed'), []);
    assert.deepEqual(preview.files.filter((f) => f.path.includes('/flux-system/')), []);
    const entry = preview.files.find((f) => f.path === 'clusters/eu-prod-1/kustomization.yaml');
    assert.equal(entry?.change, 'added');
    assert.match(entry?.content ?? '', /^resources:\n {2}- flux\n {2}- flux-system\n/m);
  });
});
