/**
 * Which forge client a run gets: the repository path and API follow from the
 * repository URL, and a GitHub App is refused up front where it cannot work.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
import { createForgeClient } from './create-delivery.js';

const APP = { kind: 'app', appId: '123456', installationId: '7890123', privateKey: 'PRIVATE KEY' } as const;

describe('createForgeClient', () => {
  it('refuses a GitHub App for a forge that takes none, naming the field and the forge that does', () => {
    for (const forge of ['gitlab', 'gitea'] as const) {
      assert.throws(
        () => createForgeClient({ forge, repositoryUrl: `https://${forge}.example.net/acme/platform-gitops.git`, auth: APP }),
        (error: unknown) =>
          error instanceof ValidationError &&
          error.issues.length === 1 &&
          error.issues[0]?.field === 'delivery.forge' &&
          error.issues[0].message === 'GitHub App credentials only work with forge "github"' &&
          !error.message.includes('PRIVATE KEY'),
        forge,
      );
    }
    assert.equal(createForgeClient({ forge: 'github', repositoryUrl: 'https://github.com/acme/platform-gitops.git', auth: APP }).forge, 'github');
  });

  it('refuses an API it would send the token to in the clear', () => {
    assert.throws(
      () =>
        createForgeClient({
          forge: 'gitea',
          repositoryUrl: 'https://gitea.example.net/acme/platform-gitops.git',
          apiUrl: 'http://gitea.example.net/api/v1',
          auth: { kind: 'token', token: 'gitea-token-0123456789' },
        }),
      (error: unknown) => error instanceof ValidationError && error.issues[0]?.field === 'delivery.api_url' && !error.message.includes('gitea-token'),
    );
  });
});
