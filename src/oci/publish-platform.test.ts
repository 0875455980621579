import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { publishPlatform } from './publish-platform.js';
import { git } from '../../test/support/git.js';

// Nothing listens on port 1: a test that got as far as the network would fail
// with UnavailableError, not the ValidationError these cases expect.
const NOWHERE = 'oci://127.0.0.1:1/platform';

describe('publishPlatform, before anything is pushed', () => {
  let root: string;
  let repo: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'publish-platform-'));
    repo = join(root, 'repo');
    await mkdir(repo);
    await git(repo, 'init', '-q', '-b', 'main');
    await writeFile(join(repo, 'kustomization.yaml'), 'resources: []\n');
    await git(repo, 'add', '.');
    await git(repo, 'commit', '-q', '-m', 'init');
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('refuses a missing directory, a directory outside Git and an unborn HEAD', async () => {
    await assert.rejects(publishPlatform({ repoDir: join(root, 'missing'), reference: NOWHERE }), ValidationError);
    const plain = join(root, 'plain');
    await mkdir(plain);
    await assert.rejects(
      publishPlatform({ repoDir: plain, reference: NOWHERE }),
      (error: unknown) => error instanceof ValidationError && /not a Git repository/.test((error as Error).message),
    );
    const unborn = join(root, 'unborn');
    await mkdir(unborn);
    await git(unborn, 'init', '-q');
    await assert.rejects(
      publishPlatform({ repoDir: unborn, reference: NOWHERE }),
      (error: unknown) => error instanceof ValidationError && /no commit/.test((error as Error).message),
    );
  });

  it('refuses a bad reference or tags', async () => {
    await assert.rejects(publishPlatform({ repoDir: repo, reference: 'platform' }), ValidationError);
    await assert.rejects(publishPlatform({ repoDir: repo, reference: `${NOWHERE}@sha256:${'a'.repeat(64)}` }), ValidationError);
    await assert.rejects(publishPlatform({ repoDir: repo, reference: `${NOWHERE}:v1`, tags: ['v2'] }), ValidationError);
    await assert.rejects(publishPlatform({ repoDir: repo, reference: NOWHERE, tags: [] }), ValidationError);
    await assert.rejects(publishPlatform({ repoDir: repo, reference: NOWHERE, tags: ['ok', 'not/ok'] }), ValidationError);
  });

  it('refuses a tracked symlink, which Flux would refuse to extract', async () => {
    const linked = join(root, 'linked');
    await mkdir(linked);
    await git(linked, 'init', '-q', '-b', 'main');
    await writeFile(join(linked, 'real.yaml'), 'a: 1\n');
    await symlink('real.yaml', join(linked, 'alias.yaml'));
    await git(linked, 'add', '.');
    await git(linked, 'commit', '-q', '-m', 'with a symlink');
    await assert.rejects(
      publishPlatform({ repoDir: linked, reference: NOWHERE }),
      (error: unknown) => error instanceof ValidationError && /alias\.yaml.*symbolic link/.test((error as Error).message),
    );
  });
});
