/**
 * The dashboard's links from a commit to the repository's web page: the URL
 * shapes of GitHub, GitLab and Gitea/Forgejo, and no link for any other host.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { commitUrl } from '../../ui/src/repository-links.js';

const SHA = '0123456789abcdef0123456789abcdef01234567';

describe('commit links', () => {
  it('links a commit on GitHub, GitLab and Gitea, from https, ssh and scp-like URLs', () => {
    assert.equal(commitUrl('https://github.com/acme/platform.git', SHA), `https://github.com/acme/platform/commit/${SHA}`);
    assert.equal(commitUrl('git@github.com:acme/platform.git', SHA), `https://github.com/acme/platform/commit/${SHA}`);
    assert.equal(commitUrl('ssh://git@gitlab.com/acme/infra/platform.git', SHA), `https://gitlab.com/acme/infra/platform/-/commit/${SHA}`);
    assert.equal(commitUrl('https://gitlab.example.net/acme/platform', SHA), `https://gitlab.example.net/acme/platform/-/commit/${SHA}`);
    assert.equal(commitUrl('https://gitea.example.net/acme/platform.git', SHA), `https://gitea.example.net/acme/platform/commit/${SHA}`);
    assert.equal(commitUrl('https://codeberg.org/acme/platform.git', SHA), `https://codeberg.org/acme/platform/commit/${SHA}`);
  });

  it('links nothing it cannot be sure of', () => {
    for (const url of [
      'file:///srv/git/platform.git',
      'https://git.example.net/acme/platform.git',
      'https://github.com/acme',
      'javascript:alert(1)//github.com/a/b',
      'https://github.com/acme/platform/../../evil',
    ]) {
      assert.equal(commitUrl(url, SHA), undefined, url);
    }
    assert.equal(commitUrl('https://github.com/acme/platform.git', 'not-a-sha'), undefined);
  });
});
